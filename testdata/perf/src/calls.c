/* A call graph with a shared callee, two paths to it and recursion, for perf report parity. */
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) void work(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i * i; }
__attribute__((noinline)) void leaf_a(void) { work(3000000); }
__attribute__((noinline)) void leaf_b(void) { work(1000000); for (unsigned long i = 0; i < 2000000; i++) sink ^= i; }
__attribute__((noinline)) void recurse(int d) { if (d > 0) { work(400000); recurse(d - 1); } else leaf_a(); }
__attribute__((noinline)) void left(void) { leaf_a(); leaf_b(); }
__attribute__((noinline)) void right(void) { leaf_b(); recurse(3); }
int main(void) { for (int k = 0; k < 40; k++) { left(); right(); } printf("%lu\n", sink); return 0; }
