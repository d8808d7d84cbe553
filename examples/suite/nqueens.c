/* nqueens.c: the number of ways to place n queens on an n x n board (BOTS nqueens).
 *
 *   usage: suite_nqueens_<variant> [n=8] [cutoff=3]
 *
 * As in BOTS, a call for row j of a valid partial board creates ONE TASK PER CANDIDATE SQUARE
 * (i, j), i = 0..n-1: the task copies the board, places the queen and, if no queen attacks it,
 * recurses on row j + 1 (a complete board counts one solution). Most tasks find their square
 * attacked and return at once: many tiny tasks. Every task writes its count of solutions and of
 * tasks below it into its parent's arrays (no shared counter), summed after the taskwait.
 * tasks = n * (valid partial boards with fewer than n queens): 15720 for n = 8 (tests),
 * 1806706 for n = 11 (the benches). The result is checked against the known counts (OEIS
 * A000170).
 */
#include "suite.h"

/* Is the queen of row j (b[j]) attacked by one of rows 0..j-1? */
static int attacked(int j, const signed char* b) {
  for (int i = 0; i < j; i++) {
    const int d = b[i] - b[j];
    if (d == 0 || d == j - i || d == i - j) return 1;
  }
  return 0;
}

typedef struct {
  long solutions;
  unsigned long long tasks;
} count_t;

static count_t nqueens_seq(int n, int j, signed char* b) {
  count_t c = {0, 0};
  if (j == n) {
    c.solutions = 1;
    return c;
  }
  for (int i = 0; i < n; i++) {
    b[j] = (signed char)i;
    if (!attacked(j, b)) c.solutions += nqueens_seq(n, j + 1, b).solutions;
  }
  return c;
}

/* b holds rows 0..j-1, all valid. */
static count_t nqueens(int n, int j, const signed char* b, int depth) {
  count_t c = {0, 0};
  if (j == n) {
    c.solutions = 1;
    return c;
  }
  if (SUITE_SERIAL(depth)) {
    signed char board[32];
    memcpy(board, b, (size_t)j);
    return nqueens_seq(n, j, board);
  }
  long sols[32];
  unsigned long long tasks[32];
  for (int i = 0; i < n; i++) {
#pragma omp task shared(sols, tasks) firstprivate(i) SUITE_UNTIED SUITE_CUTOFF(depth)
    {
      signed char board[32];
      memcpy(board, b, (size_t)j);
      board[j] = (signed char)i;
      count_t below = {0, 0};
      if (!attacked(j, board)) below = nqueens(n, j + 1, board, depth + 1);
      sols[i] = below.solutions;
      tasks[i] = below.tasks;
    }
  }
#pragma omp taskwait
  for (int i = 0; i < n; i++) {
    c.solutions += sols[i];
    c.tasks += tasks[i] + 1;
  }
  return c;
}

int main(int argc, char** argv) {
  static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712,
                               365596, 2279184, 14772512};
  const int n = (int)suite_arg(argc, argv, 1, 8, 1, 16, "n");
  suite_cutoff_arg(argc, argv, 2, 3);
  count_t c = {0, 0};
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  {
    signed char board[32] = {0};
    c = nqueens(n, 0, board, 0);
  }
  const double t1 = omp_get_wtime();
  char what[32], res[32];
  snprintf(what, sizeof what, "nqueens n=%d", n);
  snprintf(res, sizeof res, "%ld", c.solutions);
  suite_report(what, res, c.tasks, t1 - t0, c.solutions == known[n]);
  return 0;
}
