/* false_sharing.c: the same work twice, once on counters that share a cache line and once on
 * padded counters (the example of `tasklens diff`, OMP-WHIP's differential analysis).
 *
 *   usage: false_sharing [N=4000000] [R=2]
 *
 * Each of two loops has 2 iterations ("parts"); part p increments its own counter N times
 * through a volatile pointer (a load and a store per increment). The loops repeat R times.
 *   shared: the two counters are adjacent words of one 64-byte cache line.
 *   padded: each counter has a cache line of its own.
 * Both loops are `parallel for schedule(static)`: with 1 thread the parts run one after the
 * other and the two loops cost the same; with 2 threads on 2 cores the parts of the shared loop
 * run at the same time and every increment has to take the line back from the other core (false
 * sharing): the shared loop's work inflates several times, the padded loop's does not.
 *
 * There is no analytic work here (the point is the hardware's cost, not a spin): `tasklens diff
 * one-thread.tlens two-threads.tlens` must show the shared loop's site first, with a large work
 * ratio, and the padded loop's ratio near 1 (docs/examples.md has the measured numbers).
 * It prints each loop's wall time: on 2 threads without false sharing (two virtual CPUs on the
 * two hardware threads of one core, say) the shared loop takes half its 1-thread time, as the
 * padded one does.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "work.h"

struct shared_line {
  _Alignas(64) volatile uint64_t count[2]; /* one cache line for both parts */
};
struct padded_counter {
  _Alignas(64) volatile uint64_t count; /* a cache line each */
};

static struct shared_line g_shared;
static struct padded_counter g_padded[2];

static void bump(volatile uint64_t* counter, unsigned long n) {
  for (unsigned long i = 0; i < n; i++) *counter += 1;
}

/* Each loop in a function of its own (not inlined into main's loop of rounds), so that both
 * compilers put its construct site on its pragma's line. */
__attribute__((noinline)) static void shared_loop(unsigned long n) {
#pragma omp parallel for schedule(static)  // site: fs-shared
  for (int part = 0; part < 2; part++) bump(&g_shared.count[part], n);
}

__attribute__((noinline)) static void padded_loop(unsigned long n) {
#pragma omp parallel for schedule(static)  // site: fs-padded
  for (int part = 0; part < 2; part++) bump(&g_padded[part].count, n);
}

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 4000000, "N");
  const unsigned long rounds = tl_arg(argc, argv, 2, 2, "R");

  double shared_s = 0, padded_s = 0;
  for (unsigned long r = 0; r < rounds; r++) {
    double t0 = omp_get_wtime();
    shared_loop(n);
    double t1 = omp_get_wtime();
    padded_loop(n);
    shared_s += t1 - t0;
    padded_s += omp_get_wtime() - t1;
  }

  const uint64_t want = (uint64_t)n * rounds;
  const int ok = g_shared.count[0] == want && g_shared.count[1] == want &&
                 g_padded[0].count == want && g_padded[1].count == want;
  printf("false_sharing: %lu rounds of 2 x %lu increments per loop, %d threads: %s\n", rounds, n,
         omp_get_max_threads(), ok ? "counts ok" : "COUNTS WRONG");
  /* Whether the machine shows false sharing at all, without a profiler (the tests check it
   * first): on 2 threads the shared loop takes longer than half its 1-thread time. */
  printf("false_sharing: loop seconds: shared %.6f padded %.6f\n", shared_s, padded_s);
  return ok ? 0 : 1;
}
