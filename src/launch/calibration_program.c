// tasklens-runtime-calibration: empty tasks and loops in the shapes task-parallel programs use.
// `tasklens record` runs it after the program, under the same OpenMP runtime and recorder
// (src/launch/runtime_calibration.cpp). Its tasks do nothing, so each interval of a thread's time
// between two of the recorder's events inside a strand is the runtime's own code: creating a
// task, switching to it, entering and leaving a taskwait, fetching a loop chunk. The median of
// each kind of interval is what the model then takes out of the same kind of interval of the
// program's strands (trace::RuntimeCostEntry), so that the program's work excludes the runtime.
//
// Built with clang (the LLVM runtime's own entry points, as clang-built programs call them).
// Teams of one thread and of two: a one-thread team runs each task the moment it is created,
// along other paths of the runtime.
//
// With TASKLENS_TASK_COST_OUT set, it measures instead what a task costs as a whole, run
// without the recorder: an empty-task recursion on one thread against the same recursion as
// plain calls (its serial elision), the difference per task written to that file. That is the
// tasking overhead a program pays per task (creating, scheduling, running and joining it), which
// the intervals above cannot add up to: each sees only the runtime's code between two events.
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void recurse(int n) {
  if (n < 2) return;
#pragma omp task
  recurse(n - 1);
#pragma omp task
  recurse(n - 2);
#pragma omp taskwait
}

static void recurse_untied(int n) {
  if (n < 2) return;
#pragma omp task untied
  recurse_untied(n - 1);
#pragma omp task untied
  recurse_untied(n - 2);
#pragma omp taskwait
}

// The serial elision of recurse(): the same calls, no tasks. The empty asm keeps the compiler
// from folding the recursion away, as a real task body's side effects would.
__attribute__((noinline)) static void recurse_calls(int n) {
  __asm__ volatile("" ::: "memory");
  if (n < 2) return;
  recurse_calls(n - 1);
  recurse_calls(n - 2);
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

// Tasks made by recurse(n): two per call with n >= 2.
static long tasks_of(int n) { return n < 2 ? 0 : 2 + tasks_of(n - 1) + tasks_of(n - 2); }

// The cost of a task over a plain call, in nanoseconds, on a team of one thread: the least time
// of many short rounds of each (a pause of the machine only lengthens a round, so the least is
// the undisturbed one), interleaved so that both see the same machine.
static int measure_task_cost(const char* out_path) {
  enum { kRounds = 41, kDepth = 17 };
  double best_tasks = 1e300, best_calls = 1e300;
  for (int round = 0; round < kRounds; ++round) {
    double t0 = now_ns();
    recurse_calls(kDepth);
    double t1 = now_ns();
    if (t1 - t0 < best_calls) best_calls = t1 - t0;
#pragma omp parallel num_threads(1)
    {
      const double s = now_ns();
      recurse(kDepth);
      const double e = now_ns();
      if (e - s < best_tasks) best_tasks = e - s;
    }
  }
  const long tasks = tasks_of(kDepth);
  const double per_task = best_tasks > best_calls ? (best_tasks - best_calls) / (double)tasks : 0;
  FILE* f = fopen(out_path, "w");
  if (!f) return 1;
  fprintf(f, "task_cost_ns %.3f tasks %ld rounds %d\n", per_task, tasks, (int)kRounds);
  return fclose(f) == 0 ? 0 : 1;
}

// Below the top levels, final tasks whose descendants are included (a cut-off by `final`).
static void recurse_final(int n, int depth) {
  if (n < 2) return;
#pragma omp task final(depth >= 3)
  recurse_final(n - 1, depth + 1);
#pragma omp task final(depth >= 3)
  recurse_final(n - 2, depth + 1);
#pragma omp taskwait
}

static void task_shapes(int scale) {
  // Recursions joined by taskwaits (a task per call): tied, untied, cut off by final.
  recurse(13 + scale);
  recurse_untied(11 + scale);
  recurse_final(12 + scale, 0);
  // A loop of tasks joined by a taskwait, then by a taskgroup.
  for (int i = 0; i < 400 << scale; ++i) {
#pragma omp task
    {}
  }
#pragma omp taskwait
#pragma omp taskgroup
  {
    for (int i = 0; i < 400 << scale; ++i) {
#pragma omp task
      {}
    }
  }
  // Dependences: a chain, and readers of one value.
  int x = 0;
  (void)x;  // only named by the clauses
  for (int i = 0; i < 200 << scale; ++i) {
#pragma omp task depend(inout : x)
    {}
#pragma omp task depend(in : x)
    {
    }
  }
#pragma omp taskwait
  // Undeferred tasks and a taskloop.
  for (int i = 0; i < 200 << scale; ++i) {
#pragma omp task if (0)
    {}
  }
  const unsigned long loop_tasks = 200ul << scale;
#pragma omp taskloop grainsize(1)
  for (unsigned long i = 0; i < loop_tasks; ++i) {
  }
}

// Another thread of the team that runs into the runtime while the first one creates tasks or
// takes loop chunks would steal them or contend for the chunks: with empty tasks, far more often
// than in any program, and each such interval would then hold a lock's wait. So the second
// thread waits here, in the program's own code (a single interval, not enough to be a measure),
// until the first is done.
static void wait_for(atomic_int* flag) {
  while (!atomic_load_explicit(flag, memory_order_acquire)) sched_yield();
}

int main(int argc, char** argv) {
  // The scale (0 to 4) doubles the number of everything per step; 1 by default.
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  if (scale < 0 || scale > 4) {
    fprintf(stderr, "usage: %s [scale 0-4]\n", argv[0]);
    return 2;
  }
  const char* task_cost_out = getenv("TASKLENS_TASK_COST_OUT");
  if (task_cost_out && *task_cost_out) return measure_task_cost(task_cost_out);
  for (int round = 0; round < 2; ++round) {
    for (int team = 1; team <= 2; ++team) {
      atomic_int tasks_done = 0, loops_done = 0;
#pragma omp parallel num_threads(team)
      {
        const int first = omp_get_thread_num() == 0;
        if (first) {
          task_shapes(scale);
          atomic_store_explicit(&tasks_done, 1, memory_order_release);
        } else {
          wait_for(&tasks_done);
        }
        if (!first) wait_for(&loops_done);
#pragma omp for schedule(dynamic, 1) nowait
        for (int i = 0; i < 400 << scale; ++i) {
        }
#pragma omp for schedule(guided) nowait
        for (int i = 0; i < 400 << scale; ++i) {
        }
        if (first) atomic_store_explicit(&loops_done, 1, memory_order_release);
#pragma omp barrier
#pragma omp for schedule(static)
        for (int i = 0; i < 400 << scale; ++i) {
        }
      }
    }
  }
  return 0;
}
