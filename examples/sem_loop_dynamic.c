/* sem_loop_dynamic.c: a schedule(dynamic,1) loop of n equal iterations.
 *
 *   usage: sem_loop_dynamic [n=32] [w=20000]
 *
 * `parallel for schedule(dynamic, 1)` over n iterations of w units each, with the default team
 * (OMP_NUM_THREADS). Every chunk is one iteration and any thread may run any chunk, so the chunks
 * are logically independent: the parallelism is n whatever the number of threads (up to the
 * small serial strands before and after the loop). With ONE thread libomp runs the region
 * serialized and reports no chunk at all: tasklens then takes the thread's share as the loop's n
 * iterations seen together, and the parallelism is n too.
 *
 * Analytic profile (units):
 *   work           W = n w
 *   span           S = w
 *   parallelism    W / S = n
 *
 *   defaults / tests (n=32, w=20000): W = 640000, S = 20000, W/S = 32
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 32, "n");
  const unsigned long w = tl_arg(argc, argv, 2, 20000, "w");
  long sum = 0;

#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sum)  // site: dyn-loop
  for (unsigned long i = 0; i < n; i++) {
    tl_work(w);
    sum += (long)(i * i);
  }

  printf("dynamic loop of %lu iterations: sum %ld\n", n, sum);
  tl_print_analytic(n * w, n ? w : 0);
  return 0;
}
