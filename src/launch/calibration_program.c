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
#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

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
