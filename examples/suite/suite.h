/* suite.h: what the task-benchmark programs of examples/suite share (docs/examples.md, "The
 * program suite"): argument parsing, the variant macros, the result line.
 *
 * One source builds several variants, chosen with macros (examples/suite/CMakeLists.txt):
 *   -DUNTIED         the recursive tasks are untied;
 *   -DCUTOFF_MANUAL  a call at depth >= cutoff runs its children as plain calls (no task);
 *   -DCUTOFF_IF      ... creates its children with if(0): undeferred tasks, still tasks;
 *   -DCUTOFF_FINAL   ... is inside a final task: its children are included tasks, still tasks;
 *   none of them     a task at every level (the default).
 * Depth 0 is the root call; the tasks created by a call at depth d are "cut" when d >= cutoff,
 * the same point in all three modes, so that their traces compare. The cutoff is an argument
 * of each program; the variants without a cut-off ignore it.
 *
 * Every program prints ONE line on stdout:
 *   <name> <args> result=<value> tasks=<N> variant=<tied|untied>/<cutoff> threads=<T> region=<s> s
 * where N is the number of task constructs the run encountered (undeferred and included tasks
 * count: the runtime creates them all), computed analytically or summed through the recursion
 * (never with a shared counter, which would slow the tasks down). Everything before " region="
 * is deterministic: the same for every thread count, compiler and run. A wrong result prints
 * "FAILED" on stderr and exits with status 1.
 */
#ifndef TASKLENS_SUITE_H
#define TASKLENS_SUITE_H

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#else
/* The serial elision: the same source built without -fopenmp (suite_<name>_serial_clang), every
 * pragma ignored. What a task costs a program is its 1-thread run's time over this one's. */
#include <time.h>
static inline double omp_get_wtime(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static inline int omp_get_max_threads(void) { return 1; }
#endif

static int suite_cutoff __attribute__((unused)) = INT_MAX;

#ifndef _OPENMP
#define SUITE_UNTIED
#define SUITE_TIED_NAME "serial"
#elif defined(UNTIED)
#define SUITE_UNTIED untied
#define SUITE_TIED_NAME "untied"
#else
#define SUITE_UNTIED
#define SUITE_TIED_NAME "tied"
#endif

/* SUITE_CUTOFF(d): the clause of a task created by a call at depth d. SUITE_SERIAL(d): true
 * when that call must not create tasks at all (manual cut-off). */
#if defined(CUTOFF_MANUAL) + defined(CUTOFF_IF) + defined(CUTOFF_FINAL) > 1
#error "at most one of CUTOFF_MANUAL, CUTOFF_IF, CUTOFF_FINAL"
#endif
#if defined(CUTOFF_IF)
#define SUITE_CUTOFF(d) if ((d) < suite_cutoff)
#define SUITE_CUTOFF_NAME "if"
#elif defined(CUTOFF_FINAL)
#define SUITE_CUTOFF(d) final((d) + 1 >= suite_cutoff)
#define SUITE_CUTOFF_NAME "final"
#elif defined(CUTOFF_MANUAL)
#define SUITE_CUTOFF(d)
#define SUITE_CUTOFF_NAME "manual"
#else
#define SUITE_CUTOFF(d)
#define SUITE_CUTOFF_NAME "none"
#endif
#ifdef CUTOFF_MANUAL
#define SUITE_SERIAL(d) ((d) >= suite_cutoff)
#else
#define SUITE_SERIAL(d) 0
#endif

/* argv[index] as a number in [lo, hi], or def when absent; exits with status 2 otherwise. */
static inline long suite_arg(int argc, char** argv, int index, long def, long lo, long hi,
                             const char* name) {
  if (index >= argc) return def;
  const char* s = argv[index];
  char* end = NULL;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "%s: argument %d (%s) must be a number in [%ld, %ld], not '%s'\n", argv[0],
            index, name, lo, hi, s);
    exit(2);
  }
  return v;
}

/* The cut-off depth: argument `index` (default def) for the cut-off variants. */
static inline void suite_cutoff_arg(int argc, char** argv, int index, long def) {
  long c = suite_arg(argc, argv, index, def, 0, 1000, "cutoff");
#if defined(CUTOFF_MANUAL) || defined(CUTOFF_IF) || defined(CUTOFF_FINAL)
  suite_cutoff = (int)c;
#else
  (void)c;
#endif
}

/* The variant, for the result line: "tied/none", "untied/if:4"... */
static inline const char* suite_variant(void) {
  static char buf[64];
#if defined(CUTOFF_MANUAL) || defined(CUTOFF_IF) || defined(CUTOFF_FINAL)
  snprintf(buf, sizeof buf, "%s/%s:%d", SUITE_TIED_NAME, SUITE_CUTOFF_NAME, suite_cutoff);
#else
  snprintf(buf, sizeof buf, "%s/%s", SUITE_TIED_NAME, SUITE_CUTOFF_NAME);
#endif
  return buf;
}

/* Prints the result line; with ok == 0 also "FAILED" on stderr and exits with status 1. */
static inline void suite_report(const char* what, const char* result, unsigned long long tasks,
                                double seconds, int ok) {
  printf("%s result=%s tasks=%llu variant=%s threads=%d region=%.6f s\n", what, result, tasks,
         suite_variant(), omp_get_max_threads(), seconds);
  fflush(stdout);
  if (!ok) {
    fprintf(stderr, "%s: FAILED: wrong result %s\n", what, result);
    exit(1);
  }
}

/* A deterministic 64-bit mixer (splitmix64's finalizer): the suite's random numbers. */
static inline uint64_t suite_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
/* The next number of a splitmix64 stream, in [0, 1). */
static inline double suite_rand(uint64_t* state) {
  *state += 0x9e3779b97f4a7c15ull;
  return (double)(suite_mix(*state) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
