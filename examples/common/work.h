/* work.h: the calibrated unit of work shared by the tasklens examples.
 *
 * Every example does its real computation (sorting, summing, testing primes...) but makes its
 * cost dominated by tl_work(units), which busy-waits for exactly units * TL_UNIT_TICKS ticks of
 * the time-stamp counter spent ON THE CPU. That is what makes the work W and span S of each
 * example exact, analytic numbers (in units) that the end-to-end tests compare with the measured
 * profile: tasklens measures work in TSC ticks (the default metric) and removes from a strand the
 * intervals its thread was preempted (involuntary context switches, from perf), so a strand that
 * calls tl_work(u) measures u * TL_UNIT_TICKS ticks plus its little real computation.
 *
 * tl_work reads the TSC in a loop and adds up the increments; an increment longer than
 * TL_GAP_TICKS (about 2 us; one turn of the loop takes tens of ns) means the thread was off the
 * CPU (preempted, or its virtual CPU descheduled) and is not counted, just as tasklens does not
 * count the preemption. So the spin behaves like real computation that needs that much CPU time:
 * preempted, it takes longer in wall time, but its measured work does not change. The threshold
 * is below the shortest preemption (a context switch out and back in takes microseconds): a
 * coarser one (20 us) counted the many short preemptions of a loaded machine (another thread's
 * few microseconds) as spinning, which tasklens rightly takes out, and the measured work of a
 * spin came out up to 3% below its units. An interrupt, which tasklens does not take out, is
 * not counted by the spin either: it lengthens the measured work a little, never shortens it. (A recording without preemption tracking, or
 * a virtual CPU stolen by the host, which the guest does not see as a context switch, would add
 * the time off the CPU to the strand, as it would for any real computation.)
 *
 * 1 unit = 2000 TSC ticks (about 0.77 us at 2.6 GHz, 1 us at 2 GHz). Each strand of the examples
 * spins once for its whole cost and lasts tens of microseconds at least, so the ~50 ns of
 * recording per event do not show.
 *
 * This header is C (the examples are C programs) and is also included by the C++ e2e tests for
 * TL_UNIT_TICKS.
 */
#ifndef TASKLENS_EXAMPLES_WORK_H
#define TASKLENS_EXAMPLES_WORK_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

#define TL_UNIT_TICKS 2000u
/* A TSC increment longer than this, between two reads of the spin loop, is time off the CPU. */
#define TL_GAP_TICKS 5000u

/* Busy-waits until units * TL_UNIT_TICKS TSC ticks have been spent on the CPU (nothing for 0). */
static inline void tl_work(unsigned long units) {
  const uint64_t ticks = (uint64_t)units * TL_UNIT_TICKS;
  uint64_t done = 0, last = __rdtsc();
  while (done < ticks) {
    _mm_pause();
    const uint64_t now = __rdtsc();
    if (now - last < TL_GAP_TICKS) done += now - last;
    last = now;
  }
}

/* argv[index] as an unsigned number, or `def` when absent. Exits with status 2 and a message
 * naming the argument when it is not a number. */
static inline unsigned long tl_arg(int argc, char** argv, int index, unsigned long def,
                                   const char* name) {
  if (index >= argc) return def;
  const char* s = argv[index];
  char* end = NULL;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || s[0] == '-') {
    fprintf(stderr, "%s: argument %d (%s) must be a non-negative integer, got '%s'\n", argv[0],
            index, name, s);
    exit(2);
  }
  return v;
}

/* Prints the analytic profile of the run on stdout, in units (deterministic: tests compare the
 * stdout of a plain run with the stdout of a recorded one). */
static inline void tl_print_analytic(unsigned long long work, unsigned long long span) {
  printf("analytic: work=%llu span=%llu units (1 unit = %u TSC ticks), parallelism=%.4f\n", work,
         span, TL_UNIT_TICKS, span ? (double)work / (double)span : 0.0);
}

#endif
