// Work, span and per-site profile over the strand DAG. Everything here is linear passes over flat
// arrays: models of millions of strands must profile in well under a second, so there is no
// per-strand or per-node allocation and no hashing.
//
// Per-site spans are measured one site at a time, over the strands of its outermost instances
// (disjoint for one site, so a strand is visited once per distinct site enclosing it). A single
// pass keeping an (instance, distance) entry per strand and enclosing instance was tried: it
// wins a little when many sites interleave in small instances, but it needs several times the
// memory and loses clearly on far-reaching edges and on recursion, so it was not kept.
#include "analysis/profile.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <utility>

#include "analysis/algebra.hpp"

namespace tasklens::analysis {
namespace {

using model::kNone;
using model::Model;
using model::Node;

// Do the sorted ranges together cover every strand, [0, n)?
bool covers_all(const std::vector<std::pair<uint32_t, uint32_t>>& sorted_ranges, uint32_t n) {
  uint32_t covered = 0;
  for (auto [b, e] : sorted_ranges) {
    if (b > covered) return false;
    covered = std::max(covered, e);
  }
  return n > 0 && covered >= n;
}

}  // namespace

// One preorder walk that keeps, per site, the innermost open node of that site; a node's
// subtree is [id, id + subtree_size), so leaving a subtree is detected by id alone.
std::vector<uint8_t> nested_nodes(const Model& m, uint32_t num_sites) {
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());
  std::vector<uint8_t> nested(num_nodes, 0);
  std::vector<uint32_t> innermost(num_sites, kNone);
  std::vector<uint32_t> saved(num_nodes, kNone);  // innermost[site] before this node opened
  std::vector<uint32_t> open;
  for (uint32_t v = 0; v < num_nodes; ++v) {
    while (!open.empty() &&
           v >= static_cast<uint64_t>(open.back()) + m.nodes[open.back()].subtree_size) {
      const uint32_t u = open.back();
      open.pop_back();
      innermost[m.nodes[u].site] = saved[u];
    }
    const Node& node = m.nodes[v];
    if (node.site >= num_sites) continue;
    const uint32_t outer = innermost[node.site];
    if (outer != kNone) {
      const bool other_instance =
          node.instance == kNone || m.nodes[outer].instance != node.instance;
      // Same instance nested in itself (malformed) inherits the outer node's answer.
      nested[v] = other_instance ? 1 : nested[outer];
    }
    saved[v] = outer;
    innermost[node.site] = v;
    open.push_back(v);
  }
  return nested;
}

void finish_site_rows(Profile& profile, const std::vector<SiteRow>& rows,
                      const std::vector<uint8_t>& present) {
  for (uint32_t x = 0; x < rows.size(); ++x) {
    if (!present[x]) continue;
    SiteRow row = rows[x];
    row.site = x;
    row.parallelism = parallelism_of(row.work, row.span);
    row.critical_path_percent = percent_of(row.critical_work, profile.span);
    profile.sites.push_back(row);
  }
  std::sort(profile.sites.begin(), profile.sites.end(), [](const SiteRow& a, const SiteRow& b) {
    if (a.critical_work != b.critical_work) return a.critical_work > b.critical_work;
    if (a.work != b.work) return a.work > b.work;
    return a.site < b.site;
  });
}

// Strand ids are a topological order, so every predecessor's distance is final when a strand is
// reached: one forward pass.
uint64_t longest_path(const Model& m, std::vector<uint32_t>* path, const uint64_t* span_weights) {
  if (path) path->clear();
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  if (n == 0) return 0;
  std::vector<uint64_t> dist(n);
  // The backtracking link is only needed when the caller wants the path itself.
  std::vector<uint32_t> via(path ? n : 0);
  const uint32_t* begin = m.pred_begin.data();
  const uint32_t* preds = m.preds.data();
  uint64_t* d = dist.data();
  uint64_t best = 0;
  uint32_t best_end = 0;
  // Loop iterations seen only together weigh one iteration (model.hpp's DivisibleStrand).
  const model::DivisibleStrand* divisible = m.divisible.data();
  const model::DivisibleStrand* const divisible_end = divisible + m.divisible.size();
  // Ties between paths go to the strand met first (algebra.hpp's longer_path).
  const uint32_t* order = m.strand_order.size() == n ? m.strand_order.data() : nullptr;
  auto order_of = [order](uint32_t s) -> uint64_t { return order ? order[s] : s; };
  uint64_t best_order = 0;
  for (uint32_t s = 0; s < n; ++s) {
    uint64_t longest = 0;
    uint32_t arg = kNone;
    for (uint32_t i = begin[s], e = begin[s + 1]; i < e; ++i) {
      const uint32_t p = preds[i];
      if (arg == kNone || d[p] > longest ||
          (d[p] == longest && longer_path(d[p], order_of(p), longest, order_of(arg)))) {
        longest = d[p];
        arg = p;
      }
    }
    uint64_t weight = span_weights ? span_weights[s] : m.strands[s].work;
    if (divisible != divisible_end && divisible->strand == s)
      weight = iteration_span(weight, (divisible++)->iterations);
    const uint64_t here = longest + weight;
    d[s] = here;
    if (path) via[s] = arg;
    // Of the strands reaching the span, the path ends at the one met last (most often the
    // program's last strand; any would do, as long as a one-pass reading picks the same one).
    if (s == 0 || here > best || (here == best && order_of(s) > best_order)) {
      best = here;
      best_end = s;
      best_order = order_of(s);
    }
  }
  if (path) {
    for (uint32_t s = best_end; s != kNone; s = via[s]) path->push_back(s);
    std::reverse(path->begin(), path->end());
  }
  return best;
}

uint64_t path_weight(const Model& m, uint32_t s, uint64_t weight) {
  if (m.divisible.empty()) return weight;
  auto it = std::lower_bound(
      m.divisible.begin(), m.divisible.end(), s,
      [](const model::DivisibleStrand& d, uint32_t strand) { return d.strand < strand; });
  return it != m.divisible.end() && it->strand == s ? iteration_span(weight, it->iterations)
                                                    : weight;
}

Profile compute_profile(const Model& m, const Weights* weights, uint32_t shared_sites_from) {
  Profile profile;
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  const uint32_t num_sites = static_cast<uint32_t>(m.sites.size());
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());

  // The sited nodes, bucketed by site (a counting sort keeps node order inside a bucket), with
  // what the per-site pass needs copied in so that it reads one contiguous array per site.
  struct Rec {
    uint32_t instance, begin, end;
    uint32_t next;  // next record of the same instance
    bool nested;
  };
  std::vector<uint32_t> site_begin;
  std::vector<Rec> recs;
  uint32_t max_instance = 0;
  // Per instance id: how many sited nodes have it (0, 1, or 2 for two or more). Most instances
  // (a task, a region) are one node: those need no grouping by instance.
  std::vector<uint8_t> instance_nodes;
  auto make_records = [&] {
    const std::vector<uint8_t> nested = nested_nodes(m, num_sites);
    site_begin.assign(static_cast<size_t>(num_sites) + 1, 0);
    for (const Node& node : m.nodes) {
      if (node.site >= num_sites) continue;
      ++site_begin[node.site + 1];
      if (node.instance != kNone) max_instance = std::max(max_instance, node.instance + 1);
    }
    // The Program site without a node of its own: the root is its instance.
    const bool root_for_program = num_sites > 0 && num_nodes > 0 && site_begin[1] == 0;
    if (root_for_program) site_begin[1] = 1;
    for (uint32_t x = 0; x < num_sites; ++x) site_begin[x + 1] += site_begin[x];
    recs.resize(site_begin[num_sites]);
    instance_nodes.assign(max_instance, 0);
    std::vector<uint32_t> fill(site_begin.begin(), site_begin.end() - 1);
    if (root_for_program) recs[fill[0]++] = {kNone, 0, n, kNone, false};
    for (uint32_t v = 0; v < num_nodes; ++v) {
      const Node& node = m.nodes[v];
      if (node.site >= num_sites) continue;
      recs[fill[node.site]++] = {node.instance, std::min(node.strand_begin, n),
                                 std::min(node.strand_end, n), kNone, nested[v] != 0};
      if (node.instance != kNone && instance_nodes[node.instance] < 2)
        ++instance_nodes[node.instance];
    }
  };

  // Two threads from the start. The other one makes the sites' records, then walks the
  // program's longest path, then (second_half, below, when the model is large enough to be
  // worth it) measures sites too; this one makes the prefix sums of work, then measures sites
  // once the records are there. The path is independent of the rest (they share only what
  // they read). The records and the prefix sums take comparable times, which this thread made
  // one after the other before the sites.
  const uint64_t* span_weight = weights ? weights->span.data() : nullptr;
  std::function<void()> second_half;
  std::atomic<bool> prepared{false};  // second_half is set (or stays empty)
  std::promise<void> records_made;
  std::future<void> records = records_made.get_future();
  std::future<void> path_done = std::async(std::launch::async, [&] {
    try {
      make_records();
      records_made.set_value();
    } catch (...) {
      records_made.set_exception(std::current_exception());
      return;
    }
    profile.span = longest_path(m, &profile.critical_path, span_weight);
    prepared.wait(false, std::memory_order_acquire);
    if (second_half) second_half();
  });
  // Releases the path's thread: once second_half is set, or on the way out of an exception.
  struct Release {
    std::atomic<bool>* flag;
    void now() {
      if (!flag) return;
      flag->store(true, std::memory_order_release);
      flag->notify_one();
      flag = nullptr;
    }
    ~Release() { now(); }
  } release{&prepared};

  // Prefix sums of work: a range's work is one subtraction, and a strand's work is read from
  // this flat array rather than from the wide Strand records during the per-site passes.
  // With what-if weights, a second prefix array holds the span weights (read per strand on
  // paths); without, both are the recorded work.
  std::vector<SiteRow> rows(num_sites);
  std::vector<uint8_t> present(num_sites, 0);
  std::vector<uint64_t> prefix(static_cast<size_t>(n) + 1, 0);
  std::vector<uint64_t> span_prefix;
  if (weights)
    for (uint32_t s = 0; s < n; ++s) prefix[s + 1] = prefix[s] + weights->work[s];
  for (uint32_t s = 0; s < n; ++s) {
    const model::Strand& strand = m.strands[s];
    if (!weights) prefix[s + 1] = prefix[s] + strand.work;
    if (strand.site < num_sites) present[strand.site] = 1;
  }
  // Span weights differ from the work under a what-if, and for loop iterations seen only
  // together (they weigh one iteration: model.hpp's DivisibleStrand).
  const bool own_spans = weights || !m.divisible.empty();
  if (own_spans) {
    span_prefix.assign(static_cast<size_t>(n) + 1, 0);
    auto divisible = m.divisible.begin();
    for (uint32_t s = 0; s < n; ++s) {
      uint64_t w = weights ? weights->span[s] : m.strands[s].work;
      if (divisible != m.divisible.end() && divisible->strand == s)
        w = iteration_span(w, (divisible++)->iterations);
      span_prefix[s + 1] = span_prefix[s] + w;
    }
  }
  const uint64_t* spans = own_spans ? span_prefix.data() : prefix.data();
  profile.work = prefix[n];
  records.get();  // (rethrows the other thread's failure)

  struct Group {
    uint32_t head, tail;  // first and last record, in node order
    bool outermost;
  };
  struct Slot {
    uint32_t site = kNone, group = 0;  // instance id -> its group in the current site
  };
  // Per strand, for the instance being measured: mark == its stamp when the strand belongs to
  // it, and then dist is the longest path ending there inside the instance. Together so one
  // predecessor costs one cache line.
  struct State {
    uint64_t dist = 0;
    uint32_t mark = kNone;
  };
  // What one thread measuring sites needs of its own. `state` (per strand of the model) is
  // made when an instance first needs it; `dist` (per strand of the longest contiguous
  // instance) is left uninitialized: every entry is written before it is read.
  struct Scratch {
    std::vector<Group> groups;
    std::vector<Slot> slots;
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    std::vector<State> state;
    uint32_t stamp = 0;
    std::unique_ptr<uint64_t[]> dist;
    size_t dist_size = 0;
  };
  std::vector<uint64_t> whole_program(num_sites, 0);  // outermost instances covering [0, n)
  const uint32_t* pred_begin = m.pred_begin.data();
  const uint32_t* preds = m.preds.data();
  const uint64_t* work = prefix.data();

  // Measures site x into rows[x]: each outermost instance's work and span.
  auto measure_site = [&](uint32_t x, Scratch& scratch) {
    present[x] = 1;
    std::vector<Group>& groups = scratch.groups;
    std::vector<Slot>& slots = scratch.slots;
    std::vector<std::pair<uint32_t, uint32_t>>& ranges = scratch.ranges;
    groups.clear();
    uint64_t instances = 0;
    for (uint32_t i = site_begin[x]; i < site_begin[x + 1]; ++i) {
      Rec& rec = recs[i];
      // An instance of one node is a group of its own, measured unless it is nested.
      if (rec.instance == kNone || instance_nodes[rec.instance] < 2) {
        ++instances;
        if (!rec.nested) groups.push_back({i, i, true});
        continue;
      }
      if (slots.empty()) slots.resize(max_instance);
      uint32_t g;
      if (slots[rec.instance].site == x) {
        g = slots[rec.instance].group;
        recs[groups[g].tail].next = i;
        groups[g].tail = i;
      } else {
        g = static_cast<uint32_t>(groups.size());
        groups.push_back({i, i, true});
        slots[rec.instance] = {x, g};
        ++instances;
      }
      if (rec.nested) groups[g].outermost = false;
    }

    SiteRow& row = rows[x];
    row.count = instances;
    for (const Group& group : groups) {
      if (!group.outermost) continue;
      ranges.clear();
      for (uint32_t i = group.head; i != kNone; i = recs[i].next) {
        if (recs[i].begin < recs[i].end) ranges.emplace_back(recs[i].begin, recs[i].end);
      }
      // Visiting the instance's strands in increasing id keeps the pass topological. Node order
      // normally is strand order already; sort (and trim overlaps) only if it is not.
      if (!std::is_sorted(ranges.begin(), ranges.end())) std::sort(ranges.begin(), ranges.end());
      // An instance of every strand (the program's) has the program's span: no pass of its own.
      if (covers_all(ranges, n)) {
        row.work += work[n];
        ++whole_program[x];
        continue;
      }
      if (ranges.empty()) continue;  // an instance without strands adds neither
      uint64_t instance_span = 0;
      // One range of strands, [b, e) (the common case: a task, a region, a loop on one
      // thread): a predecessor is inside the instance exactly when it is at least b, so
      // distances need no marks, only an array as long as the instance.
      uint32_t whole_end = ranges.front().second;
      bool contiguous = true;
      for (auto [b, e] : ranges) {
        contiguous = contiguous && b <= whole_end;
        whole_end = std::max(whole_end, e);
      }
      if (contiguous) {
        const uint32_t b = ranges.front().first, e = whole_end;
        if (scratch.dist_size < e - b) {
          scratch.dist.reset(new uint64_t[e - b]);
          scratch.dist_size = e - b;
        }
        uint64_t* dist = scratch.dist.get();  // dist[s - b] for s in [b, e)
        row.work += work[e] - work[b];
        for (uint32_t s = b; s < e; ++s) {
          uint64_t longest = 0;
          for (uint32_t k = pred_begin[s], ke = pred_begin[s + 1]; k < ke; ++k) {
            const uint32_t p = preds[k];
            if (p >= b && dist[p - b] > longest) longest = dist[p - b];
          }
          const uint64_t here = longest + (spans[s + 1] - spans[s]);
          dist[s - b] = here;
          instance_span = std::max(instance_span, here);
        }
        row.span += instance_span;
        continue;
      }
      if (scratch.state.empty()) scratch.state.resize(n);
      State* state = scratch.state.data();
      const uint32_t id = scratch.stamp++;
      uint32_t covered = 0;
      for (auto [b, e] : ranges) {
        b = std::max(b, covered);
        if (b >= e) continue;
        covered = e;
        row.work += work[e] - work[b];
        for (uint32_t s = b; s < e; ++s) {
          uint64_t longest = 0;
          for (uint32_t k = pred_begin[s], ke = pred_begin[s + 1]; k < ke; ++k) {
            const State& p = state[preds[k]];
            if (p.mark == id && p.dist > longest) longest = p.dist;
          }
          const uint64_t here = longest + (spans[s + 1] - spans[s]);
          state[s] = {here, id};
          instance_span = std::max(instance_span, here);
        }
      }
      row.span += instance_span;
    }
  };

  // Sites are taken one at a time by both threads: the thread of the program's longest path
  // measures sites beside this one once its path is done. Each site's row is written by
  // the thread that took it, so the result does not depend on who took what. Each thread has
  // its own scratch arrays (an instance's distances, and the per-strand state when an instance
  // of several ranges needs it): a small model is not worth a second set.
  std::atomic<uint32_t> next_site{0};
  auto measure_sites = [&](Scratch& scratch) {
    for (uint32_t x; (x = next_site.fetch_add(1, std::memory_order_relaxed)) < num_sites;)
      if (site_begin[x] != site_begin[x + 1]) measure_site(x, scratch);
  };
  if (n >= shared_sites_from) {
    second_half = [&] {
      Scratch mine;
      measure_sites(mine);
    };
  }
  release.now();
  try {
    Scratch scratch;
    measure_sites(scratch);
  } catch (...) {  // out of memory: the other thread still reads this frame's arrays
    next_site.store(num_sites, std::memory_order_relaxed);
    path_done.wait();
    throw;
  }

  path_done.get();
  profile.parallelism = parallelism_of(profile.work, profile.span);
  for (uint32_t s : profile.critical_path) {
    const uint32_t site = m.strands[s].site;
    if (site < num_sites) rows[site].critical_work += spans[s + 1] - spans[s];
  }
  for (uint32_t x = 0; x < num_sites; ++x) rows[x].span += whole_program[x] * profile.span;
  finish_site_rows(profile, rows, present);
  return profile;
}

}  // namespace tasklens::analysis
