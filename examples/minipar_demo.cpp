// minipar_demo.cpp: a program that uses the header-only library minipar/minipar.h (OpenMP
// backend): a parallel_for of n iterations (a taskloop inside the library) and a par_do of two
// halves (a task inside the library). Its constructs are all created in minipar.h; the program's
// own lines are the two calls below.
//
//   usage: minipar_demo [n=16] [w=2000]
//
// Analytic profile (units): W = n w + 2 (n/2) w = 2 n w, S = w + (n/2) w (the taskloop's
// iterations run side by side; then the two halves of par_do, n/2 w each, side by side).
//   defaults: W = 64000, S = 18000, W/S = 3.5556
#include <omp.h>

#include <cstdio>

#include "minipar/minipar.h"
#include "work.h"

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 16, "n");
  const unsigned long w = tl_arg(argc, argv, 2, 2000, "w");
#pragma omp parallel
#pragma omp single
  {
    minipar::parallel_for(static_cast<long>(n), 1, [w](long) { tl_work(w); });  // site: demo-for
    minipar::par_do([n, w] { tl_work(n / 2 * w); },                             // site: demo-par-do
                    [n, w] { tl_work(n / 2 * w); });
  }
  std::printf("minipar_demo: %lu iterations of %lu units, then two halves\n", n, w);
  tl_print_analytic(2 * n * w, w + n / 2 * w);
  return 0;
}
