#include <stdio.h>
#include <stdlib.h>
static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int even(int n);
static int odd(int n) { return n == 0 ? 0 : even(n - 1); }
static int even(int n) { return n == 0 ? 1 : odd(n - 1); }
static double work(int n) { double s = 0; for (int i = 0; i < n; i++) s += i * 0.5; return s; }
static double leaf(int k) { double *a = malloc(sizeof(double) * k); for (int i = 0; i < k; i++) a[i] = i; double s = 0; for (int i = 0; i < k; i++) s += a[i]; free(a); return s; }
static double mid(int k) { return leaf(k) + work(k); }
int main(void) {
  double t = 0;
  for (int i = 0; i < 20; i++) t += mid(200 + i);
  t += fib(15) + even(101) + work(1000);
  printf("%f\n", t);
  return 0;
}
