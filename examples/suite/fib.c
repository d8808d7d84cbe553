/* fib.c: fib(n) with a task per call and a taskwait (BOTS fib).
 *
 *   usage: suite_fib_<variant> [n=20] [cutoff=10]
 *
 * Every call but the leaves creates a task for fib(n-1) and one for fib(n-2), then waits: a
 * task does almost nothing but task management, the worst case for a recorder. Without a
 * cut-off, fib(n) makes 2 F(n+1) - 2 tasks: 21890 for n = 20 (tests), 2692536 for n = 30 (the
 * overhead bench), 1664078 for n = 29. With a cut-off the count is computed from the same
 * recursion (fib_tasks). The result is checked against the iterative Fibonacci number.
 */
#include "suite.h"

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

static long fib(int n, int depth) {
  if (n < 2) return n;
  if (SUITE_SERIAL(depth)) return fib_seq(n);
  long x, y;
#pragma omp task shared(x) SUITE_UNTIED SUITE_CUTOFF(depth)
  x = fib(n - 1, depth + 1);
#pragma omp task shared(y) SUITE_UNTIED SUITE_CUTOFF(depth)
  y = fib(n - 2, depth + 1);
#pragma omp taskwait
  return x + y;
}

/* The task constructs fib(n) encounters from depth d: memoized on (n, d), since the call tree
 * has billions of nodes for the larger n. */
static unsigned long long memo[64][64];
static unsigned long long fib_tasks(int n, int d) {
  if (d == 0 && suite_cutoff > n) {
    /* No call reaches the cut-off (none given): t(k) = 2 + t(k-1) + t(k-2), counted without the
     * memo, whose first touch (8 pages, 40-60 us of page faults) was a large and varying part of
     * this serial epilogue, and so of the program's span. */
    unsigned long long a = 0, b = 0; /* t(0), t(1) */
    for (int k = 2; k <= n; k++) {
      unsigned long long t = 2 + b + a;
      a = b;
      b = t;
    }
    return n < 2 ? 0 : b;
  }
  if (n < 2 || n > 63 || SUITE_SERIAL(d)) return 0; /* main keeps n <= 50 */
  if (d >= 63) return 2 + fib_tasks(n - 1, d) + fib_tasks(n - 2, d); /* past any cut-off */
  if (memo[n][d]) return memo[n][d];
  return memo[n][d] = 2 + fib_tasks(n - 1, d + 1) + fib_tasks(n - 2, d + 1);
}

int main(int argc, char** argv) {
  const int n = (int)suite_arg(argc, argv, 1, 20, 0, 50, "n");
  suite_cutoff_arg(argc, argv, 2, 10);
  long result = 0;
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  result = fib(n, 0);
  const double t1 = omp_get_wtime();

  long a = 0, b = 1; /* F(0), F(1) */
  for (int i = 0; i < n; i++) {
    long t = a + b;
    a = b;
    b = t;
  }
  char what[32], res[32];
  snprintf(what, sizeof what, "fib n=%d", n);
  snprintf(res, sizeof res, "%ld", result);
  suite_report(what, res, fib_tasks(n, 0), t1 - t0, result == a);
  return 0;
}
