/* sem_taskgroup.c: a taskgroup waits for the tasks created inside it AND their descendants.
 *
 *   usage: sem_taskgroup [a=20000] [L=40000] [b=30000] [L2=50000]
 *
 * Same shape as sem_taskwait_grandchild, with a taskgroup instead of a taskwait: inside
 * `parallel num_threads(2)` + `single`, the parent opens a taskgroup, creates a child task (a
 * units, then creates a grandchild task of L units and ends), spins b units itself, and closes the
 * taskgroup, which waits for the child AND the grandchild. Then the continuation spins L2 units.
 *
 * Analytic profile (units):
 *   work           W = a + L + b + L2
 *   span           S = max(b, a + L) + L2
 *   parallelism    W / S
 *
 *   defaults / tests (a=20000, L=40000, b=30000, L2=50000): W = 140000, S = 110000, W/S = 1.2727
 *   (a tool that ended the taskgroup like a taskwait, without the grandchild, would find
 *   S = max(b, a) + max(L2, a + L - max(b, a)) = 80000, W/S = 1.75)
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long a = tl_arg(argc, argv, 1, 20000, "a");
  const unsigned long len = tl_arg(argc, argv, 2, 40000, "L");
  const unsigned long b = tl_arg(argc, argv, 3, 30000, "b");
  const unsigned long len2 = tl_arg(argc, argv, 4, 50000, "L2");
  int grandchild_done = 0, done_after_group = -1;
  long sum = 0;

#pragma omp parallel num_threads(2)  // site: tgroup-parallel
#pragma omp single
  {
#pragma omp taskgroup  // site: tgroup-taskgroup
    {
#pragma omp task shared(grandchild_done, sum)  // site: tgroup-child
      {
        tl_work(a);
#pragma omp task shared(grandchild_done, sum)  // site: tgroup-grandchild
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
      tl_work(b);
    }
#pragma omp atomic read
    done_after_group = grandchild_done;
    tl_work(len2);
#pragma omp atomic
    sum += 4;
  }

  printf("sum %ld (expected 7), grandchild %s at the end of the taskgroup\n", sum,
         done_after_group == 1 ? "finished" : "NOT FINISHED");
  const unsigned long first = b > a + len ? b : a + len;
  tl_print_analytic(a + len + b + len2, first + len2);
  return sum == 7 && done_after_group == 1 ? 0 : 1;
}
