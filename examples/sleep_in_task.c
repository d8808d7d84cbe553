/* sleep_in_task.c: tasks that compute and then block (sleep), the way a task waits for I/O.
 *
 *   usage: sleep_in_task [k=4] [w=20000] [ms=50]
 *
 * k tasks, created from a `single`, each spin w units (tl_work) and then sleep ms milliseconds
 * (nanosleep: the thread blocks, off the CPU). A blocked thread does no work: tasklens takes the
 * sleep out of the strand by default (blocked_removed), and keeps it with --blocked-as-work.
 *
 * Analytic profile (units), the sleep not being work:
 *   work           W = k w
 *   span           S = w
 *   parallelism    W / S = k
 *   blocked        k ms milliseconds in all (inside the tasks)
 *
 *   defaults / tests (k=4, w=20000, ms=50): W = 80000, S = 20000, W/S = 4, 200 ms blocked
 */
#include <omp.h>
#include <stdio.h>
#include <time.h>

#include "work.h"

static void sleep_ms(unsigned long ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int main(int argc, char** argv) {
  const unsigned long k = tl_arg(argc, argv, 1, 4, "k");
  const unsigned long w = tl_arg(argc, argv, 2, 20000, "w");
  const unsigned long ms = tl_arg(argc, argv, 3, 50, "ms");
  unsigned long done = 0;
#pragma omp parallel  // site: sleep-parallel
#pragma omp single
  {
    for (unsigned long i = 0; i < k; i++) {
#pragma omp task shared(done)  // site: sleep-task
      {
        tl_work(w);
        sleep_ms(ms);
#pragma omp atomic
        done++;
      }
    }
  }
  printf("sleep_in_task: %lu tasks done\n", done);
  return done == k ? 0 : 1;
}
