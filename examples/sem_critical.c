/* sem_critical.c: waiting for a critical section is not work.
 *
 *   usage: sem_critical [n=20] [c=5000] [o=1000]
 *
 * In `parallel num_threads(2)`, each thread n times spins o units outside and then c units
 * inside `#pragma omp critical`. With c > o the two threads contend for the critical section:
 * each one waits about as long as the other holds it. The wait is not work.
 *
 * Analytic profile (units):
 *   work           W = 2 n (c + o)
 *   span           S = n (c + o)      (each implicit task is a chain; critical sections of
 *                                      different threads exclude each other but are not ordered)
 *   parallelism    W / S = 2
 *
 *   defaults / tests (n=20, c=5000, o=1000): W = 240000, S = 120000, W/S = 2
 *   (a tool that counted the waiting as work would find W near 2 n (2c + o) = 440000)
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 20, "n");
  const unsigned long c = tl_arg(argc, argv, 2, 5000, "c");
  const unsigned long o = tl_arg(argc, argv, 3, 1000, "o");
  long inside = 0;
  int team = 0;

#pragma omp parallel num_threads(2)  // site: critical-parallel
  {
#pragma omp single nowait
    team = omp_get_num_threads();
    for (unsigned long i = 0; i < n; i++) {
      tl_work(o);
#pragma omp critical  // site: critical-section
      {
        tl_work(c);
        inside++;
      }
    }
  }

  if (team != 2) {
    fprintf(stderr, "sem_critical: expected a team of 2 threads, got %d\n", team);
    return 1;
  }
  printf("critical sections entered: %ld\n", inside);
  tl_print_analytic(2 * n * (c + o), n * (c + o));
  return inside == (long)(2 * n) ? 0 : 1;
}
