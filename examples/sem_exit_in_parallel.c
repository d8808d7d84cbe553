/* sem_exit_in_parallel.c: exit(3) from inside a parallel region.
 *
 *   usage: sem_exit_in_parallel [n=8] [w=20000]
 *
 * A `single` inside `parallel num_threads(2)` creates n tasks of w units, waits for them
 * (taskwait), prints a line, and calls exit(3) while the other thread waits at the single's
 * barrier: the parallel region never ends. The exit status 3 must pass through `tasklens
 * record`, and the trace must still be reportable.
 *
 * Analytic profile of what runs before exit (units):
 *   work           W = n w
 *   span           S = w
 *   parallelism    W / S = n
 *
 *   defaults / tests (n=8, w=20000): W = 160000, S = 20000, W/S = 8
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 8, "n");
  const unsigned long w = tl_arg(argc, argv, 2, 20000, "w");
  int done = 0;

#pragma omp parallel num_threads(2)  // site: exit-parallel
#pragma omp single
  {
    for (unsigned long i = 0; i < n; i++) {
#pragma omp task shared(done)  // site: exit-task
      {
        tl_work(w);
        __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
      }
    }
#pragma omp taskwait
    printf("%d tasks done, calling exit(3) inside the parallel region\n", done);
    tl_print_analytic(n * w, n ? w : 0);
    fflush(stdout);
    exit(3);
  }
  printf("not reached\n");
  return 0;
}
