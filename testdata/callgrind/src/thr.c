#include <pthread.h>
#include <stdio.h>
static double spin(int n) { double s = 0; for (int i = 0; i < n; i++) s += i % 7; return s; }
static void *worker(void *arg) { long n = (long)arg; double s = spin((int)n); return (void *)(long)s; }
int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void *)(20000 * (i + 1)));
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  printf("%f\n", spin(5000));
  return 0;
}
