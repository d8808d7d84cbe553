/* sem_no_openmp.c: a plain C program without any OpenMP (built without -fopenmp).
 *
 *   usage: sem_no_openmp [w=20000]
 *
 * It spins w units, prints a result and exits 0. The OpenMP runtime never starts in it, so
 * `tasklens record` can record nothing: it must say so clearly (and the report of its output,
 * if any, must fail or say so too), while the program's output and exit status pass through.
 *
 * Analytic profile (units): W = S = w (no parallelism); nothing of it is visible to an OMPT
 * tool.
 *
 *   defaults / tests (w=20000): W = S = 20000
 */
#include <stdio.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long w = tl_arg(argc, argv, 1, 20000, "w");
  unsigned long long sum = 0;
  for (unsigned long i = 0; i < 1000000; i++) sum += i ^ (i >> 3);
  tl_work(w);
  printf("no OpenMP here: sum %llu\n", sum);
  return 0;
}
