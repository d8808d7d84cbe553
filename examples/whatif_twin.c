/* whatif_twin: a program whose parallelism is limited by a serial region, and its optimized
 * twin (the same region actually parallelized), for the what-if analysis and the adviser.
 *
 *   whatif_twin serial   [S] [T] [W] [K]   the "prepare" region runs serially in main
 *   whatif_twin parallel [S] [T] [W] [K]   the twin: "prepare" is split into K parallel tasks
 *
 * Both then run T tasks of W units each (the "solve" phase). Units: see common/work.h.
 *   serial:   work = S + T*W   span = S + W      (defaults: 160000 + 16*10000, 170000: 1.88)
 *   parallel: work = S + T*W   span = S/K + W    (defaults K = 8: 30000, parallelism 10.67)
 * `tasklens whatif --region prepare=K` on the serial run predicts the parallel run's
 * parallelism; `tasklens advise` names the fragment holding "prepare" first.
 */
#include <string.h>
#include <tasklens/tasklens.h>

#include "work.h"

static double prepare_piece(unsigned long units, unsigned long i) {
  tl_work(units);
  return (double)i * 0.5;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "serial";
  const unsigned long s = tl_arg(argc, argv, 2, 160000, "S");
  const unsigned long t = tl_arg(argc, argv, 3, 16, "T");
  const unsigned long w = tl_arg(argc, argv, 4, 10000, "W");
  const unsigned long k = tl_arg(argc, argv, 5, 8, "K");
  const int parallel = strcmp(mode, "parallel") == 0;
  if ((!parallel && strcmp(mode, "serial") != 0) || k == 0 || s % k != 0) {
    fprintf(stderr, "usage: %s serial|parallel [S] [T] [W] [K] (K must divide S)\n", argv[0]);
    return 2;
  }

  double prepared = 0;
  TASKLENS_REGION_BEGIN("prepare");
  if (!parallel) {
    for (unsigned long i = 0; i < k; i++) prepared += prepare_piece(s / k, i);
  } else {
#pragma omp parallel
#pragma omp single
    for (unsigned long i = 0; i < k; i++) {
#pragma omp task shared(prepared)
      {
        double v = prepare_piece(s / k, i);
#pragma omp atomic
        prepared += v;
      }
    }
  }
  TASKLENS_REGION_END("prepare");

  double solved = 0;
#pragma omp parallel
#pragma omp single
  for (unsigned long i = 0; i < t; i++) {
#pragma omp task shared(solved)
    {
      tl_work(w);
#pragma omp atomic
      solved += 1;
    }
  }

  printf("whatif_twin (%s): prepare %lu units in %lu pieces, solve %lu x %lu units: %.1f %.1f\n",
         mode, s, k, t, w, prepared, solved);
  tl_print_analytic(s + t * w, parallel ? s / k + w : s + w);
  return 0;
}
