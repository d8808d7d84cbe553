// Hand-built models for the diagnosis's tests (diagnosis_test.cpp, diagnosis_thresholds_test.cpp):
// the shapes each finding is about, with known work, span and critical path, and the input of
// analysis::diagnose with an explicit parallelism target (the machine's cores never decide a
// test).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/diagnosis.hpp"
#include "analysis/profile.hpp"
#include "model_fixtures.hpp"

namespace tasklens::fixtures {

// The model's diagnosis input, without fragments, task types, schedule, clipping or base.
inline analysis::DiagnosisInput diagnosis_input(const Model& m, const analysis::Profile& profile,
                                                double target) {
  analysis::DiagnosisInput in;
  in.model = &m;
  in.profile = &profile;
  in.target = target;
  return in;
}

// Serial code of `serial` (fragment group 1, "a.c:3-9" for the renderer) on thread 0, then
// `tasks` parallel tasks of `task` (site 1, group 2) on threads 0 and 1 in turn, then a join of
// 0 (group 1): W = serial + tasks x task, S = serial + task.
struct SerialThenTasks {
  Model m;
  analysis::Profile profile;
  std::vector<uint32_t> group_of = {0, 1, 2};  // per Model::fragments entry
  uint32_t groups = 3;
  SerialThenTasks(uint64_t serial = 600, uint64_t task = 100, int tasks = 4) {
    ModelBuilder b;
    const uint32_t site = b.add_site(SiteKind::Task);
    const uint32_t first = b.strand(serial);
    std::vector<uint32_t> ends;
    for (int k = 0; k < tasks; ++k) {
      b.open(NodeKind::Task, site);
      ends.push_back(b.strand(task, {first}, k % 2));
      b.close();
    }
    b.strand(0, ends);
    m = b.finish();
    m.fragments = {{0, 0}, {0x10, 0x20}, {0x30, 0}};
    for (model::Strand& s : m.strands) s.fragment = s.site == 0 ? 1 : 2;
    m.thread_count = 2;
    profile = analysis::compute_profile(m);
  }
  analysis::DiagnosisInput input(double target) const {
    analysis::DiagnosisInput in = diagnosis_input(m, profile, target);
    in.fragment_group = &group_of;
    in.fragment_groups = groups;
    return in;
  }
};

// A parallel region (site 1) entered `entries` times in a row, as a `parallel for` in a
// time-step loop: each entry holds `own` of its own (the team's start, own / 2, and end) around a
// loop (site 2) of two chunks of `chunk` on threads 0 and 1; `lead` of serial code comes first.
// W = lead + entries x (own + 2 chunk), S = lead + entries x (own + chunk); the region's own
// strands hold entries x own of the critical path, the loop's entries x chunk.
struct Entries {
  Model m;
  analysis::Profile profile;
  static constexpr uint32_t kRegion = 1, kLoop = 2;
  explicit Entries(uint64_t own, uint64_t entries = 100, uint64_t chunk = 100, uint64_t lead = 10,
                   double ticks_per_second = 1e9) {
    ModelBuilder b;
    b.add_site(SiteKind::Parallel);
    b.add_site(SiteKind::Loop);
    uint32_t prev = b.strand(lead);
    for (uint64_t i = 0; i < entries; ++i) {
      b.open(NodeKind::Parallel, kRegion);
      const uint32_t fork = b.strand(own / 2, {prev});
      b.open(NodeKind::Loop, kLoop);
      const uint32_t c0 = b.strand(chunk, {fork}, 0), c1 = b.strand(chunk, {fork}, 1);
      b.close();
      prev = b.strand(own - own / 2, {c0, c1});
      b.close();
    }
    b.strand(0, {prev});
    m = b.finish();
    m.thread_count = 2;
    m.ticks_per_second = ticks_per_second;
    profile = analysis::compute_profile(m);
  }
  analysis::DiagnosisInput input(double target) const {
    return diagnosis_input(m, profile, target);
  }
};

// One loop instance (site 1) of two static shares of 32 iterations each, `a` and `b`, on threads
// 0 and 1 after a serial strand of 10: analysis/loops.hpp's uneven static shares, imbalance
// |a - b| / (a + b).
struct StaticShares {
  Model m;
  analysis::Profile profile;
  static constexpr uint32_t kLoop = 1;
  StaticShares(uint64_t a, uint64_t b) {
    ModelBuilder mb;
    mb.add_site(SiteKind::Loop);
    const uint32_t before = mb.strand(10);
    const uint32_t instance = mb.new_instance();
    mb.open(NodeKind::Loop, kLoop, instance);
    const uint32_t sa = mb.strand(a, {before}, 0);
    mb.close();
    mb.open(NodeKind::Loop, kLoop, instance);
    const uint32_t sb = mb.strand(b, {before}, 1);
    mb.close();
    mb.strand(0, {sa, sb});
    m = mb.finish();
    m.divisible = {{sa, 32}, {sb, 32}};
    m.thread_count = 2;
    profile = analysis::compute_profile(m);
  }
};

// A parallel region (site 1) of two phases: one team-bound (its two implicit tasks one strand
// each, `bound_a` and `bound_b`, no construct inside) and one whose implicit tasks run a loop
// (site 2) of `loop_each` per thread, which is not: analysis/loops.hpp's team-bound work.
struct TeamRegion {
  Model m;
  analysis::Profile profile;
  static constexpr uint32_t kRegion = 1;
  TeamRegion(uint64_t bound_a, uint64_t bound_b, uint64_t loop_each) {
    ModelBuilder b;
    b.add_site(SiteKind::Parallel);
    const uint32_t loop = b.add_site(SiteKind::Loop);
    b.open(NodeKind::Parallel, kRegion);
    b.open(NodeKind::Phase);
    std::vector<uint32_t> ends;
    for (uint32_t t = 0; t < 2; ++t) {
      b.open(NodeKind::ImplicitTask);
      ends.push_back(b.strand(t == 0 ? bound_a : bound_b, {}, t));
      b.close();
    }
    b.close();
    if (loop_each > 0) {
      b.open(NodeKind::Phase);
      for (uint32_t t = 0; t < 2; ++t) {
        b.open(NodeKind::ImplicitTask);
        b.open(NodeKind::Loop, loop);
        b.strand(loop_each, {ends[t]}, t);
        b.close();
        b.close();
      }
      b.close();
    }
    b.close();
    m = b.finish();
    m.thread_count = 2;
    profile = analysis::compute_profile(m);
  }
};

// A recursion over two task sites (1 and 2) that nest in each other: call(n) is a task at site
// 1 (or 2 for the second child) of work 1, spawning call(n - 1) at site 1 and call(n - 2) at site
// 2, then a join strand of 1. analysis::find_recursions sees one recursion of both sites.
struct TwoSiteRecursion {
  Model m;
  analysis::Profile profile;
  static constexpr uint32_t kFirst = 1, kSecond = 2;
  explicit TwoSiteRecursion(uint32_t n) {
    ModelBuilder b;
    b.add_site(SiteKind::Task);
    b.add_site(SiteKind::Task);
    const uint32_t start = b.strand(1);
    const uint32_t end = call(b, kFirst, n, start);
    b.strand(1, {start, end});
    m = b.finish();
    m.thread_count = 2;
    profile = analysis::compute_profile(m);
  }

 private:
  static uint32_t call(ModelBuilder& b, uint32_t site, uint32_t n, uint32_t pred) {
    b.open(NodeKind::Task, site);
    const uint32_t first = b.strand(1, {pred});
    uint32_t last = first;
    if (n >= 2) {
      const uint32_t x = call(b, kFirst, n - 1, first);
      const uint32_t y = call(b, kSecond, n - 2, first);
      last = b.strand(1, {first, x, y});
    }
    b.close();
    return last;
  }
};

// A single (site 1) on thread 0 after `lead` of serial code: `own` of its own first, then
// `tasks` creations, each ending a strand of `gap`, of tasks (site 2) of `task` on thread 1, each
// after the previous one too when `chained` (a `depend` chain), then its taskwait (a strand of
// 0 joining them all). With task <= gap the path runs through every creating strand and the last
// task: W = lead + own + tasks x (gap + task), S = lead + own + tasks x gap + task.
struct Creator {
  Model m;
  analysis::Profile profile;
  static constexpr uint32_t kSingle = 1, kTask = 2;
  Creator(uint64_t tasks, uint64_t gap, uint64_t task, bool chained = false, uint64_t own = 0,
          uint64_t lead = 0) {
    ModelBuilder b;
    b.add_site(SiteKind::Single);
    b.add_site(SiteKind::Task);
    uint32_t prev = b.strand(lead);
    b.open(NodeKind::Single, kSingle);
    if (own > 0) prev = b.strand(own, {prev});
    std::vector<uint32_t> ends;
    for (uint64_t k = 0; k < tasks; ++k) {
      prev = b.strand(gap, {prev});
      b.open(NodeKind::Task, kTask);
      std::vector<uint32_t> preds = {prev};
      if (chained && !ends.empty()) preds.push_back(ends.back());
      ends.push_back(b.strand(task, preds, 1));
      b.close();
    }
    ends.push_back(b.strand(0, {prev}));
    const uint32_t join = b.strand(0, ends);
    b.close();
    b.strand(0, {join});
    m = b.finish();
    m.thread_count = 2;
    profile = analysis::compute_profile(m);
  }
};

// A task type's sizes as analysis::task_sizes gives them.
inline analysis::TypeSizes type_sizes(uint32_t site, uint64_t count, uint64_t tiny, uint64_t total,
                                      uint64_t max, uint64_t median = 0, bool chunks = false) {
  analysis::TypeSizes t;
  t.site = site;
  t.chunks = chunks;
  t.count = count;
  t.tiny = tiny;
  t.total = total;
  t.max = max;
  t.median = median;
  return t;
}

}  // namespace tasklens::fixtures
