/* sem_barrier.c: an explicit barrier between two phases of unequal per-thread work.
 *
 *   usage: sem_barrier [x0=40000] [x1=10000] [y0=10000] [y1=30000]
 *
 * In `parallel num_threads(2)`, thread 0 spins x0 units and thread 1 x1 units (phase 1), then
 * both meet at `#pragma omp barrier`, then thread 0 spins y0 units and thread 1 y1 (phase 2).
 *
 * Analytic profile (units):
 *   work           W = x0 + x1 + y0 + y1
 *   span           S = max(x0, x1) + max(y0, y1)
 *   parallelism    W / S
 *
 *   defaults / tests: W = 90000, S = 70000, W/S = 1.2857
 *   (without the barrier's ordering: S = max(x0 + y0, x1 + y1) = 50000, W/S = 1.8)
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long x[2] = {tl_arg(argc, argv, 1, 40000, "x0"),
                              tl_arg(argc, argv, 2, 10000, "x1")};
  const unsigned long y[2] = {tl_arg(argc, argv, 3, 10000, "y0"),
                              tl_arg(argc, argv, 4, 30000, "y1")};
  int team = 0;
  long phase1_done_seen = 0;
  int done[2] = {0, 0};  // accessed with __atomic builtins

#pragma omp parallel num_threads(2)  // site: barrier-parallel
  {
    const int id = omp_get_thread_num();
#pragma omp single nowait
    team = omp_get_num_threads();
    tl_work(x[id & 1]);
    __atomic_store_n(&done[id & 1], 1, __ATOMIC_SEQ_CST);
#pragma omp barrier  // site: barrier-barrier
    const int other = __atomic_load_n(&done[(id & 1) ^ 1], __ATOMIC_SEQ_CST);
#pragma omp atomic
    phase1_done_seen += other;
    tl_work(y[id & 1]);
  }

  if (team != 2) {
    fprintf(stderr, "sem_barrier: expected a team of 2 threads, got %d\n", team);
    return 1;
  }
  printf("both threads saw the other's phase 1 done: %s\n", phase1_done_seen == 2 ? "yes" : "NO");
  const unsigned long mx = x[0] > x[1] ? x[0] : x[1], my = y[0] > y[1] ? y[0] : y[1];
  tl_print_analytic(x[0] + x[1] + y[0] + y[1], mx + my);
  return phase1_done_seen == 2 ? 0 : 1;
}
