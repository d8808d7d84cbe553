// The machine under the end-to-end tests, measured without tasklens: its clock rate, how far
// apart its CPUs run, and whether it is pausing now. Timing checks use these to tell a
// disturbed machine from a wrong figure (tests/e2e_util.hpp).
#pragma once

#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <thread>
#include <vector>

namespace tasklens::e2e {

// TSC ticks per second, measured once against the steady clock.
inline double tsc_ticks_per_second() {
  static const double rate = [] {
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t c0 = __rdtsc();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(30)) {
    }
    const uint64_t c1 = __rdtsc();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return static_cast<double>(c1 - c0) / s;
  }();
  return rate;
}

// How far apart the CPUs of this machine run now: the same fixed loop timed on each online CPU
// (up to 8) in turn, 3 rounds; the slowest time over the fastest, minus 1. Virtual CPUs can
// differ (seen: 40%, and which one was slower changed within minutes: they share physical cores
// with other guests), and then every time-based figure of a program on several threads moves
// with the CPUs its strands ran on. About 20 ms per CPU and round.
inline double cpu_speed_spread() {
  cpu_set_t saved;
  if (sched_getaffinity(0, sizeof saved, &saved) != 0) return 0;
  double fastest = 1e30, slowest = 0;
  for (int round = 0; round < 3; ++round)
    for (int cpu = 0; cpu < CPU_SETSIZE && cpu < 8; ++cpu) {
      if (!CPU_ISSET(cpu, &saved)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      if (sched_setaffinity(0, sizeof one, &one) != 0) continue;
      sched_yield();
      uint64_t x = 1;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 20000000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (x == 42) std::cerr << "";  // keeps the loop
      fastest = std::min(fastest, s);
      slowest = std::max(slowest, s);
    }
  sched_setaffinity(0, sizeof saved, &saved);
  return slowest > 0 ? slowest / fastest - 1 : 0;
}

// The share of time a thread that only reads the clock lost to gaps of over 2 us between two
// reads (the host pausing its virtual CPU, interrupts, other threads), over `ms` on each
// allowed CPU at once (up to 8); the largest share of any CPU. A quiet virtual machine of the
// project showed 2-3% (about 1,400 such gaps a second, most of a few microseconds); a run whose
// strands all stretch by tens of percent falls in a burst far above that.
// The largest machine_pause_fraction this test process has seen (each e2e test runs in its own
// process under ctest).
inline double& worst_pause_seen() {
  static double worst = 0;
  return worst;
}

// A timing check that still fails after its retries, in a test whose probes saw the machine lose
// this share of its time to pauses or more, cannot be judged here: the host stretched the
// strands by tens of percent, which no tolerance of a 2-core check can hold. Such a check skips
// and says so (a quiet machine, 2-3%, and one with bursts of 10-20% still judge it).
inline constexpr double kTooDisturbedToJudge = 0.30;

inline double machine_pause_fraction(int ms = 100) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 8; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  const double ticks_per_us = tsc_ticks_per_second() / 1e6;
  std::vector<double> lost(cpus.size(), 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cpus.size(); ++i)
    threads.emplace_back([&, i] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[i], &one);
      pthread_setaffinity_np(pthread_self(), sizeof one, &one);
      const uint64_t gap = static_cast<uint64_t>(2 * ticks_per_us);
      const uint64_t t0 = __rdtsc(), end = t0 + static_cast<uint64_t>(ms * 1000 * ticks_per_us);
      uint64_t prev = t0, gaps = 0;
      while (prev < end) {
        const uint64_t t = __rdtsc();
        if (t - prev > gap) gaps += t - prev;
        prev = t;
      }
      lost[i] = static_cast<double>(gaps) / static_cast<double>(prev - t0);
    });
  for (auto& t : threads) t.join();
  const double most = lost.empty() ? 0 : *std::max_element(lost.begin(), lost.end());
  worst_pause_seen() = std::max(worst_pause_seen(), most);
  return most;
}

// The reason to skip a timing check that failed (empty when it must fail): the machine was seen
// too disturbed to judge it (kTooDisturbedToJudge).
inline std::string too_disturbed_to_judge() {
  if (worst_pause_seen() < kTooDisturbedToJudge) return "";
  return "the machine lost up to " + std::to_string(static_cast<int>(100 * worst_pause_seen())) +
         "% of its time to pauses during this test's retries: its timing cannot be judged here";
}

// Before a timing check records again: waits, up to `max_seconds`, until the machine loses
// under `quiet` of its time to pauses (machine_pause_fraction), so that the retry does not
// fall into the same burst as the run it repeats. Says in the log (`tag`: the test's) what it
// saw when it had to wait (`tag` as false_sharing_shows_now's: "[ " tag "]" opens the line).
inline double wait_for_quiet_machine(const std::string& tag, double quiet = 0.05,
                                     double max_seconds = 10) {
  const auto start = std::chrono::steady_clock::now();
  double worst = 0, now = machine_pause_fraction();
  while (now >= quiet) {
    worst = std::max(worst, now);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited >= max_seconds) break;
    usleep(500000);
    now = machine_pause_fraction();
  }
  if (worst > 0) {
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto percent = [](double x) { return std::round(1000 * x) / 10; };
    std::cerr << "[ " << tag << "] the machine lost up to " << percent(worst)
              << "% of its time to pauses; waited " << std::round(10 * waited) / 10 << " s (now "
              << percent(now) << "%)\n";
  }
  return worst;
}

}  // namespace tasklens::e2e
