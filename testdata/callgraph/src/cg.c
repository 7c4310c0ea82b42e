/* A threaded, recursive C program for the call-graph tests (testdata/callgraph/README.md):
 * two threads sort arrays with a recursive quicksort (sortwork), a mutually recursive
 * pair (even/odd) and printf of doubles from several callers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void swap(int *a, int *b) { int t = *a; *a = *b; *b = t; }

static void qsort_rec(int *v, int lo, int hi) {
  if (lo >= hi) return;
  int p = v[(lo + hi) / 2], i = lo, j = hi;
  while (i <= j) {
    while (v[i] < p) i++;
    while (v[j] > p) j--;
    if (i <= j) swap(&v[i++], &v[j--]);
  }
  qsort_rec(v, lo, j);
  qsort_rec(v, i, hi);
}

static int is_odd(int n);
static int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }
static int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }

static void report(const char *what, double x) { printf("%s %.3f\n", what, x); }

static void *sortwork(void *arg) {
  long n = (long)arg;
  int *v = malloc(n * sizeof *v);
  unsigned s = (unsigned)n;
  for (long i = 0; i < n; i++) { s = s * 1103515245u + 12345u; v[i] = (int)(s >> 8) % 100000; }
  qsort_rec(v, 0, (int)n - 1);
  double sum = 0;
  for (long i = 0; i < n; i += 97) sum += v[i];
  report("sorted", sum / n);
  free(v);
  return 0;
}

int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, sortwork, (void *)(3000 * (i + 1)));
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  int e = 0;
  for (int i = 0; i < 50; i++) e += is_even(i);
  report("even", e);
  printf("%.2f %.2f\n", 1.5, 2.25);
  return 0;
}
