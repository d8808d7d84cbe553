/* fib.c: fib(n) with a task per call.
 *
 *   usage: fib [n=12] [g=2000]
 *
 * Every call of fib spins g units (tl_work(g)) and then, for n >= 2, creates one task for
 * fib(n-1) and one for fib(n-2) and waits for both (taskwait). main calls fib(n) once, from a
 * `single` inside a `parallel` region. With g = 0 it is a pure fine-grained task benchmark.
 *
 * Analytic profile (units of tl_work; F(1) = F(2) = 1 are the Fibonacci numbers):
 *   calls          C(n) = 2 F(n+1) - 1
 *   tasks          C(n) - 1 (every call but the root), F(n+1) - 1 at each of the two task sites
 *   work           W = g C(n)
 *   span           S = g max(n, 1)        (the chain fib(n) -> fib(n-1) -> ... -> fib(1))
 *   parallelism    W / S = (2 F(n+1) - 1) / max(n, 1)
 *
 *   defaults / tests (n=12, g=2000): C = 465, tasks = 464 (232 per site),
 *                                    W = 930000, S = 24000, W/S = 38.75
 *   n=15, g=300:                     C = 1973, W = 591900, S = 4500, W/S = 131.53
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

static unsigned long g_units;

static long fib(int n) {
  tl_work(g_units);
  if (n < 2) return n;
  long x, y;
#pragma omp task shared(x)  // site: fib-task-1
  x = fib(n - 1);
#pragma omp task shared(y)  // site: fib-task-2
  y = fib(n - 2);
#pragma omp taskwait
  return x + y;
}

int main(int argc, char** argv) {
  const int n = (int)tl_arg(argc, argv, 1, 12, "n");
  g_units = tl_arg(argc, argv, 2, 2000, "g");
  if (n > 40) {
    fprintf(stderr, "%s: n must be at most 40\n", argv[0]);
    return 2;
  }
  long result = 0;
#pragma omp parallel  // site: fib-parallel
#pragma omp single
  result = fib(n);

  /* C(n) = 2 F(n+1) - 1 */
  unsigned long long a = 0, b = 1; /* F(0), F(1) */
  for (int i = 0; i < n + 1; i++) {
    unsigned long long t = a + b;
    a = b;
    b = t;
  }
  const unsigned long long calls = 2 * a - 1; /* a = F(n+1) */
  printf("fib(%d) = %ld (%llu calls, %llu tasks)\n", n, result, calls, calls - 1);
  tl_print_analytic(g_units * calls, g_units * (unsigned long long)(n > 1 ? n : 1));
  return 0;
}
