// Waking the CPUs before main(): every CPU the process may use is kept busy for the time asked,
// by threads that are gone when it returns; no time asked, no thread.
#include <gtest/gtest.h>
#include <sched.h>
#include <time.h>

#include <fstream>
#include <string>

#include "recorder/warmup.hpp"

namespace tasklens {
namespace {

double now_s() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

int thread_count() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

// A spinner on every CPU the process may use (this thread on its own), each until the deadline:
// it returns no sooner than the time asked, and its threads are gone. (How much CPU time the
// spinners got is the machine's business: a loaded machine gives them less.)
TEST(RecorderWarmup, EveryCpuSpinsForTheTimeAskedThenTheThreadsAreGone) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int threads = thread_count();
  const double wall0 = now_s();
  const unsigned cpus = recorder::warm_up_cpus(50);
  EXPECT_GE(now_s() - wall0, 0.050);
  EXPECT_EQ(cpus, unsigned(CPU_COUNT(&allowed)));
  EXPECT_EQ(thread_count(), threads);
}

TEST(RecorderWarmup, NoTimeAskedCostsNothing) {
  const int threads = thread_count();
  EXPECT_EQ(recorder::warm_up_cpus(0), 0u) << "no spinner for no time";
  EXPECT_EQ(thread_count(), threads);
}

}  // namespace
}  // namespace tasklens
