/* sem_detach.c: a task with a detach clause completes when its event is fulfilled, not when its
 * body ends: the tasks that depend on it, and the taskwait, wait for the fulfilment.
 *
 *   usage: sem_detach [a=10000] [b1=40000] [b2=10000] [c=40000]
 *
 * Inside `parallel num_threads(2)` + `single`: task A detach(ev) depend(out: x) spins a units;
 * task B spins b1 units, fulfils A's event, then spins b2 units; task C depend(in: x) spins c
 * units, and may start only once A is complete (its body ended AND its event fulfilled). Then a
 * taskwait.
 *
 * `tasklens record` refuses the gcc build before it runs: LLVM's libomp, which it records GCC's
 * OpenMP code with, cannot run a detach clause compiled by GCC (src/cli/runtime_compat.hpp).
 *
 * Analytic profile (units):
 *   work           W = a + b1 + b2 + c
 *   span           S = max(b1 + b2, max(a, b1) + c)
 *   parallelism    W / S
 *
 *   defaults / tests (a=10000, b1=40000, b2=10000, c=40000): W = 100000, S = 80000, W/S = 1.25
 *   (a tool that completed A when its body ended would find S = max(b1 + b2, a + c) = 50000,
 *   W/S = 2)
 */
#include <omp.h>
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long a = tl_arg(argc, argv, 1, 10000, "a");
  const unsigned long b1 = tl_arg(argc, argv, 2, 40000, "b1");
  const unsigned long b2 = tl_arg(argc, argv, 3, 10000, "b2");
  const unsigned long c = tl_arg(argc, argv, 4, 40000, "c");
  int x = 0, fulfilled = 0, seen_by_c = -1;

#pragma omp parallel num_threads(2)  // site: detach-parallel
#pragma omp single
  {
    omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out : x) shared(x)  // site: detach-A
    {
      tl_work(a);
      x = 1;
    }
#pragma omp task shared(fulfilled)  // site: detach-B
    {
      tl_work(b1);
#pragma omp atomic write
      fulfilled = 1;
      omp_fulfill_event(ev);
      tl_work(b2);
    }
#pragma omp task depend(in : x) shared(x, fulfilled, seen_by_c)  // site: detach-C
    {
#pragma omp atomic read
      seen_by_c = fulfilled;
      tl_work(c);
    }
#pragma omp taskwait
  }

  printf("x %d, C %s the fulfilment\n", x, seen_by_c == 1 ? "ran after" : "ran BEFORE");
  const unsigned long first = a > b1 ? a : b1;
  tl_print_analytic(a + b1 + b2 + c, b1 + b2 > first + c ? b1 + b2 : first + c);
  return seen_by_c == 1 ? 0 : 1;
}
