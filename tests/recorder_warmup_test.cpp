// Waking the CPUs before main(): every CPU the process may use is kept busy for the time asked,
// by threads that are gone when it returns; no time asked, no cost.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
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

double cpu_s() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int thread_count() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

TEST(RecorderWarmup, EveryCpuSpinsForTheTimeAskedThenTheThreadsAreGone) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int cpus = CPU_COUNT(&allowed);
  const int threads = thread_count();
  // Each CPU's spinner runs for most of the time asked. A shared machine may take a CPU away
  // for part of it (CI once saw 0.040 s of 0.100): up to three tries, judged by the best.
  double wall = 0, cpu = 0;
  for (int attempt = 0; attempt < 3 && cpu < 0.5 * 0.050 * cpus; ++attempt) {
    const double wall0 = now_s(), cpu0 = cpu_s();
    recorder::warm_up_cpus(50);
    wall = now_s() - wall0;
    cpu = cpu_s() - cpu0;
    EXPECT_GE(wall, 0.050);
    EXPECT_LT(wall, 2.0);
    EXPECT_EQ(thread_count(), threads);
  }
  EXPECT_GE(cpu, 0.5 * 0.050 * cpus) << cpus << " CPUs";
}

TEST(RecorderWarmup, NoTimeAskedCostsNothing) {
  const int threads = thread_count();
  const double wall0 = now_s();
  recorder::warm_up_cpus(0);
  EXPECT_LT(now_s() - wall0, 0.001);
  EXPECT_EQ(thread_count(), threads);
}

}  // namespace
}  // namespace tasklens
