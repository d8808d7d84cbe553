/* ompt_dispatch.c: what the OpenMP runtime pays to call a tool's callbacks, per recorded event
 * (bench/overhead.sh prints it; docs/benchmarks.md, "Reproducibility").
 *
 * A 1-thread recording's work is within a few percent of the same program's time under the empty
 * tool of empty_ompt_tool.h, and that time well over the plain program's (bench/repro.sh's
 * work/limit and limit/plain): the runtime's OMPT path stays in the work. This program splits
 * that path in two, in one process, where two processes can run at speeds 1.6x apart:
 *   - the callbacks' dispatch: repetitions of a fib-like kernel (a task per call, a taskwait, a
 *     one-thread team: the events a task-parallel program records most) alternately with the
 *     empty tool's callbacks registered and switched off (libomp accepts ompt_set_callback at
 *     any time); the difference of the fastest repetitions, per recorded event;
 *   - of which the call into an empty callback and back, timed in a loop (the recorder's own
 *     measured cost holds that part for its real callbacks).
 * What the runtime does for a tool with every callback switched off (task data, frames, return
 * addresses) is in neither: only a run without any tool shows it, in another process.
 * Prints one line: dispatch_ticks_per_event=<x> call_ticks=<y> events_per_rep=<n> tasks=<n>.
 * Run under LLVM 16's libomp (LD_PRELOAD). Arguments: [n (16)] [repetitions (50)].
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

#include "empty_ompt_tool.h"

__attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(
    unsigned int omp_version, const char* runtime_version) {
  (void)omp_version, (void)runtime_version;
  static ompt_start_tool_result_t result = {empty_tool_initialize, empty_tool_finalize, {0}};
  return &result;
}

static long g_tasks, g_waits; /* one thread: plain counters */

static long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
#pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
  b = fib(n - 2);
  g_tasks += 2;
  ++g_waits;
#pragma omp taskwait
  return a + b;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 16;
  const int reps = argc > 2 ? atoi(argv[2]) : 50;
  if (n < 2 || n > 30 || reps < 1 || reps > 10000) {
    fprintf(stderr, "ompt_dispatch: usage: ompt_dispatch [n 2-30] [repetitions 1-10000]\n");
    return 2;
  }
  if (!empty_tool_set) {
    fprintf(stderr, "ompt_dispatch: the runtime did not start the tool (run it under libomp)\n");
    return 1;
  }
  unsigned long long on = ~0ull, off = ~0ull;
  long sum = 0;
  for (int r = 0; r < 2 * reps; ++r) {
    const int callbacks = !(r & 1);
    empty_tool_register(callbacks);
    g_tasks = g_waits = 0;
    const unsigned long long t0 = __rdtsc();
#pragma omp parallel num_threads(1)
#pragma omp single
    sum += fib(n);
    const unsigned long long t = __rdtsc() - t0;
    unsigned long long* best = callbacks ? &on : &off;
    if (t < *best) *best = t;
  }
  empty_tool_register(1);
  /* Recorded per repetition: each task's creation and its two switches (in, out), each
   * taskwait's begin and end; the parallel region's few events are left out (under 1%). */
  const long events = 3 * g_tasks + 2 * g_waits;
  void (*volatile call)(ompt_data_t*, ompt_task_status_t, ompt_data_t*) = on_task_schedule;
  unsigned long long call_best = ~0ull;
  for (int r = 0; r < 5; ++r) {
    const unsigned long long c0 = __rdtsc();
    for (int i = 0; i < 100000; ++i) call(NULL, ompt_task_switch, NULL);
    const unsigned long long c = __rdtsc() - c0;
    if (c < call_best) call_best = c;
  }
  printf("dispatch_ticks_per_event=%.2f call_ticks=%.2f events_per_rep=%ld tasks=%ld check=%ld\n",
         on > off ? (double)(on - off) / (double)events : 0.0, (double)call_best / 100000.0, events,
         g_tasks, sum);
  return 0;
}
