/* sem_nested.c: nested parallel regions.
 *
 *   usage: sem_nested [a0=40000] [a1=20000] [b=100000] [c=20000]
 *
 * omp_set_max_active_levels(2) (like OMP_MAX_ACTIVE_LEVELS=2) allows two active levels. An outer
 * `parallel num_threads(2)`: outer thread t spins a_t units, then opens an inner
 * `parallel num_threads(2)` in which each of the 2 threads spins b units, then spins c units
 * after the inner region. Up to 4 threads run at once; the program checks (stdout) that the
 * inner teams really have 2 threads.
 *
 * Analytic profile (units):
 *   work           W = a0 + a1 + 4b + 2c
 *   span           S = max(a0, a1) + b + c
 *   parallelism    W / S
 *
 *   defaults / tests: W = 500000, S = 160000, W/S = 3.125
 *   (with nesting disabled the inner teams have 1 thread: W = 300000, S = 160000, W/S = 1.875)
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long a[2] = {tl_arg(argc, argv, 1, 40000, "a0"),
                              tl_arg(argc, argv, 2, 20000, "a1")};
  const unsigned long b = tl_arg(argc, argv, 3, 100000, "b");
  const unsigned long c = tl_arg(argc, argv, 4, 20000, "c");
  int outer_team = 0, inner_team[2] = {0, 0}, levels[2] = {0, 0};

  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)  // site: nested-outer
  {
    const int t = omp_get_thread_num() & 1;
    if (omp_get_thread_num() == 0) outer_team = omp_get_num_threads();
    tl_work(a[t]);
#pragma omp parallel num_threads(2)  // site: nested-inner
    {
      if (omp_get_thread_num() == 0) {
        inner_team[t] = omp_get_num_threads();
        levels[t] = omp_get_active_level();
      }
      tl_work(b);
    }
    tl_work(c);
  }

  printf("outer team %d threads, inner teams %d and %d threads, active levels %d and %d\n",
         outer_team, inner_team[0], inner_team[1], levels[0], levels[1]);
  tl_print_analytic(a[0] + a[1] + 4 * b + 2 * c, (a[0] > a[1] ? a[0] : a[1]) + b + c);
  return outer_team == 2 && inner_team[0] == 2 && inner_team[1] == 2 ? 0 : 1;
}
