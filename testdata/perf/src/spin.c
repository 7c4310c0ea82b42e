#include <stdio.h>
static double inner(int n) { volatile double s = 0; for (int i = 0; i < n; i++) s += (i % 13) * 0.5; return s; }
static double outer(int k) { double s = 0; for (int i = 0; i < k; i++) s += inner(200000); return s; }
static double other(int k) { return inner(100000 * k); }
int main(void) { double t = 0; for (int r = 0; r < 40; r++) t += outer(3) + other(2); printf("%f\n", t); return 0; }
