/* uts.c: unbalanced tree search (in the style of UTS): counts the nodes of an implicit random
 * tree, a task per node.
 *
 *   usage: suite_uts_<variant> [size=6] [shape=0] [cutoff=4] [group=1]
 *
 * A node is a 64-bit hash; its i-th child's hash is mix(hash, i), and its number of children
 * comes from its own hash, so the tree is fixed by the root's seed and the shape:
 *   shape 0, geometric (UTS T1-like): a node at depth < size has a geometrically distributed
 *     number of children, mean 4; the nodes at depth `size` are leaves;
 *   shape 1, binomial (UTS T3-like): the root has `size` children; every other node has 4
 *     children with probability 0.24, none otherwise (expected subtree 1 / (1 - 0.96) = 25 nodes,
 *     with a heavy tail: very unbalanced).
 * Every node but the root is a task, created by its parent, which then waits and sums its
 * children's counts (written into an array of its own: no shared counter). tasks = nodes - 1:
 * 6991 for size 6 (tests), 1757193 for size 10 (the benches), shape 0; shape 1: 21136 for
 * size 1000, 2113464 for size 80000. The count is checked against a sequential traversal
 * (cheap: a hash per node).
 *
 * group (the manual cut-off variant only): the tasks at the cut-off depth (those a node at depth
 * cutoff - 1 creates) are made `group` children at a time, each task counting its children one
 * after the other (what `tasklens advise` proposes when that depth's tasks are still tiny: the
 * binomial root's children, mostly leaves).
 */
#include <math.h>

#include "suite.h"

#define GEO_MEAN 4.0
#define BIN_M 4
#define BIN_Q 0.24
#define MAX_CHILDREN 256

static int g_shape, g_size, g_group = 1;

static uint64_t child_hash(uint64_t h, int i) { return suite_mix(h ^ suite_mix((uint64_t)i + 1)); }

static int num_children(uint64_t h, int depth) {
  const double u = (double)(h >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
  if (g_shape == 0) {
    if (depth >= g_size) return 0;
    /* Geometric on {0, 1, ...} with mean GEO_MEAN: P(k) = p (1 - p)^k, p = 1 / (1 + mean). */
    const double p = 1.0 / (1.0 + GEO_MEAN);
    int n = (int)floor(log(1.0 - u) / log(1.0 - p));
    return n < MAX_CHILDREN ? n : MAX_CHILDREN;
  }
  if (depth == 0) return g_size;
  return u < BIN_Q ? BIN_M : 0;
}

static unsigned long long count_seq(uint64_t h, int depth) {
  const int n = num_children(h, depth);
  unsigned long long c = 1;
  for (int i = 0; i < n; i++) c += count_seq(child_hash(h, i), depth + 1);
  return c;
}

static unsigned long long count_par(uint64_t h, int depth);

/* The children of a node, as tasks (the root's may be many: created in a loop too). */
static unsigned long long children_par(uint64_t h, int depth, int n) {
  if (SUITE_SERIAL(depth)) {
    unsigned long long c = 0;
    for (int i = 0; i < n; i++) c += count_seq(child_hash(h, i), depth + 1);
    return c;
  }
  unsigned long long small[16];
  unsigned long long* below = n <= 16 ? small : malloc((size_t)n * sizeof *below);
  if (!below) {
    perror("malloc");
    exit(2);
  }
  if (g_group > 1 && SUITE_SERIAL(depth + 1)) {
    for (int i = 0; i < n; i += g_group) {
#pragma omp task firstprivate(i) shared(below) SUITE_UNTIED
      for (int k = i; k < i + g_group && k < n; k++)
        below[k] = count_par(child_hash(h, k), depth + 1);
    }
  } else {
    for (int i = 0; i < n; i++) {
#pragma omp task firstprivate(i) shared(below) SUITE_UNTIED SUITE_CUTOFF(depth)
      below[i] = count_par(child_hash(h, i), depth + 1);
    }
  }
#pragma omp taskwait
  unsigned long long c = 0;
  for (int i = 0; i < n; i++) c += below[i];
  if (below != small) free(below);
  return c;
}

static unsigned long long count_par(uint64_t h, int depth) {
  const int n = num_children(h, depth);
  return 1 + (n ? children_par(h, depth, n) : 0);
}

/* Tasks the parallel traversal creates: the nodes whose parent is above the manual cut-off. */
static unsigned long long tasks_of(uint64_t h, int depth) {
  if (SUITE_SERIAL(depth)) return 0;
  const int n = num_children(h, depth);
  unsigned long long t = 0;
  if (g_group > 1 && SUITE_SERIAL(depth + 1))
    return (unsigned long long)((n + g_group - 1) / g_group);
  for (int i = 0; i < n; i++) t += 1 + tasks_of(child_hash(h, i), depth + 1);
  return t;
}

int main(int argc, char** argv) {
  g_size = (int)suite_arg(argc, argv, 1, 6, 0, 1000000, "size");
  g_shape = (int)suite_arg(argc, argv, 2, 0, 0, 1, "shape");
  suite_cutoff_arg(argc, argv, 3, 4);
  g_group = (int)suite_arg(argc, argv, 4, 1, 1, 1000000, "group");
  if (g_shape == 0 && g_size > 40) {
    fprintf(stderr, "%s: the geometric tree's depth must be at most 40\n", argv[0]);
    return 2;
  }
  const uint64_t root = suite_mix(19);
  unsigned long long nodes = 0;
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  nodes = count_par(root, 0);
  const double t1 = omp_get_wtime();
  char what[48], res[32];
  snprintf(what, sizeof what, "uts size=%d shape=%s", g_size, g_shape ? "binomial" : "geometric");
  snprintf(res, sizeof res, "%llu", nodes);
  suite_report(what, res, tasks_of(root, 0), t1 - t0, nodes == count_seq(root, 0));
  return 0;
}
