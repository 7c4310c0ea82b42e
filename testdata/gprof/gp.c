/* A small program for gprof (testdata/gprof/record.sh): a leaf called from two
   callers, a self-recursive function and two mutually recursive ones (a gprof
   cycle). */
#include <stdio.h>
static volatile double sink;
double leaf(int n) { double s = 0; for (int i = 0; i < n; i++) s += i * 0.5; return s; }
double mid(int n) { double s = 0; for (int k = 0; k < 4; k++) s += leaf(n); return s; }
long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int is_odd(int n);
int is_even(int n) { if (n == 0) return 1; leaf(2000); return is_odd(n - 1); }
int is_odd(int n) { if (n == 0) return 0; leaf(2000); return is_even(n - 1); }
double other(int n) { return leaf(n * 3); }
int main(void) {
  for (int r = 0; r < 200; r++) { sink += mid(200000); sink += other(100000); }
  for (int r = 0; r < 100; r++) sink += is_even(300);
  sink += fib(27);
  printf("%f\n", sink);
  return 0;
}
