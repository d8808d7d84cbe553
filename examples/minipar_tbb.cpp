// minipar_tbb.cpp: a program that uses the header-only library minipar/minipar.h with its oneTBB
// backend: a parallel_for of n iterations in chunks of g, created inside the library (which calls
// tbb::parallel_for); the program's own line is the call below.
//
//   usage: minipar_tbb [n=64] [g=4] [w=500]
//
// Analytic profile (units): W = n w, S = g w (the largest chunk: n = g 2^k), W/S = n / g.
//   defaults: W = 32000, S = 2000, W/S = 16
#define MINIPAR_TBB 1
#include <cstdio>

#include "minipar/minipar.h"
#include "tbb_example.hpp"

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 64, "n");
  const unsigned long g = tl_arg(argc, argv, 2, 4, "g");
  const unsigned long w = tl_arg(argc, argv, 3, 500, "w");
  if (g == 0) {
    std::fprintf(stderr, "%s: g must be positive\n", argv[0]);
    return 2;
  }
  minipar::parallel_for(static_cast<long>(n), static_cast<long>(g),  // site: minipar-tbb-for
                        [w](long) { tl_work(w); });
  std::printf("minipar_tbb: %lu iterations of %lu units in chunks of %lu\n", n, w, g);
  tl_print_analytic(n * w, largest_chunk(n, g) * w);
  return 0;
}
