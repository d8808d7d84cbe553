// The cut-off adviser (analysis/cutoff.hpp): recursions found, the span with a cut-off against
// fib's analytic one and against brute force (explicit edges, relaxed until stable) on random
// recursive programs, the recommended depth against the target.
#include "analysis/cutoff.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "analysis/profile.hpp"
#include "analysis/tasks.hpp"
#include "model_fixtures.hpp"

namespace tasklens {
namespace {

using analysis::CutoffVerdict;
using analysis::Recursion;
using fixtures::ModelBuilder;
using model::Model;
using model::NodeKind;
using model::SiteKind;

// fib_model's work and span (model_fixtures.hpp), and the span of one of its calls when the
// tasks deeper than `cut` run as plain calls (a call at depth `d`).
uint64_t fib_work(uint32_t n) { return n < 2 ? 1 : 2 + fib_work(n - 1) + fib_work(n - 2); }
uint64_t fib_calls(uint32_t n) { return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2); }
uint64_t fib_span_cut(uint32_t n, uint32_t d, uint32_t cut) {
  if (n < 2) return 1;
  if (d >= cut) return fib_work(n);  // its children are inlined: the whole call is serial
  return 2 + fib_span_cut(n - 1, d + 1, cut);
}

TEST(Cutoff, FibIsOneRecursionAsDeepAsItsArgument) {
  uint32_t site = 0;
  const Model m = fixtures::fib_model(10, &site);
  const std::vector<Recursion> r = analysis::find_recursions(m);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].sites, std::vector<uint32_t>{site});
  EXPECT_EQ(r[0].max_depth, 10u);
  EXPECT_EQ(r[0].tasks, fib_calls(10));  // a task per call
}

TEST(Cutoff, FibSpanAtEveryDepthIsTheAnalyticOne) {
  const uint32_t n = 12;
  const Model m = fixtures::fib_model(n);
  const std::vector<Recursion> r = analysis::find_recursions(m);
  ASSERT_EQ(r.size(), 1u);
  // The scope is the top call's task (the only task of depth 1): the program's first and last
  // strands are outside it.
  const uint64_t work = fib_work(n);
  for (uint32_t cut = 1; cut <= n; ++cut) {
    SCOPED_TRACE("cut-off at depth " + std::to_string(cut));
    const analysis::CutoffLevel l = analysis::evaluate_cutoff(m, r[0], cut, 0);
    EXPECT_EQ(l.span, fib_span_cut(n, 1, cut));
    EXPECT_DOUBLE_EQ(l.parallelism, double(work) / double(l.span));
    EXPECT_EQ(l.burdened_span, l.span);  // no overhead given
    // Kept: the calls of depth <= cut (2^d of them at depth d while n - d >= 1 ...): counted.
    uint64_t kept = 0, leaves = 0;
    auto count = [&](auto&& self, uint32_t k, uint32_t d) -> void {
      if (d > cut) return;
      ++kept;
      if (d == cut) ++leaves;
      if (k >= 2) {
        self(self, k - 1, d + 1);
        self(self, k - 2, d + 1);
      }
    };
    count(count, n, 1);
    EXPECT_EQ(l.tasks_kept, kept);
    EXPECT_EQ(l.leaf_tasks, leaves);
  }
  // At its full depth the scope's span is the recording's (the program's, less its two strands).
  EXPECT_EQ(analysis::evaluate_cutoff(m, r[0], n, 0).span, analysis::longest_path(m) - 2);
  EXPECT_EQ(m.nodes[r[0].scope].kind, NodeKind::Task);
}

// A random recursive program with known creators: every task creates 0-3 children of the
// recursion (or, sometimes, of another task site), each from the strand running then, which
// sometimes goes on in a new strand; it waits for its children or not; siblings sometimes depend
// on each other. `calls` records each recursion task's creator, own last strand and depth.
struct Call {
  uint32_t first, creator, last, depth;
  uint32_t parent = model::kNone;  // the call that created it (kNone: the program's code)
};
struct RandomProgram {
  Model model;
  std::vector<Call> calls;
  std::vector<uint32_t> task_firsts;    // every task's first strand (burden)
  std::vector<uint32_t> first_depth;    // its recursion depth, 0 if not the recursion's
  std::vector<uint32_t> task_creators;  // the strand that created it
  uint32_t scope_lo = 0, scope_hi = 0;  // the recursion's scope's strands
};

RandomProgram random_program(std::mt19937_64& rng) {
  ModelBuilder b;
  RandomProgram p;
  const uint32_t rec_a = b.add_site(SiteKind::Task), rec_b = b.add_site(SiteKind::Task),
                 other = b.add_site(SiteKind::Task);
  auto pick = [&](uint32_t k) { return std::uniform_int_distribution<uint32_t>(0, k - 1)(rng); };
  auto work = [&] { return std::uniform_int_distribution<uint64_t>(0, 50)(rng); };
  std::vector<uint32_t> ends;  // strands the program's last strand joins (unwaited tasks)
  uint32_t budget = 120;
  // Returns the task's own last strand.
  auto task = [&](auto&& self, uint32_t creator, uint32_t depth, bool member, uint32_t dep,
                  uint32_t this_call) -> uint32_t {
    // The recursion's two sites alternate with the depth (like fib's two spawns, they nest in
    // each other); the other site's tasks are leaves, created by the recursion, not part of it.
    b.open(NodeKind::Task, member ? (depth % 2 ? rec_a : rec_b) : other);
    std::vector<uint32_t> first_preds{creator};
    if (dep != model::kNone) first_preds.push_back(dep);
    const uint32_t first = b.strand(work(), first_preds);
    p.task_firsts.push_back(first);
    p.first_depth.push_back(member ? depth : 0);
    p.task_creators.push_back(creator);
    uint32_t current = first;
    std::vector<uint32_t> children;
    const uint32_t kids = member && budget > 3 && depth < 7 ? pick(4) : 0;
    for (uint32_t k = 0; k < kids && budget > 3; ++k) {
      --budget;
      const bool child_member = pick(5) != 0;
      const uint32_t sibling_dep =
          !children.empty() && pick(4) == 0 ? children.back() : model::kNone;
      const size_t call_index = p.calls.size();
      if (child_member) p.calls.push_back({0, current, 0, depth + 1, this_call});
      const uint32_t child_first = b.strand_count();
      const uint32_t last = self(self, current, depth + 1, child_member, sibling_dep,
                                 child_member ? static_cast<uint32_t>(call_index) : model::kNone);
      if (child_member) {
        p.calls[call_index].first = child_first;
        p.calls[call_index].last = last;
      }
      children.push_back(last);
      if (pick(2)) current = b.strand(work(), {current});  // the task goes on in a new strand
    }
    uint32_t last = current;
    if (!children.empty()) {
      if (pick(3)) {  // a taskwait
        std::vector<uint32_t> preds{current};
        preds.insert(preds.end(), children.begin(), children.end());
        last = b.strand(work(), preds);
      } else {
        ends.insert(ends.end(), children.begin(), children.end());
        last = b.strand(work(), {current});
      }
    }
    b.close();
    return last;
  };
  // One top call (the scope is its task) or two (the scope is the program's root).
  const uint32_t start = b.strand(work());
  const uint32_t tops = 1 + pick(2);
  for (uint32_t t = 0; t < tops; ++t) {
    const size_t root_call = p.calls.size();
    p.calls.push_back({0, start, 0, 1});
    p.calls[root_call].first = b.strand_count();
    p.calls[root_call].last =
        task(task, start, 1, true, model::kNone, static_cast<uint32_t>(root_call));
    ends.push_back(p.calls[root_call].last);
  }
  ends.push_back(start);
  b.strand(work(), ends);
  p.model = b.finish();
  if (tops == 1) {
    p.scope_lo = p.calls[0].first;
    p.scope_hi = p.calls[0].last + 1;
  } else {
    p.scope_lo = 0;
    p.scope_hi = static_cast<uint32_t>(p.model.strands.size());
  }
  return p;
}

// The program with a cut-off, by explicit edges: an inlined call's last strand precedes every
// successor of its creator that comes after it; then the longest path by relaxation, within the
// recursion's scope (random_program's scope_lo .. scope_hi).
// `group` > 1: the calls of depth `cut` made `group` at a time (evaluate_group_cutoff): of
// those one call (or the program) makes, each one not first of its group starts after the one
// before it has returned (its strands, and those of the calls inlined under it), and is not made;
// the strand that created it, when it created no other task, runs in the group's task right
// before the call: its work moves to the call's first strand.
uint64_t brute_cut_span(const RandomProgram& p, uint32_t cut, uint64_t per_task,
                        uint64_t min_work = 0, uint32_t group = 1) {
  const Model& m = p.model;
  const size_t n = m.strands.size();
  // A task of the recursion is made when its depth is `cut` or less and its subtree (its
  // strands, its children's included) does `min_work` or more; others always.
  std::vector<uint64_t> subtree(n, 0);  // by first strand
  for (const model::Node& node : m.nodes)
    if (node.kind == NodeKind::Task)
      for (uint32_t s = node.strand_begin; s < node.strand_end; ++s)
        subtree[node.strand_begin] += m.strands[s].work;
  auto kept = [&](uint32_t d, uint32_t first) {
    return d == 0 || (d <= cut && subtree[first] >= min_work);
  };
  const uint32_t lo = p.scope_lo, hi = p.scope_hi;
  std::vector<std::vector<uint32_t>> preds(n);
  for (uint32_t s = 0; s < n; ++s)
    for (uint32_t q : m.preds_of(s)) preds[s].push_back(q);
  for (const Call& c : p.calls) {
    if (kept(c.depth, c.first)) continue;
    for (uint32_t x = c.last + 1; x < n; ++x)
      for (uint32_t q : m.preds_of(x))
        if (q == c.creator) preds[x].push_back(c.last);
  }
  std::vector<uint8_t> grouped(n, 0);  // by first strand: a call run in its group's task
  if (group > 1) {
    std::vector<uint32_t> made(p.calls.size() + 1, 0), previous(p.calls.size() + 1, model::kNone);
    for (uint32_t i = 0; i < p.calls.size(); ++i) {
      const Call& c = p.calls[i];
      if (c.depth != cut) continue;
      const size_t key = c.parent == model::kNone ? p.calls.size() : c.parent;
      if (made[key]++ % group != 0) {
        grouped[c.first] = 1;
        const Call& before = p.calls[previous[key]];
        for (uint32_t x = before.first; x <= before.last; ++x) {
          // Its own strands and those of the calls under it (all inlined: deeper than `cut`).
          bool under = x == before.last;
          for (const Call& d : p.calls)
            under = under || (d.last == x && d.first >= before.first && d.last <= before.last);
          if (under) preds[c.first].push_back(x);
        }
      }
      previous[key] = i;
    }
  }
  std::vector<uint64_t> weight(n);
  for (uint32_t s = 0; s < n; ++s) weight[s] = m.strands[s].work;
  std::vector<uint32_t> created(n, 0);  // tasks each strand created
  for (uint32_t c : p.task_creators) ++created[c];
  for (const Call& c : p.calls)
    if (grouped[c.first] && created[c.creator] == 1 && c.creator >= lo) {
      weight[c.first] += weight[c.creator];
      weight[c.creator] = 0;
    }
  for (size_t i = 0; i < p.task_firsts.size(); ++i)
    if (kept(p.first_depth[i], p.task_firsts[i]) && !grouped[p.task_firsts[i]])
      weight[p.task_firsts[i]] += per_task;
  std::vector<uint64_t> dist(weight);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t s = lo; s < hi; ++s)
      for (uint32_t q : preds[s])
        if (q >= lo && q < hi && dist[q] + weight[s] > dist[s]) {
          dist[s] = dist[q] + weight[s];
          changed = true;
        }
  }
  uint64_t best = 0;
  for (uint32_t s = lo; s < hi; ++s) best = std::max(best, dist[s]);
  return best;
}

TEST(Cutoff, SpanWithACutoffMatchesBruteForceOnRandomRecursivePrograms) {
  std::mt19937_64 rng(20261127);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const RandomProgram p = random_program(rng);
    ASSERT_EQ(fixtures::check_model(p.model), "");
    const std::vector<Recursion> r = analysis::find_recursions(p.model);
    if (r.empty()) continue;
    ASSERT_EQ(r.size(), 1u) << "the two sites nest in each other, so they are one recursion";
    uint32_t deepest = 0;
    for (const Call& c : p.calls) deepest = std::max(deepest, c.depth);
    EXPECT_EQ(r[0].max_depth, deepest);
    for (uint32_t cut = 1; cut <= deepest; ++cut) {
      for (uint64_t per_task : {uint64_t{0}, uint64_t{7}}) {
        SCOPED_TRACE("trial " + std::to_string(trial) + ", cut " + std::to_string(cut));
        const analysis::CutoffLevel l = analysis::evaluate_cutoff(p.model, r[0], cut, per_task);
        EXPECT_EQ(l.span, brute_cut_span(p, cut, 0));
        EXPECT_EQ(l.burdened_span, brute_cut_span(p, cut, per_task));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 300);
}

// A size cut-off (a task only for a call whose subtree does at least so much, the others
// inlined, at every depth): the same brute force, and the tasks it makes counted.
TEST(Cutoff, ASizeCutoffMatchesBruteForceOnRandomRecursivePrograms) {
  std::mt19937_64 rng(20261129);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const RandomProgram p = random_program(rng);
    const std::vector<Recursion> r = analysis::find_recursions(p.model);
    if (r.empty()) continue;
    for (uint64_t min_work : {uint64_t{1}, uint64_t{40}, uint64_t{150}, uint64_t{600}}) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", size " + std::to_string(min_work));
      const analysis::CutoffLevel l = analysis::evaluate_size_cutoff(p.model, r[0], min_work, 5);
      EXPECT_EQ(l.min_work, min_work);
      EXPECT_EQ(l.span, brute_cut_span(p, r[0].max_depth, 0, min_work));
      EXPECT_EQ(l.burdened_span, brute_cut_span(p, r[0].max_depth, 5, min_work));
      uint64_t kept = 0;
      for (size_t i = 0; i < p.task_firsts.size(); ++i) {
        if (p.first_depth[i] == 0) continue;
        uint64_t sub = 0;
        for (const model::Node& node : p.model.nodes)
          if (node.kind == NodeKind::Task && node.strand_begin == p.task_firsts[i])
            for (uint32_t s = node.strand_begin; s < node.strand_end; ++s)
              sub += p.model.strands[s].work;
        kept += sub >= min_work;
      }
      EXPECT_EQ(l.tasks_kept, kept);
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

// A depth cut-off with its deepest tasks made several calls at a time: the same brute force, and
// the tasks it makes counted (those above the depth, and one per group).
TEST(Cutoff, ADepthMadeSeveralCallsATaskMatchesBruteForceOnRandomRecursivePrograms) {
  std::mt19937_64 rng(20261203);
  int checked = 0, changed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const RandomProgram p = random_program(rng);
    const std::vector<Recursion> r = analysis::find_recursions(p.model);
    if (r.empty()) continue;
    for (uint32_t cut = 1; cut <= r[0].max_depth; ++cut)
      for (uint32_t group : {2u, 3u}) {
        SCOPED_TRACE("trial " + std::to_string(trial) + ", cut " + std::to_string(cut) +
                     ", group " + std::to_string(group));
        const analysis::CutoffLevel l =
            analysis::evaluate_group_cutoff(p.model, r[0], cut, group, 5);
        EXPECT_EQ(l.group, group);
        EXPECT_EQ(l.span, brute_cut_span(p, cut, 0, 0, group));
        EXPECT_EQ(l.burdened_span, brute_cut_span(p, cut, 5, 0, group));
        changed += l.span != brute_cut_span(p, cut, 0);
        uint64_t kept = 0, groups = 0;
        std::vector<uint32_t> made(p.calls.size() + 1, 0);
        for (const Call& c : p.calls) {
          kept += c.depth < cut;
          if (c.depth == cut)
            groups += made[c.parent == model::kNone ? p.calls.size() : c.parent]++ % group == 0;
        }
        EXPECT_EQ(l.tasks_kept, kept + groups);
        EXPECT_EQ(l.leaf_tasks, groups);
        ++checked;
      }
  }
  EXPECT_GT(checked, 300);
  EXPECT_GT(changed, 30) << "the groups must lengthen some spans, or the test checks nothing";
}

// A search whose root makes many calls that mostly do nothing (UTS's binomial tree): depth 1
// keeps all of them, tiny; the same depth with its calls made many at a time reaches the target
// with far fewer tasks. fib's deepest tasks at its advised depth are large: no grouping.
TEST(Cutoff, WhereTheAdvisedDepthsTasksAreTinyTheyAreMadeSeveralCallsATask) {
  const Model m = fixtures::wide_search_model();
  ASSERT_EQ(fixtures::check_model(m), "");
  const Recursion r = analysis::find_recursions(m).at(0);
  ASSERT_EQ(r.max_depth, 3u);
  const analysis::CutoffAdvice a = analysis::advise_cutoff(m, r, 8, 1);
  ASSERT_EQ(a.recommended, 2u);
  const analysis::CutoffLevel advised = analysis::evaluate_cutoff(m, r, 2, 1);
  EXPECT_EQ(advised.leaf_tasks, 512u);
  EXPECT_LT(advised.leaf_median_work, analysis::kTinyTaskCosts * 1);
  EXPECT_TRUE(a.depth_helps);
  // Groups of g calls: the largest power of two whose burdened parallelism reaches 8. The work
  // is 13,121; a group of 32 holding a call with calls under it spans 31 x 10 + 1,010 (about
  // 9.9), one of 64 spans 63 x 10 + 1,010 (8.0 without the overhead, less with it).
  const analysis::CutoffLevel& g = a.group_cutoff;
  ASSERT_EQ(g.group, 32u);
  EXPECT_EQ(g.depth, 2u);
  EXPECT_GE(g.burdened_parallelism, 8);
  EXPECT_EQ(g.tasks_kept, 1 + 512 / g.group);
  EXPECT_LT(analysis::evaluate_group_cutoff(m, r, 2, 2 * g.group, 1).burdened_parallelism, 8);
  const analysis::CutoffLevel again = analysis::evaluate_group_cutoff(m, r, 2, g.group, 1);
  EXPECT_EQ(g.span, again.span);
  EXPECT_EQ(g.burdened_span, again.burdened_span);
  // Without a tasking overhead nothing is tiny.
  EXPECT_EQ(analysis::advise_cutoff(m, r, 8, 0).group_cutoff.group, 0u);
  const Model fib = fixtures::fib_model(16);
  EXPECT_EQ(
      analysis::advise_cutoff(fib, analysis::find_recursions(fib).at(0), 16, 1).group_cutoff.group,
      0u);
}

// The depth for the recorded threads (CutoffMachine) against brute force on fib(16): every
// depth's ((P - 1) span + tasks c) / P from the analytic span and the counted tasks, the fastest
// the shallowest whose W / P + that is within kSameTime of the least; more cost per task, a
// shallower (or the same) depth; 3 threads as well as 2.
TEST(Cutoff, TheFastestDepthOnTheRecordedThreadsIsTheLeastPredictedTime) {
  const uint32_t n = 16;
  const Model m = fixtures::fib_model(n);
  const Recursion r = analysis::find_recursions(m).at(0);
  const double work = double(fib_work(n));
  uint32_t last = n + 1;
  for (uint32_t threads : {2u, 3u})
    for (uint64_t c : {0u, 1u, 4u, 20u, 100u, 1000u}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(c) + " per task");
      const analysis::CutoffAdvice a = analysis::advise_cutoff(m, r, 16, 0, 2, {threads, c});
      if (c == 0) {  // nothing to predict from
        EXPECT_EQ(a.fastest, 0u);
        EXPECT_EQ(a.machine.threads, 0u);
        continue;
      }
      std::vector<double> cost(n + 1);
      double least = 1e300;
      for (uint32_t d = 1; d <= n; ++d) {
        const uint64_t kept = analysis::evaluate_cutoff(m, r, d, 0).tasks_kept;
        cost[d] = (double(fib_span_cut(n, 1, d)) * (threads - 1) + double(kept * c)) / threads;
        least = std::min(least, cost[d]);
      }
      uint32_t fastest = 0, least_depth = 0;
      for (uint32_t d = n; d >= 1; --d) {
        if (work / threads + cost[d] <= (work / threads + least) * analysis::kSameTime) fastest = d;
        if (uint64_t(cost[d]) == uint64_t(least)) least_depth = d;  // the shallowest of the least
      }
      EXPECT_EQ(a.fastest, fastest);
      EXPECT_EQ(a.least_cost, least_depth);
      bool listed = false, least_listed = false;
      for (const analysis::CutoffLevel& l : a.levels) {
        listed = listed || l.depth == a.fastest;
        least_listed = least_listed || l.depth == a.least_cost;
        EXPECT_EQ(l.machine_cost, uint64_t(cost[l.depth])) << "depth " << l.depth;
      }
      EXPECT_TRUE(listed);
      EXPECT_TRUE(least_listed);
      EXPECT_EQ(a.recorded.machine_cost, uint64_t(cost[n]));
      if (threads == 2) {
        EXPECT_LE(a.fastest, last);
        last = a.fastest;
      }
      // The target's advice does not move.
      EXPECT_EQ(a.recommended, analysis::advise_cutoff(m, r, 16, 0).recommended);
    }
  // One thread: fewer tasks is always faster; nothing predicted.
  EXPECT_EQ(analysis::advise_cutoff(m, r, 16, 0, 2, {1, 50}).fastest, 0u);
}

// Deeper than the search visits one by one (41 levels, the unbalanced tree): the depth it finds
// is within kSameTime of the best of every depth, whatever the cost per task.
TEST(Cutoff, TheFastestDepthOfADeepTreeIsWithinTheMarginOfEveryDepths) {
  const Model m = fixtures::unbalanced_tree_model();
  const Recursion r = analysis::find_recursions(m).at(0);
  for (uint64_t c : {1u, 3u, 10u, 30u, 100u}) {
    SCOPED_TRACE(std::to_string(c) + " per task");
    const analysis::CutoffAdvice a = analysis::advise_cutoff(m, r, 8, 2, 2, {2, c});
    ASSERT_GT(a.fastest, 0u);
    double best = 1e300, found = 0;
    for (uint32_t d = 1; d <= r.max_depth; ++d) {
      const analysis::CutoffLevel l = analysis::evaluate_cutoff(m, r, d, 0);
      const double t = double(a.work) / 2 + (double(l.span) + double(l.tasks_kept * c)) / 2;
      best = std::min(best, t);
      if (d == a.fastest) found = t;
    }
    EXPECT_LE(found, best * analysis::kSameTime);
  }
}

// The cost per task on the recorded threads: the run's loss per task, never less than the
// one-thread overhead; none from one thread or a run whose time is not known.
TEST(Cutoff, TheRecordedThreadsCostPerTaskIsTheRunsLossAtLeastTheOverhead) {
  analysis::RunLoss loss;
  loss.threads = 2;
  loss.elapsed = 1000;
  loss.per_task = 100;
  EXPECT_EQ(analysis::cutoff_machine(loss, 48).per_task, 100u);
  EXPECT_EQ(analysis::cutoff_machine(loss, 48).threads, 2u);
  loss.per_task = 10;
  EXPECT_EQ(analysis::cutoff_machine(loss, 48).per_task, 48u);
  loss.per_task = 0;
  EXPECT_EQ(analysis::cutoff_machine(loss, 0).threads, 0u);  // nothing to charge
  loss.per_task = 100;
  loss.threads = 1;
  EXPECT_EQ(analysis::cutoff_machine(loss, 48).threads, 0u);
  loss.threads = 2;
  loss.elapsed = 0;
  EXPECT_EQ(analysis::cutoff_machine(loss, 48).threads, 0u);
}

// fixtures::unbalanced_tree_model: its tasks are spread over its levels, so the depth that keeps
// its parallelism keeps nearly all of them; a size cut-off (the leaves and small subtrees
// inlined) keeps it with far fewer.
TEST(Cutoff, WhereNoDepthHelpsASizeCutoffIsProposed) {
  const Model m = fixtures::unbalanced_tree_model();
  const Recursion r = analysis::find_recursions(m).at(0);
  ASSERT_EQ(r.tasks, 2277u);
  ASSERT_EQ(r.max_depth, 41u);
  const analysis::CutoffAdvice a = analysis::advise_cutoff(m, r, 8, 2);
  ASSERT_EQ(a.verdict, CutoffVerdict::Reached);
  // Depth 22 (1981 tasks) is the first reaching 8 burdened; work >= 16 reaches it with 327,
  // >= 32 does not (6.9).
  EXPECT_EQ(a.recommended, 22u);
  EXPECT_EQ(a.size_cutoff.min_work, 16u);
  EXPECT_EQ(a.size_cutoff.tasks_kept, 327u);
  const analysis::CutoffLevel advised = analysis::evaluate_cutoff(m, r, a.recommended, 2);
  EXPECT_GT(advised.tasks_kept * 2, r.tasks) << "depth " << a.recommended;
  EXPECT_FALSE(a.depth_helps);
  ASSERT_GT(a.size_cutoff.min_work, 0u);
  EXPECT_LT(a.size_cutoff.tasks_kept * 2, advised.tasks_kept);
  EXPECT_GE(a.size_cutoff.burdened_parallelism, 8);
  // Its figures are those of the program it describes; twice its size reaches less.
  const analysis::CutoffLevel again =
      analysis::evaluate_size_cutoff(m, r, a.size_cutoff.min_work, 2);
  EXPECT_EQ(a.size_cutoff.span, again.span);
  EXPECT_EQ(a.size_cutoff.burdened_span, again.burdened_span);
  EXPECT_EQ(a.size_cutoff.tasks_kept, again.tasks_kept);
  EXPECT_LT(analysis::evaluate_size_cutoff(m, r, 2 * a.size_cutoff.min_work, 2).parallelism, 8);
  // fib's tasks are at its bottom: a depth cut-off removes most of them, nothing else is said.
  const Model fib = fixtures::fib_model(16);
  const analysis::CutoffAdvice f =
      analysis::advise_cutoff(fib, analysis::find_recursions(fib).at(0), 16, 0);
  EXPECT_TRUE(f.depth_helps);
  EXPECT_EQ(f.size_cutoff.min_work, 0u);
}

TEST(Cutoff, ATaskLoopIsNoRecursion) {
  const Model m = fixtures::fork_join_model({5, 5, 5, 5});
  EXPECT_TRUE(analysis::find_recursions(m).empty());
}

TEST(Cutoff, RecommendsTheShallowestDepthReachingTheTarget) {
  const uint32_t n = 16;
  const Model m = fixtures::fib_model(n);
  const Recursion r = analysis::find_recursions(m).at(0);
  const uint64_t work = fib_work(n);
  for (double target : {4.0, 16.0, 40.0}) {
    SCOPED_TRACE("target " + std::to_string(target));
    const analysis::CutoffAdvice a = analysis::advise_cutoff(m, r, target, 0);
    EXPECT_EQ(a.verdict, CutoffVerdict::Reached);
    uint32_t shallowest = n + 1;
    for (uint32_t d = n; d >= 1; --d)
      if (double(work) / double(fib_span_cut(n, 1, d)) >= target) shallowest = d;
    EXPECT_EQ(a.recommended, shallowest);
    bool listed = false;
    for (const analysis::CutoffLevel& l : a.levels) listed = listed || l.depth == a.recommended;
    EXPECT_TRUE(listed);
    EXPECT_EQ(a.recorded.depth, n);
  }
  // Beyond what the recording holds: the deepest is no help.
  const analysis::CutoffAdvice none = analysis::advise_cutoff(m, r, 1e6, 0);
  EXPECT_EQ(none.verdict, CutoffVerdict::NotReached);
}

TEST(Cutoff, TheOverheadOfManyTasksMovesTheRecommendationShallowerOrSaysSo) {
  const uint32_t n = 16;
  const Model m = fixtures::fib_model(n);
  const Recursion r = analysis::find_recursions(m).at(0);
  // With each task costing 3 units, the deep levels' tasks (work 1 or 2) cost more than they do.
  const analysis::CutoffAdvice a = analysis::advise_cutoff(m, r, 16, 3);
  ASSERT_NE(a.verdict, CutoffVerdict::NotReached);
  const analysis::CutoffLevel deepest = analysis::evaluate_cutoff(m, r, n, 3);
  EXPECT_LT(deepest.burdened_parallelism, deepest.parallelism);
  for (const analysis::CutoffLevel& l : a.levels)
    if (l.depth == a.recommended) {
      EXPECT_GE(a.verdict == CutoffVerdict::Reached ? l.burdened_parallelism : l.parallelism, 16);
      EXPECT_LT(l.tasks_kept, deepest.tasks_kept);
    }
}

// A level's leaf tasks (those at the cut-off depth) run their whole subtree: in fib(4), depth 2
// holds fib(3) and fib(2), of work 7 and 4 (the upper median 7, the smallest 4); depth 3 holds
// fib(2), fib(1), fib(1), fib(0): 4, 1, 1, 1 (median 1); depth 1 the whole call, 13.
TEST(Cutoff, LeafTasksWorkIsTheirSubtreesMedianAndSmallest) {
  const Model m = fixtures::fib_model(4);
  const Recursion r = analysis::find_recursions(m).at(0);
  const struct {
    uint32_t depth;
    uint64_t kept, leaves, median, smallest;
  } expected[] = {{1, 1, 1, 13, 13}, {2, 3, 2, 7, 4}, {3, 7, 4, 1, 1}, {4, 9, 2, 1, 1}};
  for (const auto& e : expected) {
    SCOPED_TRACE("depth " + std::to_string(e.depth));
    const analysis::CutoffLevel l = analysis::evaluate_cutoff(m, r, e.depth, 0);
    EXPECT_EQ(l.tasks_kept, e.kept);
    EXPECT_EQ(l.leaf_tasks, e.leaves);
    EXPECT_EQ(l.leaf_median_work, e.median);
    EXPECT_EQ(l.leaf_smallest_work, e.smallest);
  }
}

// A target reached only without the tasking overhead: fib(16)'s scope (work 4789) reaches
// parallelism 4 from depth 4 on (span 2 x 3 + fib_work(13) = 1135: 4.2; depth 3: 1832, 2.6),
// but with 1000 per task no depth does once burdened (each kept level on the path adds 1000):
// the shallowest depth that reaches it unburdened, said so.
TEST(Cutoff, ATargetReachedOnlyWithoutTheOverheadRecommendsTheUnburdenedDepth) {
  const Model m = fixtures::fib_model(16);
  const Recursion r = analysis::find_recursions(m).at(0);
  ASSERT_EQ(fib_work(16), 4789u);
  ASSERT_EQ(fib_span_cut(16, 1, 4), 1135u);
  const analysis::CutoffAdvice a = analysis::advise_cutoff(m, r, 4, 1000);
  EXPECT_EQ(a.verdict, CutoffVerdict::ReachedUnburdened);
  EXPECT_EQ(a.recommended, 4u);
  for (const analysis::CutoffLevel& l : a.levels) EXPECT_LT(l.burdened_parallelism, 4.0);
}

// A target no depth reaches: the shallowest depth with 98% of the most parallelism there is. The
// top call does 10000 of serial work before its two children (fib(11) and fib(10)), so the
// deeper levels add little: the scope's work is 10000 + 1 + 430 + 265 = 10696; its span at
// depth 1 (both children inlined) 10696, at depth d >= 2 10001 + fib(11)'s span cut at d:
// 10168 at depth 4 (1.0519) and 10268 at depth 3 (1.0417), against 10022 at the full depth 12
// (1.0673, of which 98% is 1.0459): depth 4.
TEST(Cutoff, AnUnreachableTargetRecommendsTheShallowestDepthWithNearlyTheMost) {
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t start = b.strand(1);
  b.open(NodeKind::Task, site);
  const uint32_t first = b.strand(10000, {start});
  const uint32_t a = fixtures::fib_task(b, site, 11, first);
  const uint32_t c = fixtures::fib_task(b, site, 10, first);
  const uint32_t last = b.strand(1, {first, a, c});
  b.close();
  b.strand(1, {start, last});
  const Model m = b.finish();
  const Recursion r = analysis::find_recursions(m).at(0);
  EXPECT_EQ(r.max_depth, 12u);
  const uint64_t work = 10000 + 1 + fib_work(11) + fib_work(10);
  ASSERT_EQ(work, 10696u);
  auto span = [&](uint32_t d) {
    return d == 1 ? work : 10001 + std::max(fib_span_cut(11, 2, d), fib_span_cut(10, 2, d));
  };
  for (uint32_t d = 1; d <= 12; ++d)
    EXPECT_EQ(analysis::evaluate_cutoff(m, r, d, 0).span, span(d)) << "depth " << d;
  EXPECT_EQ(span(4), 10168u);
  EXPECT_EQ(span(3), 10268u);
  EXPECT_EQ(span(12), 10022u);
  const analysis::CutoffAdvice advice = analysis::advise_cutoff(m, r, 2, 0);
  EXPECT_EQ(advice.verdict, CutoffVerdict::NotReached);
  EXPECT_EQ(advice.recommended, 4u);
  EXPECT_EQ(advice.work, work);
}

// The estimates weigh each strand at its thread's usual pace (cutoff.cpp's paced_work): the
// unbalanced tree's strands timed in preorder on one thread, two kinds of code; a stretch of the
// run where the thread did the same code three times slower (as while both threads of a
// recording contend for the runtime) moves each level's parallelism by less than 3%, where the
// work as measured moves some level's by more than 10%. With every fragment's strands alike,
// pacing changes nothing.
Model timed_tree(bool timed, bool slowed) {
  Model m = fixtures::unbalanced_tree_model();
  m.fragments.resize(3);
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  for (uint32_t s = 0; s < n; ++s) {
    model::Strand& x = m.strands[s];
    x.fragment = x.work == 2 ? 1 : 2;
    x.work *= 1000;  // (ticks enough that rounding a paced weight loses nothing)
    // In bursts of 64 strands far apart, so that each of the run's slices holds whole bursts,
    // slowed or not.
    const uint32_t burst = s / 64, bursts = n / 64;
    if (slowed && burst >= bursts / 3 && burst < bursts / 2) x.work *= 3;
    x.thread = timed ? 0 : model::kNone;
    x.start = timed ? 1000 + uint64_t{burst} * 100000 + (s % 64) * 10 : 0;
    x.end = timed ? x.start + 5 : 0;
  }
  return m;
}

TEST(Cutoff, AStretchOfTheRunAtAnotherPaceDoesNotMoveTheEstimates) {
  const Model truth = timed_tree(false, false);
  const Recursion r = analysis::find_recursions(truth).at(0);
  const Model timed = timed_tree(true, false), paced = timed_tree(true, true),
              measured = timed_tree(false, true);
  double worst_measured = 0;
  for (uint32_t d = 1; d <= 8; ++d) {
    SCOPED_TRACE("depth " + std::to_string(d));
    const analysis::CutoffLevel t = analysis::evaluate_cutoff(truth, r, d, 0);
    const analysis::CutoffLevel same = analysis::evaluate_cutoff(timed, r, d, 0);
    EXPECT_EQ(same.span, t.span);
    EXPECT_EQ(same.parallelism, t.parallelism);
    const double p = analysis::evaluate_cutoff(paced, r, d, 0).parallelism;
    EXPECT_NEAR(p / t.parallelism, 1.0, 0.03) << p << " against " << t.parallelism;
    const double raw = analysis::evaluate_cutoff(measured, r, d, 0).parallelism;
    worst_measured = std::max(worst_measured, std::abs(raw / t.parallelism - 1));
  }
  EXPECT_GT(worst_measured, 0.10);
}

}  // namespace
}  // namespace tasklens
