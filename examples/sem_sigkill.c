/* sem_sigkill.c: the program kills itself with SIGKILL after some task work.
 *
 *   usage: sem_sigkill [n=64] [w=10000]
 *
 * A `single` inside `parallel num_threads(2)` creates n tasks of w units (about 0.5 s of work
 * with the defaults), waits for them, prints a line and calls raise(SIGKILL) from inside the
 * parallel region. Nothing in the process can run after that (no atexit, no destructor): the
 * trace is whatever the recorder had written, and its report must say "complete": false.
 *
 * Analytic profile of the work done before the kill (units), when all of it was recorded:
 *   work           W = n w
 *   span           S = w
 *   parallelism    W / S = n
 *
 *   defaults / tests (n=64, w=10000): W = 640000, S = 10000, W/S = 64
 */
#include <omp.h>
#include <signal.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 64, "n");
  const unsigned long w = tl_arg(argc, argv, 2, 10000, "w");
  int done = 0;

#pragma omp parallel num_threads(2)  // site: kill-parallel
#pragma omp single
  {
    for (unsigned long i = 0; i < n; i++) {
#pragma omp task shared(done)  // site: kill-task
      {
        tl_work(w);
        __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
      }
    }
#pragma omp taskwait
    printf("%d tasks done, raising SIGKILL\n", done);
    fflush(stdout);
    raise(SIGKILL);
  }
  printf("not reached\n");
  return 0;
}
