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
 * tl_work reads the TSC in a loop and adds up the increments. An increment longer than
 * TL_GAP_TICKS (many turns of the loop) is a moment the thread did not run the loop: the kernel
 * switched it out (a preemption), or something the kernel does not see as a switch took the CPU
 * (an interrupt, or the hypervisor pausing the virtual CPU, which on some hosts is frequent and
 * long, often just before the kernel preempts the thread: docs/benchmarks.md has the figures).
 * After such a gap the spin reads how long the thread waited on a run queue (switched out,
 * runnable) since its previous gap. A gap with no such wait (an interrupt, the host's pause) is
 * counted, as it is in the thread's CPU time and in tasklens's work (neither can see it). A gap
 * with a wait is not counted at all: tasklens takes out the interval its perf records show the
 * thread switched out, which is the wait and the switches' own time, and that time is not known
 * here (usually little; on a virtual machine at times far more: docs/benchmarks.md), so the
 * spin leaves out the whole gap rather than count a part tasklens removes. So the spin behaves
 * like real computation that needs that much CPU time: preempted, it takes longer in wall time,
 * but its measured work is never below its units; paused by the host, the pause counts towards
 * its units as it counts in the recording's work, and the two agree. (A spin that skipped every
 * gap, as this one once did, ran short of tasklens's work by all of the host's pauses.)
 *
 * What the spin cannot match, it reports. A gap it counts may run past its units (a host's pause
 * near a spin's end lengthens the strand by its length: the recording's work has it, the units do
 * not), and of a gap with a wait, the part beyond the wait may be in tasklens's work. With
 * TL_SPIN_REPORT naming a file, the program writes there when it exits how many spins ran and by
 * how many ticks they overran their units at most, all together and the most in one spin: the
 * end-to-end tests judge a strand or a span above its analytic value against that, the
 * program's own account of the machine's disturbance while it ran.
 *
 * 1 unit = 2000 TSC ticks (about 0.77 us at 2.6 GHz, 1 us at 2 GHz). Each strand of the examples
 * spins once for its whole cost and lasts many units, so the recorder's cost per event, a small
 * fraction of a unit, does not show.
 *
 * This header is C (the examples are C programs) and is also included by the C++ e2e tests for
 * TL_UNIT_TICKS.
 */
#ifndef TASKLENS_EXAMPLES_WORK_H
#define TASKLENS_EXAMPLES_WORK_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define TL_UNIT_TICKS 2000u
/* A TSC increment longer than this, between two reads of the spin loop, may be time off the
 * CPU: the thread's time waiting on a run queue says how much of it was. */
#define TL_GAP_TICKS 5000u
/* The shortest spin that reads its thread's run-queue wait when it starts: a reading is a file
 * read, a unit or two, which must stay a small part of the spin's units. */
#define TL_REFERENCE_UNITS 64u

/* How many spins ran, and the ticks by which they overran their units at most: in all, and the
 * most in one spin (TL_SPIN_REPORT). */
static uint64_t tl_spins, tl_overrun_ticks, tl_overrun_max_ticks;

__attribute__((destructor)) static void tl_write_spin_report(void) {
  const char* path = getenv("TL_SPIN_REPORT");
  if (!path || !*path || tl_spins == 0) return;
  FILE* f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "spins %llu overrun_ticks %llu overrun_max_ticks %llu unit_ticks %u\n",
          (unsigned long long)tl_spins, (unsigned long long)tl_overrun_ticks,
          (unsigned long long)tl_overrun_max_ticks, TL_UNIT_TICKS);
  fclose(f);
}

static inline void tl_note_overrun(uint64_t ticks) {
  __atomic_fetch_add(&tl_spins, 1, __ATOMIC_RELAXED);
  if (ticks == 0) return;
  __atomic_fetch_add(&tl_overrun_ticks, ticks, __ATOMIC_RELAXED);
  uint64_t max = __atomic_load_n(&tl_overrun_max_ticks, __ATOMIC_RELAXED);
  while (ticks > max && !__atomic_compare_exchange_n(&tl_overrun_max_ticks, &max, ticks, 1,
                                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

static inline uint64_t tl_clock_ns(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The TSC and the wall clock when the program started: their rates, compared at a gap, convert
 * the kernel's nanoseconds into ticks. */
static uint64_t tl_origin_tsc, tl_origin_ns;
__attribute__((constructor)) static void tl_take_origin(void) {
  tl_origin_ns = tl_clock_ns(CLOCK_MONOTONIC);
  tl_origin_tsc = __rdtsc();
}

/* The calling thread's time waiting on a run queue so far, in ns (/proc/thread-self/schedstat's
 * second field; the file stays open, one per thread); -1 if unknown. */
static inline int64_t tl_run_delay_ns(void) {
  static __thread int fd = -1;
  if (fd < 0) fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  char buf[96];
  const ssize_t n = fd < 0 ? -1 : pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  char* p = strchr(buf, ' ');
  return p ? (int64_t)strtoull(p + 1, NULL, 10) : -1;
}

/* Busy-waits until units * TL_UNIT_TICKS TSC ticks have been spent on the CPU, as tasklens
 * counts it (nothing for 0). Nothing but the loop runs unless a gap comes: a short spin
 * costs no more than its units. */
static inline void tl_work(unsigned long units) {
  const uint64_t ticks = (uint64_t)units * TL_UNIT_TICKS;
  if (ticks == 0) return;
  /* The run-queue wait at the last reading: taken when a spin of TL_REFERENCE_UNITS or more
   * starts, then at each gap; -1 when the spin has none yet. The first reading is not timed: it
   * may block (a thread's first opens its file), which tasklens takes out as off the CPU and the
   * run-queue wait does not hold; its time is an overrun. */
  const uint64_t before = __rdtsc();
  int64_t last_delay = units >= TL_REFERENCE_UNITS ? tl_run_delay_ns() : -1;
  uint64_t done = 0, last = __rdtsc();
  /* Ticks of the strand beyond the units that may be in tasklens's work: the first reading, a
   * gap with no reading to compare with, the switches' bounded cost. */
  uint64_t uncertain = last - before;
  while (done < ticks) {
    _mm_pause();
    uint64_t now = __rdtsc();
    const uint64_t step = now - last;
    if (step < TL_GAP_TICKS) {
      done += step;
    } else {
      /* A gap in which the thread did not wait on a run queue is time on the CPU; one in which
       * it did is left out whole, its part beyond the wait being uncertain. A gap with no
       * reading to compare with counts as off the CPU. */
      const int64_t delay = tl_run_delay_ns();
      const uint64_t ns = tl_clock_ns(CLOCK_MONOTONIC) - tl_origin_ns;
      const double per_ns = ns > 0 ? (double)(now - tl_origin_tsc) / (double)ns : 0;
      if (delay >= 0 && last_delay >= 0) {
        const int64_t waited = delay - last_delay;
        if (waited <= 0) {
          done += step;
        } else {
          const double waited_ticks = (double)waited * per_ns;
          if (waited_ticks < (double)step) uncertain += step - (uint64_t)waited_ticks;
        }
      } else {
        uncertain += step;
      }
      last_delay = delay;
      /* The readings' own time is time on the CPU in the strand, which tasklens counts as work
       * (on a host that interrupts the CPU often, leaving it out made every spin's strand
       * longer than its units: docs/benchmarks.md); unless the thread left the CPU during them:
       * their run-queue wait was read before it ended, so no reading would take it out. */
      const uint64_t read = __rdtsc();
      if (read - now < TL_GAP_TICKS)
        done += read - now;
      else
        uncertain += read - now;
      now = read;
    }
    last = now;
  }
  tl_note_overrun(done - ticks + uncertain);
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
