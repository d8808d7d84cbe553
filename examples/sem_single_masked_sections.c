/* sem_single_masked_sections.c: single, masked and sections with unequal sections.
 *
 *   usage: sem_single_masked_sections [s1=30000] [m=20000] [x1=20000] [x2=10000] [x3=50000]
 *                                     [r=20000]
 *
 * In `parallel num_threads(2)`:
 *   single { s1 units }                              (implicit barrier at its end)
 *   masked { m units }  then  #pragma omp barrier     (masked has no barrier of its own)
 *   sections { x1 | x2 | x3 units }                  (implicit barrier at its end)
 *   r units on each thread
 * The three sections are independent: their span is the longest one. How sections are given to
 * threads is up to the implementation: clang's libomp code hands them out statically (with 2
 * threads: sections 1 and 2 to one thread, 3 to the other), libgomp and gcc code under libomp
 * dynamically. The longest section is the LAST one, so that the span is the same either way
 * (max(x1 + x2, x3) = max(x1, x2, x3) = x3 with the defaults).
 *
 * Analytic profile (units):
 *   work           W = s1 + m + x1 + x2 + x3 + 2r
 *   span           S = s1 + m + max(x1 + x2, x3) + r   (= s1 + m + max(x1, x2, x3) + r when
 *                                                        x3 >= x1 + x2, as with the defaults)
 *   parallelism    W / S
 *
 *   defaults / tests: W = 170000, S = 120000, W/S = 1.4167
 * Site work (units): single s1 = 30000, masked m = 20000, sections x1+x2+x3 = 80000.
 * gcc: under libomp, the single and sections of gcc code are attributed to the line of the
 * enclosing parallel (the runtime's GOMP entry points do not pass their own return address), and
 * the sections show as a loop.
 * gcc inlines masked (omp_get_thread_num() == 0, no runtime call): no masked site for gcc builds,
 * its work then belongs to the parallel region; the work and span do not change.
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long s1 = tl_arg(argc, argv, 1, 30000, "s1");
  const unsigned long m = tl_arg(argc, argv, 2, 20000, "m");
  const unsigned long x[3] = {tl_arg(argc, argv, 3, 20000, "x1"),
                              tl_arg(argc, argv, 4, 10000, "x2"),
                              tl_arg(argc, argv, 5, 50000, "x3")};
  const unsigned long r = tl_arg(argc, argv, 6, 20000, "r");
  int single_runs = 0, masked_runs = 0, sections_done = 0, team = 0;

#pragma omp parallel num_threads(2)  // site: smsec-parallel
  {
#pragma omp single  // site: smsec-single
    {
      team = omp_get_num_threads();
      tl_work(s1);
      single_runs++;
    }
#pragma omp masked  // site: smsec-masked
    {
      tl_work(m);
      masked_runs++;
    }
#pragma omp barrier
#pragma omp sections  // site: smsec-sections
    {
#pragma omp section
      {
        tl_work(x[0]);
        __atomic_add_fetch(&sections_done, 1, __ATOMIC_SEQ_CST);
      }
#pragma omp section
      {
        tl_work(x[1]);
        __atomic_add_fetch(&sections_done, 1, __ATOMIC_SEQ_CST);
      }
#pragma omp section
      {
        tl_work(x[2]);
        __atomic_add_fetch(&sections_done, 1, __ATOMIC_SEQ_CST);
      }
    }
    tl_work(r);
  }

  const int ok = team == 2 && single_runs == 1 && masked_runs == 1 && sections_done == 3;
  printf("team %d: single ran %d time, masked %d time, %d sections: %s\n", team, single_runs,
         masked_runs, sections_done, ok ? "ok" : "WRONG");
  unsigned long mx = x[0] + x[1];  // see the note on the distribution of sections above
  if (x[2] > mx) mx = x[2];
  tl_print_analytic(s1 + m + x[0] + x[1] + x[2] + 2 * r, s1 + m + mx + r);
  return ok ? 0 : 1;
}
