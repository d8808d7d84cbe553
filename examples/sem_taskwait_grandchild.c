/* sem_taskwait_grandchild.c: taskwait waits for children, not for grandchildren.
 *
 *   usage: sem_taskwait_grandchild [a=20000] [L=40000] [L2=50000]
 *
 * Inside `parallel num_threads(2)` + `single`, the parent creates a child task; the child spins
 * a units, creates a grandchild task (L units) and ends. The parent's taskwait returns when the
 * CHILD ends, while the grandchild is still running; the parent's continuation (L2 units) then
 * runs beside the grandchild until the barrier at the end of the single.
 *
 * Analytic profile (units):
 *   work           W = a + L + L2
 *   span           S = a + max(L, L2)     (NOT a + L + L2: the continuation and the grandchild
 *                                          are logically parallel)
 *   parallelism    W / S
 *
 *   defaults / tests (a=20000, L=40000, L2=50000): W = 110000, S = 70000, W/S = 1.5714
 *   (a tool that made taskwait wait for the grandchild would find S = W, W/S = 1.0; one that
 *   ignored the taskwait would find S = max(a + L, L2) = 60000, W/S = 1.8333)
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long a = tl_arg(argc, argv, 1, 20000, "a");
  const unsigned long len = tl_arg(argc, argv, 2, 40000, "L");
  const unsigned long len2 = tl_arg(argc, argv, 3, 50000, "L2");
  int grandchild_done = 0, done_at_taskwait = -1;
  long sum = 0;

#pragma omp parallel num_threads(2)  // site: tg-parallel
#pragma omp single
  {
#pragma omp task shared(grandchild_done, sum)  // site: tg-child
    {
      tl_work(a);
#pragma omp task shared(grandchild_done, sum)  // site: tg-grandchild
      {
        tl_work(len);
#pragma omp atomic
        sum += 2;
#pragma omp atomic write
        grandchild_done = 1;
      }
#pragma omp atomic
      sum += 1;
    }
#pragma omp taskwait
#pragma omp atomic read
    done_at_taskwait = grandchild_done;
    tl_work(len2);
#pragma omp atomic
    sum += 4;
  }

  fprintf(stderr, "sem_taskwait_grandchild: grandchild %s when the taskwait returned\n",
          done_at_taskwait ? "had finished" : "was still running");
  printf("sum %ld (expected 7)\n", sum);
  tl_print_analytic(a + len + len2, a + (len > len2 ? len : len2));
  return sum == 7 ? 0 : 1;
}
