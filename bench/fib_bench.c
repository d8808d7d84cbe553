/* fib_bench.c: the fine-grained recording benchmark (see docs/benchmarks.md).
 *
 *   usage: fib_bench [n=30]
 *
 * fib(n) with a task per call and no cutoff: every call but the root is an explicit task that
 * does almost nothing (two task creations and a taskwait, or a return for n < 2), so the run is
 * dominated by task management and, when recorded, by the recorder's per-event cost. fib(n) makes
 * 2 F(n+1) - 2 tasks: 832038 for n = 27, 2692536 for n = 30, 7049154 for n = 32.
 *
 * Prints the result, the number of tasks and the time of the parallel region on stdout.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static long fib(int n) {
  if (n < 2) return n;
  long x, y;
#pragma omp task shared(x)
  x = fib(n - 1);
#pragma omp task shared(y)
  y = fib(n - 2);
#pragma omp taskwait
  return x + y;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 30;
  if (n < 0 || n > 40) {
    fprintf(stderr, "%s: n must be in [0, 40]\n", argv[0]);
    return 2;
  }
  long result = 0;
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  result = fib(n);
  const double t1 = omp_get_wtime();

  unsigned long long a = 0, b = 1; /* F(0), F(1) */
  for (int i = 0; i < n + 1; i++) {
    const unsigned long long t = a + b;
    a = b;
    b = t;
  }
  /* a = F(n+1); calls = 2 F(n+1) - 1, tasks = calls - 1 (all but the root) */
  printf("fib(%d) = %ld tasks=%llu threads=%d region=%.6f s\n", n, result, 2 * a - 2,
         omp_get_max_threads(), t1 - t0);
  return 0;
}
