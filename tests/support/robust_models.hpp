// Models for the robust span's tests (analysis/robust.hpp and its passes, stream_robust.hpp):
// timed strands of a few code fragments, with outliers put in by hand. Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/robust.hpp"
#include "model_fixtures.hpp"

namespace tasklens::fixtures {

using analysis::Clipping;
using model::Model;
using model::NodeKind;
using model::SiteKind;

// 1 GHz: a tick is a nanosecond, the 2 us floor is 2'000 ticks.
constexpr double kHz = 1e9;

inline void set_rate(Model& m, double hz = kHz) {
  m.metric = "tsc";
  m.metric_is_time = true;
  m.ticks_per_second = hz;
  m.tsc_per_second = hz;
}

// `rounds` fork/join rounds of `width` tasks in series (a parallel loop run `rounds` times).
// Task strands run fragment 1 on threads 0..width-1; round r's tasks start together at
// r * 10 ms. Fork and join strands (work 0) run fragment 2. works[i] is task strand i's work
// (round-major); task_strand[i] receives its strand id.
inline Model rounds_model(uint32_t rounds, uint32_t width, const std::vector<uint64_t>& works,
                          std::vector<uint32_t>* task_strand) {
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  std::vector<uint32_t> tasks;
  uint32_t prev = b.strand(0);
  for (uint32_t r = 0; r < rounds; ++r) {
    const uint32_t fork = b.strand(0, {prev});
    std::vector<uint32_t> ends{fork};
    for (uint32_t t = 0; t < width; ++t) {
      b.open(NodeKind::Task, site);
      ends.push_back(b.strand(works[r * width + t], {fork}));
      tasks.push_back(ends.back());
      b.close();
    }
    prev = b.strand(0, ends);
  }
  Model m = b.finish();
  set_rate(m);
  m.fragments = {{0, 0}, {0x100, 0x200}, {0x300, 0x400}};
  for (model::Strand& s : m.strands) s.fragment = 2;
  for (uint32_t i = 0; i < tasks.size(); ++i) {
    const uint64_t start = uint64_t{10'000'000} * (i / width) + 1000;
    fixtures::set_time(m, tasks[i], i % width, start, start + works[i]);
    m.strands[tasks[i]].fragment = 1;
  }
  if (task_strand) *task_strand = tasks;
  return m;
}

// Task works from `base` to 1.1 x base, varied deterministically (1 to 1.1 us by default).
inline std::vector<uint64_t> usual_works(size_t n, uint64_t base = 1000) {
  std::vector<uint64_t> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = base + (i * 37 % 11) * (base / 100);
  return w;
}

inline uint64_t median_of(std::vector<uint64_t> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

inline void disturb(Model& m, uint32_t s, uint64_t work) {
  m.strands[s].work = work;
  m.strands[s].end = m.strands[s].start + work;
}

// Random DAG models whose strands run a few fragments with at least 200 strands each; works
// from 1 to 1000 ticks at 1 MHz (a 50-tick floor), each strand on one of 4 threads at a random
// time.
inline Model random_timed_model(std::mt19937_64& rng) {
  fixtures::RandomModelOptions opt;
  opt.min_strands = 900;
  opt.max_strands = 1200;
  opt.max_work = 1000;
  Model m = fixtures::random_model(rng, opt);
  set_rate(m, 1e6);
  m.fragments = {{0, 0}, {1, 2}, {3, 4}, {5, 6}};
  std::uniform_int_distribution<uint64_t> when(1, 1'000'000);
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    m.strands[s].fragment = 1 + s % 3;
    const uint64_t start = when(rng);
    fixtures::set_time(m, s, s % 4, start, start + m.strands[s].work);
  }
  return m;
}

inline bool same_clipping(const Clipping& a, const Clipping& b) {
  if (a.tested != b.tested || a.floor != b.floor || a.clipped_work != b.clipped_work ||
      a.strands.size() != b.strands.size())
    return false;
  for (size_t i = 0; i < a.strands.size(); ++i) {
    const analysis::ClippedStrand &x = a.strands[i], &y = b.strands[i];
    if (x.strand != y.strand || x.work_raw != y.work_raw || x.work_clipped != y.work_clipped ||
        x.fragment_quantile != y.fragment_quantile || x.fragment_samples != y.fragment_samples ||
        x.simultaneous != y.simultaneous || x.thread != y.thread || x.begin != y.begin ||
        x.end != y.end)
      return false;
  }
  return true;
}

}  // namespace tasklens::fixtures
