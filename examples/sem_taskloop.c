/* sem_taskloop.c: a taskloop with grainsize(1) over n equal iterations.
 *
 *   usage: sem_taskloop [n=16] [w=40000]
 *
 * A `single` inside `parallel num_threads(2)` runs `taskloop grainsize(1)` over n iterations of
 * w units each: one task per iteration, all in the taskloop's implicit taskgroup.
 *
 * Analytic profile (units):
 *   tasks          n
 *   work           W = n w
 *   span           S = w
 *   parallelism    W / S = n
 *
 *   defaults / tests (n=16, w=40000): W = 640000, S = 40000, W/S = 16
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 16, "n");
  const unsigned long w = tl_arg(argc, argv, 2, 40000, "w");
  long sum = 0;

#pragma omp parallel num_threads(2)  // site: taskloop-parallel
#pragma omp single
  {
#pragma omp taskloop grainsize(1) shared(sum)  // site: taskloop-taskloop
    for (unsigned long i = 0; i < n; i++) {
      tl_work(w);
      __atomic_add_fetch(&sum, (long)i, __ATOMIC_SEQ_CST);
    }
  }

  printf("taskloop of %lu iterations: sum %ld (expected %lu)\n", n, sum, n * (n - 1) / 2);
  tl_print_analytic(n * w, n ? w : 0);
  return sum == (long)(n * (n - 1) / 2) ? 0 : 1;
}
