/* sem_untied.c: untied tasks that yield in the middle of their work (and so may migrate).
 *
 *   usage: sem_untied [n=16] [parts=4] [a=10000]
 *
 * A `single` inside `parallel num_threads(2)` creates n untied tasks. Each task spins a units,
 * then `#pragma omp taskyield`, `parts` times in all. With clang's libomp an untied task is
 * split at its scheduling points, and its next part may be resumed by another thread; the
 * program counts (on stderr) how many tasks resumed on another thread. Under libgomp, and under
 * libomp for gcc-built binaries, taskyield does nothing (the tasks behave as tied tasks). Either
 * way, the logical DAG is the one of tied tasks.
 *
 * Analytic profile (units):
 *   work           W = n parts a
 *   span           S = parts a
 *   parallelism    W / S = n
 *
 *   defaults / tests (n=16, parts=4, a=10000): W = 640000, S = 40000, W/S = 16
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 16, "n");
  const unsigned long parts = tl_arg(argc, argv, 2, 4, "parts");
  const unsigned long a = tl_arg(argc, argv, 3, 10000, "a");
  int migrated = 0, finished = 0;

#pragma omp parallel num_threads(2)  // site: untied-parallel
#pragma omp single
  for (unsigned long t = 0; t < n; t++) {
#pragma omp task untied shared(migrated, finished)  // site: untied-task
    {
      int moved = 0;
      for (unsigned long i = 0; i < parts; i++) {
        const int before = omp_get_thread_num();
        tl_work(a);
        if (i + 1 < parts) {
#pragma omp taskyield
        }
        if (omp_get_thread_num() != before) moved = 1;
      }
      __atomic_add_fetch(&migrated, moved, __ATOMIC_SEQ_CST);
      __atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
    }
  }

  fprintf(stderr, "sem_untied: %d of %lu tasks resumed on another thread after a taskyield\n",
          migrated, n);
  printf("%d untied tasks finished\n", finished);
  tl_print_analytic(n * parts * a, parts * a);
  return finished == (int)n ? 0 : 1;
}
