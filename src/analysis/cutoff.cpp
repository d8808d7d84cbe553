// The cut-off adviser (analysis/cutoff.hpp).
#include "analysis/cutoff.hpp"

#include <algorithm>
#include <deque>
#include <numeric>
#include <tuple>

#include "analysis/algebra.hpp"
#include "analysis/tasks.hpp"

namespace tasklens::analysis {

using model::kNone;
using model::Model;
using model::NodeKind;

namespace {

// A cut-off that keeps this share of the most parallelism a recursion can give is as good as the
// deepest one: the tasks past it add nothing.
constexpr double kNearlyAll = 0.98;

bool is_task_like(NodeKind k) {
  return k == NodeKind::Task || k == NodeKind::ImplicitTask || k == NodeKind::Program;
}

// A task of a recursion candidate: an explicit task of a task site (not one of a taskloop's).
bool is_site_task(const Model& m, uint32_t v) {
  const model::Node& n = m.nodes[v];
  return n.kind == NodeKind::Task && n.site < m.sites.size() &&
         m.sites[n.site].kind == model::SiteKind::Task &&
         (n.parent == kNone || m.nodes[n.parent].kind != NodeKind::Taskloop);
}

// The nearest task-like ancestor-or-self of every node (the task whose code a strand of that
// node runs).
std::vector<uint32_t> owning_tasks(const Model& m) {
  std::vector<uint32_t> owner(m.nodes.size(), 0);
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {
    const model::Node& n = m.nodes[v];
    owner[v] = is_task_like(n.kind) || n.parent == kNone || n.parent >= v ? v : owner[n.parent];
  }
  return owner;
}

// Per node, the recursion's depth (that of its nearest recursion task, itself included; 0 above
// them) and whether it is one of its tasks; the deepest task's depth and the scope: the innermost
// node holding every task of depth 1 (nodes are in preorder: the ancestor of the first that
// contains the last; one task of depth 1 is its own scope).
struct Extent {
  std::vector<uint32_t> depth;
  std::vector<uint8_t> member;
  uint32_t max_depth = 0, scope = 0;
};
Extent extent_of(const Model& m, const std::vector<uint8_t>& in_set) {
  const uint32_t nodes = static_cast<uint32_t>(m.nodes.size());
  Extent e;
  e.depth.assign(nodes, 0);
  e.member.assign(nodes, 0);
  uint32_t first = kNone, last = kNone;
  for (uint32_t v = 0; v < nodes; ++v) {
    const model::Node& node = m.nodes[v];
    const uint32_t inherited = node.parent != kNone && node.parent < v ? e.depth[node.parent] : 0;
    e.member[v] = is_site_task(m, v) && node.site < in_set.size() && in_set[node.site];
    e.depth[v] = inherited + e.member[v];
    if (!e.member[v]) continue;
    e.max_depth = std::max(e.max_depth, e.depth[v]);
    if (e.depth[v] == 1) {
      if (first == kNone) first = v;
      last = v;
    }
  }
  if (first == kNone) return e;
  uint32_t scope = first;
  while (scope != 0 && last >= scope + m.nodes[scope].subtree_size) {
    const uint32_t up = m.nodes[scope].parent;
    scope = up < scope ? up : 0;
  }
  e.scope = scope;
  return e;
}

std::vector<uint8_t> site_set(const Model& m, const Recursion& r) {
  std::vector<uint8_t> in_set(m.sites.size(), 0);
  for (uint32_t s : r.sites)
    if (s < in_set.size()) in_set[s] = 1;
  return in_set;
}

// Each strand's work at its thread's usual pace: what a thread's strands did in one of
// PaceTable::kSlices equal slices of the run, against what their code fragments take on average
// over the whole run, is the thread's pace then, and a strand weighs its work over that pace. Why:
// a recording with a task per call runs a subtree of tiny tasks slower while both threads contend
// for the runtime than while one runs it alone, and a depth cut-off's span is one serialized
// subtree's sum, so the estimate followed the recording's contention where the cut-off program
// (its subtrees plain calls) has none (docs/benchmarks.md, "Cut-off advice against a sweep").
// Strands of fragments met fewer than PaceTable::kFragmentStrands times, untimed ones and those
// of slices with fewer than kSliceStrands keep their work; the others' sum is about the same.
std::vector<uint64_t> paced_work(const Model& m) {
  PaceTable pace;
  for (const model::Strand& x : m.strands)
    pace.add_mean(x.work, x.thread, x.start, x.end, x.fragment);
  pace.means();
  for (const model::Strand& x : m.strands)
    pace.add_slice(x.work, x.thread, x.start, x.end, x.fragment);
  std::vector<uint64_t> weight(m.strands.size());
  for (size_t s = 0; s < weight.size(); ++s) {
    const model::Strand& x = m.strands[s];
    weight[s] = pace.weight(x.work, x.thread, x.start, x.end, x.fragment);
  }
  return weight;
}

// What every depth's evaluation of one recursion shares: per strand, whether it starts a task
// (the burden) and which inlinable task's own code it ends; per depth, the recursion's tasks'
// work.
struct Context {
  const Model& m;
  uint32_t max_depth = 0, scope = 0;  // as Extent
  uint32_t lo = 0, hi = 0;            // the scope's strands
  uint64_t work = 0;                  // and their work
  struct Call {
    uint32_t depth, creator;
    uint64_t subtree;  // the task's work, the calls under it included
  };
  std::vector<Call> calls;  // the recursion's tasks whose creator is known
  // Per strand: the index in `calls` of the task whose own code ends with it (kNone: none), and
  // the recursion depth of the task it starts (0: a task not of the recursion; kNone: none).
  std::vector<uint32_t> ending_call, starting_depth;
  // Per strand starting a task of the recursion, that task's subtree's work (else 0).
  std::vector<uint64_t> starting_subtree;
  // The work of the recursion's tasks (their subtree's: the calls under them included), by
  // depth: depth d's are [by_depth_begin[d], by_depth_begin[d + 1]).
  std::vector<uint64_t> by_depth;
  std::vector<size_t> by_depth_begin;
  // Beside each of by_depth, the largest subtree's work of that task's own children of the
  // recursion (0: none): a task made under a size cut-off is a leaf when it is below the cut.
  std::vector<uint64_t> largest_child;
  // The longest paths of one evaluation, kept for the next: faulting in two arrays of 8 bytes
  // per strand again for every depth cost as much as the pass itself.
  mutable std::vector<uint64_t> dist, burdened;
  // Each strand's weight: its work at its thread's usual pace (paced_work).
  std::vector<uint64_t> weight_of;
  // Per strand starting a task of the recursion: its place among the tasks of the recursion its
  // creating task made before it (0: the first), and the last strand of the task's own code made
  // just before it by the same task (kNone: none), for tasks made several calls at a time; beside
  // each of by_depth, the place.
  std::vector<uint32_t> sibling_index, previous_sibling_end, by_depth_sibling;
  // Per strand: the first strand of the one task it creates (kNone: none; kSeveral: more than
  // one). A call run in the task of the one made before it takes the code that created it along
  // (the loop's step, the task's creation) off the creating task's path: see longest_paths.
  static constexpr uint32_t kSeveral = kNone - 1;
  std::vector<uint32_t> creates;

  Context(const Model& model, const Recursion& r) : m(model), weight_of(paced_work(model)) {
    const uint32_t nodes = static_cast<uint32_t>(m.nodes.size());
    const uint32_t n = static_cast<uint32_t>(m.strands.size());
    const Extent extent = extent_of(m, site_set(m, r));
    const std::vector<uint32_t>& depth = extent.depth;
    const std::vector<uint8_t>& member = extent.member;
    max_depth = extent.max_depth;
    scope = extent.scope;
    if (scope < nodes) {
      lo = std::min(m.nodes[scope].strand_begin, n);
      hi = std::min(std::max(m.nodes[scope].strand_end, lo), n);
    }
    const std::vector<uint32_t> owner = owning_tasks(m);
    std::vector<uint32_t> own_last(nodes, kNone);
    for (uint32_t s = 0; s < n; ++s) {
      const uint32_t v = m.strands[s].node;
      if (v < nodes) own_last[owner[v]] = s;
    }
    std::vector<uint64_t> prefix(size_t(n) + 1, 0);
    for (uint32_t s = 0; s < n; ++s) prefix[s + 1] = prefix[s] + weight_of[s];
    work = prefix[hi] - prefix[lo];
    ending_call.assign(n, kNone);
    starting_depth.assign(n, kNone);
    starting_subtree.assign(n, 0);
    by_depth_begin.assign(size_t(max_depth) + 2, 0);
    for (uint32_t v = 0; v < nodes; ++v)
      if (member[v]) ++by_depth_begin[depth[v] + 1];
    for (size_t d = 1; d < by_depth_begin.size(); ++d) by_depth_begin[d] += by_depth_begin[d - 1];
    by_depth.resize(by_depth_begin.back());
    largest_child.resize(by_depth_begin.back());
    by_depth_sibling.resize(by_depth_begin.back());
    sibling_index.assign(n, 0);
    previous_sibling_end.assign(n, kNone);
    creates.assign(n, kNone);
    std::vector<uint32_t> made_so_far(nodes, 0), last_made(nodes, kNone);
    auto subtree_of = [&](const model::Node& node) {
      const bool has_strands = node.strand_begin < node.strand_end && node.strand_end <= n;
      return has_strands ? prefix[node.strand_end] - prefix[node.strand_begin] : uint64_t{0};
    };
    std::vector<uint64_t> largest(nodes, 0);
    for (uint32_t v = 0; v < nodes; ++v) {
      const model::Node& node = m.nodes[v];
      if (!member[v] || node.parent == kNone || node.parent >= nodes) continue;
      const uint32_t creating_task = owner[node.parent];
      if (creating_task < nodes && member[creating_task])
        largest[creating_task] = std::max(largest[creating_task], subtree_of(node));
    }
    std::vector<size_t> fill(by_depth_begin.begin(), by_depth_begin.end() - 1);
    for (uint32_t v = 0; v < nodes; ++v) {
      const model::Node& node = m.nodes[v];
      const bool has_strands = node.strand_begin < node.strand_end && node.strand_end <= n;
      uint32_t sibling = 0, previous = kNone;
      if (member[v] && node.parent != kNone && node.parent < nodes) {
        // (Nodes are in preorder: a task's children of the recursion come in the order made.)
        const uint32_t creating_task = owner[node.parent];
        sibling = made_so_far[creating_task]++;
        if (last_made[creating_task] != kNone) previous = own_last[last_made[creating_task]];
        last_made[creating_task] = v;
      }
      if (member[v]) {
        largest_child[fill[depth[v]]] = largest[v];
        by_depth_sibling[fill[depth[v]]] = sibling;
        by_depth[fill[depth[v]]++] = subtree_of(node);
      }
      if (node.kind != NodeKind::Task || !has_strands) continue;
      starting_depth[node.strand_begin] = member[v] ? depth[v] : 0;
      sibling_index[node.strand_begin] = sibling;
      previous_sibling_end[node.strand_begin] = previous;
      const uint64_t subtree = prefix[node.strand_end] - prefix[node.strand_begin];
      if (member[v]) starting_subtree[node.strand_begin] = subtree;
      if (node.parent == kNone) continue;
      // The creator: the latest predecessor of the task's first strand that runs the code of
      // the task the new one was created in (the others are dependences).
      const uint32_t creating_task = owner[node.parent];
      uint32_t creator = kNone;
      for (uint32_t p : m.preds_of(node.strand_begin))
        if (p < n && m.strands[p].node < nodes && owner[m.strands[p].node] == creating_task &&
            (creator == kNone || p > creator))
          creator = p;
      if (creator == kNone) continue;
      creates[creator] = creates[creator] == kNone ? node.strand_begin : kSeveral;
      if (!member[v] || own_last[v] == kNone) continue;
      ending_call[own_last[v]] = static_cast<uint32_t>(calls.size());
      calls.push_back({depth[v], creator, subtree});
    }
  }

  // Which tasks are made: those of no recursion, and the recursion's of depth `cut` or less whose
  // subtree does `min_work` or more. A task's subtree holds its children's, so the tasks made are
  // the top of the tree, as with a depth cut-off alone.
  struct Rule {
    uint32_t cut;
    uint64_t min_work;
    uint32_t group = 1;  // the tasks of depth `cut` made this many calls at a time
    bool keeps(uint32_t depth, uint64_t subtree) const {
      return depth == 0 || (depth <= cut && subtree >= min_work);
    }
    // A task of depth `cut` that is not the first of its group: a call in the task of the one
    // made before it.
    bool joins_group(uint32_t depth, uint32_t sibling) const {
      return group > 1 && depth == cut && sibling % group != 0;
    }
  };

  // Whether the task whose first strand is `s` is a call run in the task of the one made before
  // it (not the first of its group).
  bool joins_group(const Rule& rule, uint32_t s) const {
    const uint32_t starts = starting_depth[s];
    return starts != kNone && rule.joins_group(starts, sibling_index[s]) &&
           previous_sibling_end[s] != kNone && previous_sibling_end[s] >= lo;
  }

  // The longest paths with the tasks `rule` does not make inlined, the burdened one if `Burden`.
  template <bool Burden>
  void longest_paths(const Rule rule, uint64_t per_task, uint64_t& best,
                     uint64_t& best_burdened) const {
    const uint32_t* begin = m.pred_begin.data();
    const uint32_t* preds = m.preds.data();
    const model::DivisibleStrand* divisible = m.divisible.data();
    const model::DivisibleStrand* const divisible_end = divisible + m.divisible.size();
    while (divisible != divisible_end && divisible->strand < lo) ++divisible;
    uint64_t* d = dist.data();
    uint64_t* b = burdened.data();
    // Within the scope only: edges from outside it do not count (a site's instance span).
    for (uint32_t s = lo; s < hi; ++s) {
      uint64_t longest = 0, longest_burdened = 0;
      for (uint32_t i = begin[s], e = begin[s + 1]; i < e; ++i) {
        const uint32_t p = preds[i];
        if (p < lo) continue;
        longest = std::max(longest, d[p]);
        if constexpr (Burden) longest_burdened = std::max(longest_burdened, b[p]);
      }
      const uint32_t starts = starting_depth[s];
      // A call run in the task of the one made before it starts once that one has returned.
      const bool in_group = joins_group(rule, s);
      uint64_t weight = weight_of[s];
      if (in_group) {
        longest = std::max(longest, d[previous_sibling_end[s]]);
        if constexpr (Burden)
          longest_burdened = std::max(longest_burdened, b[previous_sibling_end[s]]);
        // The code that created it in the recording (the loop's step and the task's creation,
        // what a plain loop over the group's calls runs before each) runs in the group's task
        // now, right before the call: on the creating task's path it weighs nothing (below).
        for (uint32_t i = begin[s], e = begin[s + 1]; i < e; ++i)
          if (preds[i] >= lo && creates[preds[i]] == s) {
            weight += weight_of[preds[i]];
            break;
          }
      }
      if (divisible != divisible_end && divisible->strand == s)
        weight = iteration_span(weight, (divisible++)->iterations);
      if (creates[s] < kSeveral && joins_group(rule, creates[s])) weight = 0;
      d[s] = longest + weight;
      best = std::max(best, d[s]);
      if constexpr (Burden) {
        // A task still made (of the recursion at a kept depth, or of no recursion) pays.
        const bool made = starts != kNone && !in_group && rule.keeps(starts, starting_subtree[s]);
        b[s] = longest_burdened + weight + (made ? per_task : 0);
        best_burdened = std::max(best_burdened, b[s]);
      }
      // An inlined task ends here: what followed its creation waits for it, as after a call.
      if (ending_call[s] != kNone) {
        const Call& c = calls[ending_call[s]];
        if (!rule.keeps(c.depth, c.subtree)) {
          d[c.creator] = std::max(d[c.creator], d[s]);
          if constexpr (Burden) b[c.creator] = std::max(b[c.creator], b[s]);
        }
      }
    }
  }

  // The tasks a depth cut-off at `cut` makes, without evaluating it.
  uint64_t tasks_within(uint32_t cut) const {
    const uint32_t d = std::min(cut, max_depth);
    return d >= 1 ? by_depth_begin[d + 1] - by_depth_begin[1] : 0;
  }

  // `with_burden`: also the burdened span (a second longest path, as long again). `min_work`:
  // of the tasks within the depth, only those whose subtree does that much are made.
  CutoffLevel evaluate(uint32_t cut, uint64_t per_task, bool with_burden = true,
                       uint64_t min_work = 0, uint32_t group = 1) const {
    CutoffLevel level;
    level.depth = std::min(cut, max_depth);
    level.min_work = min_work;
    level.group = group > 1 ? group : 0;
    const Rule rule{level.depth, min_work, std::max(group, 1u)};
    const uint32_t n = static_cast<uint32_t>(m.strands.size());
    dist.resize(n);  // (every entry is written before it is read)
    burdened.resize(with_burden ? n : 0);
    uint64_t best = 0, best_burdened = 0;
    if (with_burden)
      longest_paths<true>(rule, per_task, best, best_burdened);
    else
      longest_paths<false>(rule, per_task, best, best_burdened);
    level.span = best;
    level.burdened_span = best_burdened;
    // The tasks made; the leaves are those of the deepest level (a depth cut-off: each runs the
    // calls under it), or every task made whose children are all calls (a size cut-off).
    std::vector<uint64_t> leaves;
    if (min_work == 0 && group > 1) {
      if (level.depth >= 1) {
        // The tasks above the depth, then one per group: its calls' work together.
        level.tasks_kept = by_depth_begin[level.depth] - by_depth_begin[1];
        for (size_t i = by_depth_begin[level.depth]; i < by_depth_begin[level.depth + 1]; ++i) {
          if (by_depth_sibling[i] % group == 0 || leaves.empty()) {
            ++level.tasks_kept;
            leaves.push_back(0);
          }
          leaves.back() += by_depth[i];
        }
      }
    } else if (min_work == 0) {
      if (level.depth >= 1) {
        level.tasks_kept = by_depth_begin[level.depth + 1] - by_depth_begin[1];
        leaves.assign(
            by_depth.begin() + static_cast<std::ptrdiff_t>(by_depth_begin[level.depth]),
            by_depth.begin() + static_cast<std::ptrdiff_t>(by_depth_begin[level.depth + 1]));
      }
    } else {
      for (size_t i = by_depth_begin[1]; i < by_depth_begin[level.depth + 1]; ++i)
        if (by_depth[i] >= min_work) {
          ++level.tasks_kept;
          const bool last_level = i >= by_depth_begin[level.depth];
          if (last_level || largest_child[i] < min_work) leaves.push_back(by_depth[i]);
        }
    }
    level.leaf_tasks = leaves.size();
    if (!leaves.empty()) {
      auto mid = leaves.begin() + static_cast<std::ptrdiff_t>(leaves.size() / 2);
      std::nth_element(leaves.begin(), mid, leaves.end());
      level.leaf_median_work = *mid;
      level.leaf_smallest_work = *std::min_element(leaves.begin(), leaves.end());
    }
    return level;
  }
};

void finish(CutoffLevel& level, uint64_t work) {
  level.parallelism = parallelism_of(work, level.span);
  level.burdened_parallelism = parallelism_of(work, level.burdened_span);
}

// Of a family of coarser forms level(k, with_burden), k = first .. last, where more k makes fewer
// tasks and no more parallelism without the burden: the largest k whose parallelism reaches
// `bar` (a binary search, when `first`'s does), then, burdened, the first of it and the few
// below it that `accept` takes (fewer tasks are fewer overheads, but only a smaller k gives the
// span back). A level of nothing ({}) when none does.
template <typename Level, typename Accept>
CutoffLevel coarsest_reaching(uint32_t first, uint32_t last, double bar, Level level,
                              Accept accept) {
  if (first > last || level(first, false).parallelism < bar) return {};
  uint32_t lo = first, hi = last;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (level(mid, false).parallelism >= bar)
      lo = mid;
    else
      hi = mid - 1;
  }
  for (uint32_t k = lo + 1; k-- > first && k + 4 >= lo;) {
    const CutoffLevel l = level(k, true);
    if (accept(l)) return l;
  }
  return {};
}

}  // namespace

bool PaceTable::paced(uint32_t thread, uint64_t start, uint64_t end, uint32_t fragment) const {
  return thread != kNoThread && (start != 0 || end != 0) && fragment != 0 &&
         fragment < fragments_.size() && fragments_[fragment].mean != kUnknown;
}

size_t PaceTable::slice(uint32_t thread, uint64_t start) const {
  const double width = static_cast<double>(last_ - first_ + 1) / kSlices;
  const size_t k = std::min(kSlices - 1, static_cast<size_t>((start - first_) / width));
  return size_t{thread} * kSlices + k;
}

void PaceTable::add_mean(uint64_t work, uint32_t thread, uint64_t start, uint64_t end,
                         uint32_t fragment) {
  if (thread == kNoThread || (start == 0 && end == 0) || fragment == 0) return;  // untimed
  if (fragment >= fragments_.size()) fragments_.resize(size_t{fragment} + 1);
  fragments_[fragment].work += work;
  ++fragments_[fragment].strands;
  first_ = std::min(first_, start);
  last_ = std::max(last_, start);
  threads_ = std::max(threads_, thread + 1);
}

void PaceTable::means() {
  for (Fragment& f : fragments_)
    if (f.strands >= kFragmentStrands)
      f.mean = static_cast<uint64_t>(((f.work << 16) + f.strands / 2) / f.strands);
  slices_.assign(size_t{threads_} * kSlices, {});
}

void PaceTable::add_slice(uint64_t work, uint32_t thread, uint64_t start, uint64_t end,
                          uint32_t fragment) {
  if (!paced(thread, start, end, fragment) || thread >= threads_) return;
  Slice& c = slices_[slice(thread, start)];
  c.work += work;
  c.usual += fragments_[fragment].mean;
  ++c.strands;
}

uint64_t PaceTable::weight(uint64_t work, uint32_t thread, uint64_t start, uint64_t end,
                           uint32_t fragment) const {
  if (!paced(thread, start, end, fragment) || thread >= threads_) return work;
  const Slice& c = slices_[slice(thread, start)];
  if (c.strands < kSliceStrands || c.work == 0) return work;
  return static_cast<uint64_t>(static_cast<double>(work) * static_cast<double>(c.usual) /
                                   (65536.0 * static_cast<double>(c.work)) +
                               0.5);
}

const char* to_string(CutoffVerdict verdict) {
  switch (verdict) {
    case CutoffVerdict::Reached:
      return "reached";
    case CutoffVerdict::ReachedUnburdened:
      return "reached_without_overhead";
    case CutoffVerdict::NotReached:
      return "not_reached";
  }
  return "?";
}

std::vector<Recursion> recursion_groups(const std::vector<std::vector<uint32_t>>& next,
                                        const std::vector<uint64_t>& count,
                                        const std::vector<uint8_t>& self_loop) {
  const uint32_t sites = static_cast<uint32_t>(count.size());
  // Tarjan's strongly connected components, iteratively (a program may have many sites).
  std::vector<uint32_t> index(sites, kNone), low(sites, 0), component(sites, kNone), stack;
  std::vector<uint8_t> on_stack(sites, 0);
  uint32_t counter = 0, components = 0;
  for (uint32_t root = 0; root < sites; ++root) {
    if (count[root] == 0 || index[root] != kNone) continue;
    std::vector<std::pair<uint32_t, size_t>> frames{{root, 0}};
    index[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = 1;
    while (!frames.empty()) {
      auto& [v, edge] = frames.back();
      if (edge < next[v].size()) {
        const uint32_t w = next[v][edge++];
        if (index[w] == kNone) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = 1;
          frames.emplace_back(w, 0);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const uint32_t done = v;
      frames.pop_back();
      if (!frames.empty()) low[frames.back().first] = std::min(low[frames.back().first], low[done]);
      if (low[done] != index[done]) continue;
      for (uint32_t w = kNone; w != done;) {
        w = stack.back();
        stack.pop_back();
        on_stack[w] = 0;
        component[w] = components;
      }
      ++components;
    }
  }
  std::vector<Recursion> groups(components);
  for (uint32_t s = 0; s < sites; ++s)
    if (component[s] != kNone) {
      groups[component[s]].sites.push_back(s);
      groups[component[s]].tasks += count[s];
    }
  std::vector<Recursion> recursions;
  for (Recursion& r : groups)
    if (r.sites.size() >= 2 || (r.sites.size() == 1 && self_loop[r.sites[0]]))
      recursions.push_back(std::move(r));
  return recursions;
}

std::vector<Recursion> find_recursions(const Model& m) {
  const uint32_t sites = static_cast<uint32_t>(m.sites.size());
  // The site graph: a -> b when a task of site b has a task of site a as its nearest explicit
  // task ancestor. A recursion is a strongly connected set of sites with a cycle: a leaf task
  // type that a recursion creates (and that creates none of its tasks) is not part of it.
  std::vector<std::vector<uint32_t>> next(sites);
  std::vector<uint32_t> nearest(m.nodes.size(), kNone);
  std::vector<uint64_t> count(sites, 0);
  std::vector<uint8_t> self_loop(sites, 0);
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {
    const model::Node& node = m.nodes[v];
    const uint32_t above = node.parent != kNone && node.parent < v ? nearest[node.parent] : kNone;
    const bool member = is_site_task(m, v);
    nearest[v] = member ? v : above;
    if (!member) continue;
    ++count[node.site];
    if (above == kNone) continue;
    const uint32_t from = m.nodes[above].site;
    if (from == node.site) self_loop[from] = 1;
    auto& out = next[from];
    if (std::find(out.begin(), out.end(), node.site) == out.end()) out.push_back(node.site);
  }
  std::vector<Recursion> groups = recursion_groups(next, count, self_loop);
  std::vector<Recursion> recursions;
  for (Recursion& r : groups) {
    const Extent e = extent_of(m, site_set(m, r));
    r.max_depth = e.max_depth;
    r.scope = e.scope;
    if (r.max_depth >= 2) recursions.push_back(std::move(r));
  }
  std::stable_sort(recursions.begin(), recursions.end(),
                   [](const Recursion& a, const Recursion& b) { return a.tasks > b.tasks; });
  return recursions;
}

CutoffMachine cutoff_machine(const RunLoss& loss, uint64_t per_task) {
  CutoffMachine machine;
  if (loss.threads < 2 || loss.elapsed == 0) return machine;
  machine.per_task = std::max(loss.per_task, per_task);
  if (machine.per_task > 0) machine.threads = loss.threads;
  return machine;
}

CutoffLevel evaluate_cutoff(const Model& m, const Recursion& recursion, uint32_t depth,
                            uint64_t per_task) {
  const Context context(m, recursion);
  CutoffLevel level = context.evaluate(depth, per_task);
  finish(level, context.work);
  return level;
}

CutoffLevel evaluate_group_cutoff(const Model& m, const Recursion& recursion, uint32_t depth,
                                  uint32_t group, uint64_t per_task) {
  const Context context(m, recursion);
  CutoffLevel level = context.evaluate(depth, per_task, true, 0, group);
  finish(level, context.work);
  return level;
}

CutoffLevel evaluate_size_cutoff(const Model& m, const Recursion& recursion, uint64_t min_work,
                                 uint64_t per_task) {
  const Context context(m, recursion);
  CutoffLevel level = context.evaluate(context.max_depth, per_task, true, min_work);
  finish(level, context.work);
  return level;
}

CutoffAdvice advise_cutoff(const Model& m, const Recursion& recursion, double target,
                           uint64_t per_task, uint32_t neighbours, const CutoffMachine& machine) {
  const Context context(m, recursion);
  CutoffSource source;
  source.work = context.work;
  source.max_depth = context.max_depth;
  source.scope = context.scope;
  source.tasks_within = [&context](uint32_t cut) { return context.tasks_within(cut); };
  source.depth = [&](uint32_t d, bool with_burden) {
    CutoffLevel l = context.evaluate(d, per_task, with_burden);
    finish(l, context.work);
    return l;
  };
  source.size = [&](uint64_t min_work, bool with_burden) {
    CutoffLevel l = context.evaluate(context.max_depth, per_task, with_burden, min_work);
    finish(l, context.work);
    return l;
  };
  source.widest = [&context](uint32_t depth) {
    uint32_t widest = 1;  // the most calls one task makes at that depth
    for (size_t i = context.by_depth_begin[depth]; i < context.by_depth_begin[depth + 1]; ++i)
      widest = std::max(widest, context.by_depth_sibling[i] + 1);
    return widest;
  };
  source.group = [&](uint32_t depth, uint32_t group, bool with_burden) {
    CutoffLevel l = context.evaluate(depth, per_task, with_burden, 0, group);
    finish(l, context.work);
    return l;
  };
  return advise_cutoff(recursion, source, target, per_task, neighbours, machine);
}

CutoffAdvice advise_cutoff(const Recursion& recursion, const CutoffSource& source, double target,
                           uint64_t per_task, uint32_t neighbours, const CutoffMachine& machine) {
  CutoffAdvice a;
  a.recursion = recursion;
  a.coarser_forms_evaluated = source.size && source.group;
  if (machine.threads >= 2 && machine.per_task > 0) a.machine = machine;
  a.per_task = per_task;
  a.target = target;
  a.work = source.work;
  a.recursion.max_depth = source.max_depth;
  a.recursion.scope = source.scope;
  const uint32_t deepest = std::max(1u, source.max_depth);
  // Evaluated depths, any order (a deque: references stay valid), with or without the burden.
  std::deque<std::pair<CutoffLevel, bool>> known;
  auto at = [&](uint32_t d, bool with_burden = true) -> const CutoffLevel& {
    for (auto& [l, burdened] : known)
      if (l.depth == d && (burdened || !with_burden)) return l;
    known.emplace_back(source.depth(d, with_burden), with_burden);
    return known.back().first;
  };
  a.recorded = at(deepest);
  // The shallowest depth whose parallelism, without the burden, is at least `bar`: more depth,
  // more parallelism (inlining only adds constraints), so a binary search finds it.
  auto shallowest = [&](double bar) {
    uint32_t lo = 1, hi = deepest;
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (at(mid, false).parallelism >= bar)
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  };
  const double most = a.recorded.parallelism;
  uint32_t chosen = kNone;
  if (most >= target) {
    // Burdened, more tasks cost more too: from that depth on, the first that reaches the target
    // (a few depths past it at most: each level multiplies the tasks).
    const uint32_t unburdened = shallowest(target);
    for (uint32_t d = unburdened; d <= deepest && d <= unburdened + 4 && chosen == kNone; ++d)
      if (at(d).burdened_parallelism >= target) chosen = d;
    a.verdict = chosen != kNone ? CutoffVerdict::Reached : CutoffVerdict::ReachedUnburdened;
    if (chosen == kNone) chosen = unburdened;
  } else {
    // Not reached at any depth: the shallowest with (nearly) the most there is, which spares
    // the tasks that add nothing.
    a.verdict = CutoffVerdict::NotReached;
    chosen = shallowest(most * kNearlyAll);
  }
  a.recommended = chosen;
  // On the recorded threads: beyond the W / P every depth shares, ((P - 1) S_d + tasks_d c) / P
  // (CutoffMachine); the shallowest depth within kSameTime of the least time. More depth, more
  // tasks: once tasks_d c / P alone reaches the least so far, no deeper depth costs less.
  const double threads = a.machine.threads;
  auto time_on_machine = [&](uint64_t span, uint64_t tasks) -> uint64_t {
    return static_cast<uint64_t>(
        (static_cast<double>(span) * (threads - 1) +
         static_cast<double>(tasks) * static_cast<double>(a.machine.per_task)) /
        threads);
  };
  if (a.machine.threads > 0) {
    std::vector<std::pair<uint32_t, uint64_t>> times;  // (depth, predicted), ascending depths
    uint64_t least = UINT64_MAX;
    bool pruned = false;
    for (uint32_t d = 1; d <= deepest && times.size() < kMachineDepths;
         d = d < kEveryDepthUpTo ? d + 1 : d + d / 4) {
      if (time_on_machine(0, source.tasks_within(d)) >= least) {
        pruned = true;
        break;
      }
      const CutoffLevel& l = at(d, false);
      times.emplace_back(d, time_on_machine(l.span, l.tasks_kept));
      if (times.back().second < least) std::tie(a.least_cost, least) = times.back();
    }
    if (!pruned && times.back().first != deepest) {  // the steps or the budget skipped it
      const CutoffLevel& l = at(deepest, false);
      times.emplace_back(deepest, time_on_machine(l.span, l.tasks_kept));
      if (times.back().second < least) std::tie(a.least_cost, least) = times.back();
    }
    // (The margin is on the whole predicted time, the work's share included: a run varies more
    // than that.)
    const double shared = static_cast<double>(a.work) / threads;
    for (const auto& [d, t] : times)
      if (shared + static_cast<double>(t) <= (shared + static_cast<double>(least)) * kSameTime) {
        a.fastest = d;
        break;
      }
  }
  std::vector<uint32_t> shown;
  auto show_around = [&](uint32_t centre, uint32_t around) {
    for (uint32_t d = centre > around ? centre - around : 1;
         d <= std::min(deepest, centre + around); ++d)
      shown.push_back(d);
  };
  show_around(chosen, neighbours);
  if (a.fastest > 0) show_around(a.fastest, std::min(neighbours, 1u));
  if (a.least_cost > 0) show_around(a.least_cost, 0);
  std::sort(shown.begin(), shown.end());
  shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  for (uint32_t d : shown) a.levels.push_back(at(d));
  const CutoffLevel& advised = at(chosen);
  a.depth_helps = advised.tasks_kept * 2 <= a.recursion.tasks;
  // What a coarser form than the depth must reach (the verdict's bar), and burdened for a
  // reached target.
  const double bar = a.verdict == CutoffVerdict::NotReached ? most * kNearlyAll : target;
  auto meets = [&](const CutoffLevel& l) {
    return a.verdict != CutoffVerdict::Reached || l.burdened_parallelism >= target;
  };
  if (!a.depth_helps && a.work > 1 && source.size) {
    // A size cut-off, min_work = 2^k: more k, fewer tasks and (inlining only adds constraints)
    // no more parallelism without the burden.
    auto size_level = [&](uint32_t k, bool with_burden) {
      return source.size(uint64_t{1} << k, with_burden);
    };
    a.size_cutoff = coarsest_reaching(
        0, 63 - static_cast<uint32_t>(__builtin_clzll(a.work)), bar, size_level,
        [&](const CutoffLevel& l) { return meets(l) && l.tasks_kept < advised.tasks_kept; });
  }
  // The recommended depth's own tasks still tiny: the same depth, its tasks made several calls
  // at a time, 2^k: more k, fewer tasks and (grouping only adds constraints: a group of 2g is
  // two of g) no more parallelism without the burden.
  if (per_task > 0 && advised.leaf_tasks >= 2 &&
      advised.leaf_median_work < kTinyTaskCosts * per_task && source.group) {
    const uint32_t widest = source.widest(advised.depth);
    auto group_level = [&](uint32_t k, bool with_burden) {
      return source.group(advised.depth, 1u << k, with_burden);
    };
    // (At most half the depth's tasks: fewer by less is not worth a rewrite.)
    a.group_cutoff = coarsest_reaching(
        1, 31 - static_cast<uint32_t>(__builtin_clz(widest)), bar, group_level,
        [&](const CutoffLevel& l) { return meets(l) && l.tasks_kept * 2 <= advised.tasks_kept; });
  }
  if (a.machine.threads > 0) {
    for (CutoffLevel* l : {&a.recorded, &a.size_cutoff, &a.group_cutoff})
      if (l->tasks_kept > 0) l->machine_cost = time_on_machine(l->span, l->tasks_kept);
    for (CutoffLevel& l : a.levels) l.machine_cost = time_on_machine(l.span, l.tasks_kept);
  }
  return a;
}

}  // namespace tasklens::analysis
