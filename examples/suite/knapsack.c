/* knapsack.c: 0/1 knapsack by branch and bound (in the style of BOTS knapsack).
 *
 *   usage: suite_knapsack_<variant> [n=24] [cutoff=8]
 *
 * n items with deterministic pseudo-random weights and values, sorted by value density; the
 * capacity is half their total weight. A call decides item i: one task takes it (if it fits),
 * one task leaves it, then a taskwait keeps the better value. A branch is pruned when even the
 * fractional (LP) bound of what is left cannot beat a lower bound found before the search (the
 * greedy solution). BOTS's knapsack prunes with the best value found so far, shared by all
 * tasks, which makes the tree, and so the task count, depend on the schedule; this one prunes
 * with a bound fixed in advance and so makes the same tasks on every run: 22905 for n = 24
 * (tests), 1132572 for n = 36 (a bench size; the count jumps with n), counted through the
 * recursion.
 * Checked against dynamic programming over the capacity.
 */
#include "suite.h"

typedef struct {
  int w, v;
} item_t;

static item_t* g_items;
static int g_n;
static long g_bound;  /* the greedy solution's value: no branch below it is needed */

/* The fractional bound of items i.. with capacity c left. */
static double lp_bound(int i, long c) {
  double b = 0;
  for (; i < g_n && c > 0; i++) {
    if (g_items[i].w <= c) {
      c -= g_items[i].w;
      b += g_items[i].v;
    } else {
      b += (double)g_items[i].v * (double)c / g_items[i].w;
      c = 0;
    }
  }
  return b;
}

typedef struct {
  long best;
  unsigned long long tasks;
} res_t;

/* The best value reachable from item i with capacity c, v already taken; -1 when pruned. */
static res_t knap(int i, long c, long v, int depth) {
  res_t r = {v, 0};
  if (i == g_n) return r;
  if ((double)v + lp_bound(i, c) < (double)g_bound) {
    r.best = -1;
    return r;
  }
  if (SUITE_SERIAL(depth)) {
    res_t without = knap(i + 1, c, v, depth + 1);
    res_t with = {-1, 0};
    if (g_items[i].w <= c) with = knap(i + 1, c - g_items[i].w, v + g_items[i].v, depth + 1);
    r.best = with.best > without.best ? with.best : without.best;
    return r;
  }
  res_t with = {-1, 0}, without = {-1, 0};
  if (g_items[i].w <= c) {
#pragma omp task shared(with) SUITE_UNTIED SUITE_CUTOFF(depth)
    with = knap(i + 1, c - g_items[i].w, v + g_items[i].v, depth + 1);
    r.tasks++;
  }
#pragma omp task shared(without) SUITE_UNTIED SUITE_CUTOFF(depth)
  without = knap(i + 1, c, v, depth + 1);
#pragma omp taskwait
  r.tasks += 1 + with.tasks + without.tasks;
  r.best = with.best > without.best ? with.best : without.best;
  return r;
}

static int by_density(const void* a, const void* b) {
  const item_t *x = a, *y = b;
  long l = (long)x->v * y->w, r = (long)y->v * x->w; /* x before y if v_x/w_x > v_y/w_y */
  return l > r ? -1 : l < r ? 1 : (x->w - y->w);
}

int main(int argc, char** argv) {
  g_n = (int)suite_arg(argc, argv, 1, 24, 1, 60, "n");
  suite_cutoff_arg(argc, argv, 2, 8);
  g_items = malloc((size_t)g_n * sizeof *g_items);
  if (!g_items) { perror("malloc"); return 2; }
  uint64_t rng = 7;
  long total = 0;
  for (int i = 0; i < g_n; i++) {
    /* Weights and values close to each other: weakly correlated instances prune badly. */
    g_items[i].w = 20 + (int)(suite_rand(&rng) * 80);
    g_items[i].v = g_items[i].w + (int)(suite_rand(&rng) * 20) - 10;
    total += g_items[i].w;
  }
  qsort(g_items, (size_t)g_n, sizeof *g_items, by_density);
  const long cap = total / 2;
  long c = cap;
  g_bound = 0;
  for (int i = 0; i < g_n; i++)
    if (g_items[i].w <= c) { c -= g_items[i].w; g_bound += g_items[i].v; }

  res_t r = {0, 0};
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  r = knap(0, cap, 0, 0);
  const double t1 = omp_get_wtime();

  long* dp = calloc((size_t)cap + 1, sizeof *dp);
  if (!dp) { perror("calloc"); return 2; }
  for (int i = 0; i < g_n; i++)
    for (long w = cap; w >= g_items[i].w; w--)
      if (dp[w - g_items[i].w] + g_items[i].v > dp[w]) dp[w] = dp[w - g_items[i].w] + g_items[i].v;
  char what[48], res[32];
  snprintf(what, sizeof what, "knapsack n=%d capacity=%ld", g_n, cap);
  snprintf(res, sizeof res, "%ld", r.best);
  suite_report(what, res, r.tasks, t1 - t0, r.best == dp[cap]);
  free(dp);
  free(g_items);
  return 0;
}
