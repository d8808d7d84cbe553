// tasklens-tbb-calibration: what a oneTBB task costs as a whole, the counterpart for oneTBB of
// calibration_program.c's task cost. `tasklens record` runs it after a oneTBB program, without
// the recorder (src/launch/runtime_calibration.cpp, measure_task_cost), with
// TASKLENS_TASK_COST_OUT naming the file to write.
//
// It times an empty-task recursion in the idiom of oneTBB's task_group programs (each call makes
// a task_group, runs one half as a task, calls the other and waits: one task per call) on one
// thread (a task_arena of one slot), against the same recursion as plain calls (its serial
// elision), and writes the difference per task: the tasking overhead such a program pays per
// task (the group, the task's allocation, its spawn, its run and the wait), the figure the report,
// advise, tasks and predict charge per task.
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace {

void recurse(int n) {
  if (n < 2) return;
  tbb::task_group group;
  group.run([n] { recurse(n - 1); });
  recurse(n - 2);
  group.wait();
}

// The serial elision of recurse(): the same calls, no tasks. The empty asm keeps the compiler
// from folding the recursion away, as a real task body's side effects would.
__attribute__((noinline)) void recurse_calls(int n) {
  __asm__ volatile("" ::: "memory");
  if (n < 2) return;
  recurse_calls(n - 1);
  recurse_calls(n - 2);
}

double now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

// Tasks made by recurse(n): one per call with n >= 2.
long tasks_of(int n) { return n < 2 ? 0 : 1 + tasks_of(n - 1) + tasks_of(n - 2); }

}  // namespace

int main() {
  const char* out_path = std::getenv("TASKLENS_TASK_COST_OUT");
  if (!out_path || !*out_path) {
    std::fprintf(stderr,
                 "tasklens-tbb-calibration: tasklens record runs this with "
                 "TASKLENS_TASK_COST_OUT set\n");
    return 2;
  }
  // The least time of many short rounds of each (a pause of the machine only lengthens a round,
  // so the least is the undisturbed one), interleaved so that both see the same machine.
  constexpr int kRounds = 41, kDepth = 18;
  double best_tasks = 1e300, best_calls = 1e300;
  tbb::task_arena one_thread(1);
  one_thread.execute([] { recurse(8); });  // oneTBB's start-up (its first call) is not a task's
  for (int round = 0; round < kRounds; ++round) {
    const double t0 = now_ns();
    recurse_calls(kDepth);
    const double t1 = now_ns();
    if (t1 - t0 < best_calls) best_calls = t1 - t0;
    one_thread.execute([&best_tasks] {
      const double s = now_ns();
      recurse(kDepth);
      const double e = now_ns();
      if (e - s < best_tasks) best_tasks = e - s;
    });
  }
  const long tasks = tasks_of(kDepth);
  const double per_task = best_tasks > best_calls ? (best_tasks - best_calls) / double(tasks) : 0;
  std::FILE* f = std::fopen(out_path, "w");
  if (!f) return 1;
  std::fprintf(f, "task_cost_ns %.3f tasks %ld rounds %d\n", per_task, tasks, kRounds);
  return std::fclose(f) == 0 ? 0 : 1;
}
