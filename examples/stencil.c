/* stencil.c: a small hydrodynamics-style proxy: per time step, two static `parallel for` loops
 * over the cells (a 3-point stencil, then an update), and one serial step that reduces the
 * residual and picks the next time step, as the proxy applications do.
 *
 *   usage: stencil [steps=4] [cells=64] [a=400] [b=200] [r=600]
 *
 * Each stencil iteration costs a units, each update iteration b units, the serial step r units.
 * Every loop has the default (static) schedule, so a recording with T threads sees T shares per
 * loop; the loops' iterations are independent, so the program's logical profile does not
 * depend on T:
 *   work           W = steps (cells (a + b) + r)
 *   span           S = steps (a + b + r)          (one iteration of each loop, then the serial
 * step) parallelism    W / S
 *
 *   defaults (4, 64, 400, 200, 600): W = 156000, S = 4800, W/S = 32.5
 *
 * With gcc the static loops make no runtime call (gcc computes the shares inline): the report
 * then says that the regions' parallelism is bounded by the team they were recorded with.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long steps = tl_arg(argc, argv, 1, 4, "steps");
  const long cells = (long)tl_arg(argc, argv, 2, 64, "cells");
  const unsigned long a = tl_arg(argc, argv, 3, 400, "a");
  const unsigned long b = tl_arg(argc, argv, 4, 200, "b");
  const unsigned long r = tl_arg(argc, argv, 5, 600, "r");
  double* u = calloc((size_t)cells + 2, sizeof(double));
  double* next = calloc((size_t)cells + 2, sizeof(double));
  if (!u || !next) {
    fprintf(stderr, "stencil: out of memory\n");
    return 1;
  }
  for (long i = 1; i <= cells; i++) u[i] = (double)(i % 5);
  double dt = 0.1, residual = 0;

  for (unsigned long step = 0; step < steps; step++) {
#pragma omp parallel for  // site: stencil-flux
    for (long i = 1; i <= cells; i++) {
      tl_work(a);
      next[i] = u[i] + dt * (u[i - 1] - 2 * u[i] + u[i + 1]);
    }
#pragma omp parallel for  // site: stencil-update
    for (long i = 1; i <= cells; i++) {
      tl_work(b);
      u[i] = 0.5 * (u[i] + next[i]);
    }
    /* The serial step: the residual and the next time step (site: stencil-serial). */
    tl_work(r);
    residual = 0;
    for (long i = 1; i <= cells; i++) residual += (next[i] - u[i]) * (next[i] - u[i]);
    dt = residual > 1 ? 0.05 : 0.1;
  }

  printf("stencil: %lu steps of %ld cells, residual %.6f\n", steps, cells, residual);
  tl_print_analytic(steps * (cells * (a + b) + r), steps * (a + b + r));
  free(u);
  free(next);
  return 0;
}
