/* amdahl.c: Amdahl's law: a serial part and a parallel part.
 *
 *   usage: amdahl [s=20000] [p=400000] [k=8] [mode=tasks|loop]
 *
 * The serial part (s units) is split in two: s/4 units run at the start of main, BEFORE the first
 * OpenMP construct (so a profiler must count code that runs before the OpenMP runtime starts),
 * and s - s/4 units after the parallel part (the unequal split tells which one a profiler
 * missed, if it misses one). The parallel part is p units in k equal
 * pieces of p/k units (p must be a multiple of k): k tasks created from a `single` (mode tasks),
 * or a `parallel for schedule(dynamic,1)` over k iterations (mode loop).
 *
 * Analytic profile (units):
 *   work           W = s + p
 *   span           S = s + p / k
 *   parallelism    W / S = (s + p) / (s + p/k)   (Amdahl: at most (s + p) / s as k grows)
 *
 *   defaults / tests (s=20000, p=400000, k=8): W = 420000, S = 70000, W/S = 6.0
 *   s=0, p=400000, k=8:                       W = 400000, S = 50000, W/S = 8.0
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "work.h"

static double serial_part(unsigned long units, unsigned long seed) {
  double acc = 0;
  for (unsigned long i = 1; i <= 1000; i++) acc += 1.0 / (double)(i * i + seed);
  tl_work(units);
  return acc;
}

static double piece(unsigned long units, unsigned long index) {
  double acc = 0;
  for (unsigned long i = 1; i <= 1000; i++) acc += (double)((i + index) % 7);
  tl_work(units);
  return acc;
}

int main(int argc, char** argv) {
  const unsigned long s = tl_arg(argc, argv, 1, 20000, "s");
  const unsigned long p = tl_arg(argc, argv, 2, 400000, "p");
  const unsigned long k = tl_arg(argc, argv, 3, 8, "k");
  const char* mode = argc > 4 ? argv[4] : "tasks";
  const int loop = strcmp(mode, "loop") == 0;
  if (k == 0 || p % k != 0 || (!loop && strcmp(mode, "tasks") != 0)) {
    fprintf(stderr, "%s: k must divide p and mode must be tasks or loop\n", argv[0]);
    return 2;
  }

  double total = serial_part(s / 4, 1);  // before any OpenMP construct

  double parallel_total = 0;
  if (loop) {
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : parallel_total)  // site: amdahl-loop
    for (unsigned long i = 0; i < k; i++) parallel_total += piece(p / k, i);
  } else {
#pragma omp parallel  // site: amdahl-parallel
#pragma omp single
    {
      for (unsigned long i = 0; i < k; i++) {
#pragma omp task shared(parallel_total)  // site: amdahl-task
        {
          double v = piece(p / k, i);
#pragma omp atomic
          parallel_total += v;
        }
      }
    }
  }

  total += parallel_total + serial_part(s - s / 4, 2);
  printf("amdahl (%s): %lu serial + %lu parallel units in %lu pieces, result %.6f\n", mode, s, p, k,
         total);
  tl_print_analytic(s + p, s + p / k);
  return 0;
}
