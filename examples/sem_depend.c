/* sem_depend.c: tasks ordered by depend clauses, including a predecessor that has ALREADY
 * FINISHED when its successor is created.
 *
 *   usage: sem_depend [c=10000] [p=30000] [q=30000] [t1=40000] [fill=300]
 *
 * Region 1 (`parallel num_threads(2)` + `single`): five tasks on the same variable x,
 *     A depend(out: x), B depend(inout: x), C1 depend(in: x), C2 depend(in: x), D depend(out: x)
 * each of c units, ordered A -> B -> {C1, C2} -> D (C1 and C2 are both readers: parallel; D
 * writes after both readers), plus 4 independent tasks of c units.
 *
 * Region 2 (`parallel num_threads(2)`): thread 1 spins t1 units in its implicit task, so it cannot
 * steal tasks. Thread 0 first creates `fill` empty tasks to fill its task deque (libomp's holds
 * 256; when it is full, libomp runs a new task at once, inside its creation), then creates
 * P depend(out: y) (p units), which therefore runs to completion before the next statement, then
 * creates Q depend(in: y) (q units). P has ALREADY FINISHED when Q is created (the program checks
 * and says so on stderr), so the runtime reports no pending dependence for Q, but Q is still
 * ordered after P. Logically the parent's continuation after creating P is parallel with P, so
 * only the P -> Q edge puts P and Q in sequence. (When the runtime does not run P at once, P is
 * still pending when Q is created: an ordinary dependence, same analytic values.)
 *
 * Analytic profile (units; the fill tasks and task creations are negligible):
 *   work           W = 9c + p + q + t1
 *   span           S = 4c + max(t1, p + q)
 *   parallelism    W / S
 *
 *   defaults / tests: W = 190000, S = 100000, W/S = 1.9
 *   (without the dependences of region 1: S = c + 60000 = 70000, W/S = 2.714; without the
 *   P -> Q edge: S = 4c + max(t1, p, q) = 80000, W/S = 2.375)
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long c = tl_arg(argc, argv, 1, 10000, "c");
  const unsigned long p = tl_arg(argc, argv, 2, 30000, "p");
  const unsigned long q = tl_arg(argc, argv, 3, 30000, "q");
  const unsigned long t1 = tl_arg(argc, argv, 4, 40000, "t1");
  const unsigned long fill = tl_arg(argc, argv, 5, 300, "fill");

  /* Region 1: a chain with in/out/inout and parallel readers. */
  int x = 0, r1 = -1, r2 = -1;
  int independent = 0;
#pragma omp parallel num_threads(2)  // site: dep-parallel-1
#pragma omp single
  {
#pragma omp task depend(out : x) shared(x)  // site: dep-A
    {
      tl_work(c);
      x = 1;
    }
#pragma omp task depend(inout : x) shared(x)  // site: dep-B
    {
      tl_work(c);
      x += 1;
    }
#pragma omp task depend(in : x) shared(x, r1)  // site: dep-C1
    {
      tl_work(c);
      r1 = x;
    }
#pragma omp task depend(in : x) shared(x, r2)  // site: dep-C2
    {
      tl_work(c);
      r2 = x;
    }
#pragma omp task depend(out : x) shared(x)  // site: dep-D
    {
      tl_work(c);
      x = 10;
    }
    for (int i = 0; i < 4; i++) {
#pragma omp task shared(independent)  // site: dep-independent
      {
        tl_work(c);
        __atomic_add_fetch(&independent, 1, __ATOMIC_SEQ_CST);
      }
    }
  }

  /* Region 2: the predecessor finishes before its successor is created. */
  int y = 0, p_done = 0, finished_before = -1, q_saw = -1, fillers = 0;
#pragma omp parallel num_threads(2)  // site: dep-parallel-2
  {
    if (omp_get_thread_num() == 1) {
      tl_work(t1);
    } else if (omp_get_thread_num() == 0) {
      for (unsigned long i = 0; i < fill; i++) {
#pragma omp task shared(fillers)  // site: dep-fill
        __atomic_add_fetch(&fillers, 1, __ATOMIC_RELAXED);
      }
#pragma omp task depend(out : y) shared(y, p_done)  // site: dep-P
      {
        tl_work(p);
        y = 1;
        __atomic_store_n(&p_done, 1, __ATOMIC_SEQ_CST);
      }
      finished_before = __atomic_load_n(&p_done, __ATOMIC_SEQ_CST);
#pragma omp task depend(in : y) shared(y, q_saw)  // site: dep-Q
      {
        q_saw = y;
        tl_work(q);
      }
    }
  }

  fprintf(stderr, "sem_depend: P had %s when Q was created\n",
          finished_before == 1 ? "already finished" : "not finished");
  const int ok =
      r1 == 2 && r2 == 2 && x == 10 && independent == 4 && q_saw == 1 && fillers == (int)fill;
  printf("chain: readers saw %d %d, x = %d, %d independent tasks; Q saw y = %d: %s\n", r1, r2, x,
         independent, q_saw, ok ? "ok" : "WRONG");
  const unsigned long last = t1 > p + q ? t1 : p + q;
  tl_print_analytic(9 * c + p + q + t1, 4 * c + last);
  return ok ? 0 : 1;
}
