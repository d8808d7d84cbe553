/* treesum.c: recursive sum over a binary tree (Figure 1 of the TaskProf paper).
 *
 *   usage: treesum [d=14] [B=1023] [c=40]
 *
 * The tree is complete, of depth d (N = 2^d - 1 nodes, stored in heap order: the children of node
 * i are 2i+1 and 2i+2). Visiting a node costs c units. compute_tree_sum(node): if the node's
 * subtree has at most B nodes it is summed serially (serial_tree_sum, which spins c units per
 * node at once at the end); otherwise the node is visited (c units) and a task is created for
 * each of the left and right subtrees, then taskwait.
 *
 * Analytic profile (units). Let h_B = floor(log2(B + 1)): the tallest subtree summed serially
 * has height h_B (2^h_B - 1 <= B nodes). If d <= h_B the whole sum is serial (W = S). Otherwise:
 *   tasks          2 (2^(d - h_B) - 1)         (2^(d - h_B) - 1 per task site)
 *   work           W = c (2^d - 1)
 *   span           S = c ((d - h_B) + 2^h_B - 1)   (d - h_B parallel nodes, then one serial
 *                                                   subtree of 2^h_B - 1 nodes)
 *   parallelism    W / S
 *
 *   defaults / tests (d=14, B=1023, c=40): h_B = 10, tasks = 30 (15 per site),
 *                                         W = 655320, S = 41080, W/S = 15.9523
 *   d=16, B=1023, c=10:                   W = 655350, S = 10290, W/S = 63.6880
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

static unsigned long g_nodes, g_base, g_cost;

static long value_of(unsigned long i) { return (long)((i * 2654435761ul >> 7) % 1000); }

/* Sums the subtree rooted at i and counts its nodes into *visited. */
static long serial_sum(unsigned long i, unsigned long* visited) {
  if (i >= g_nodes) return 0;
  ++*visited;
  return value_of(i) + serial_sum(2 * i + 1, visited) + serial_sum(2 * i + 2, visited);
}

/* c units per node, spun at once after the serial sum (one spin per strand). */
static long serial_tree_sum(unsigned long i) {
  unsigned long visited = 0;
  const long sum = serial_sum(i, &visited);
  tl_work(g_cost * visited);
  return sum;
}

/* `size` is the number of nodes in the subtree rooted at i. */
static long compute_tree_sum(unsigned long i, unsigned long size) {
  if (size <= g_base) return serial_tree_sum(i);
  tl_work(g_cost);
  long left, right;
#pragma omp task shared(left)  // site: treesum-task-1
  left = compute_tree_sum(2 * i + 1, size / 2);
#pragma omp task shared(right)  // site: treesum-task-2
  right = compute_tree_sum(2 * i + 2, size / 2);
#pragma omp taskwait
  return left + right + value_of(i);
}

int main(int argc, char** argv) {
  const unsigned long d = tl_arg(argc, argv, 1, 14, "d");
  g_base = tl_arg(argc, argv, 2, 1023, "B");
  g_cost = tl_arg(argc, argv, 3, 40, "c");
  if (d < 1 || d > 30) {
    fprintf(stderr, "%s: d must be between 1 and 30\n", argv[0]);
    return 2;
  }
  g_nodes = (1ul << d) - 1;

  long sum = 0;
#pragma omp parallel  // site: treesum-parallel
#pragma omp single
  sum = compute_tree_sum(0, g_nodes);

  long expected = 0;
  for (unsigned long i = 0; i < g_nodes; i++) expected += value_of(i);
  printf("tree of depth %lu (%lu nodes): sum %ld (%s)\n", d, g_nodes, sum,
         sum == expected ? "ok" : "WRONG");

  unsigned long hb = 0;
  while (((1ul << (hb + 1)) - 1) <= g_base && hb < 62) hb++;
  const unsigned long long work = g_cost * (unsigned long long)g_nodes;
  const unsigned long long span = d <= hb ? work : g_cost * ((d - hb) + ((1ull << hb) - 1));
  tl_print_analytic(work, span);
  return sum == expected ? 0 : 1;
}
