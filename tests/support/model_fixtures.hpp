// Models for tests: a builder that replays a serial-elision walk (so the model invariants hold by
// construction), a checker for those invariants, a random model generator, and a few hand-built
// shapes with known work and span. Header-only so that any *_test.cpp can include it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "model/model.hpp"

namespace tasklens::fixtures {

using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;

// Builds a model in execution order: open() / close() nest construct nodes, strand() appends a
// strand to the innermost open node. Node 0 is the root (Program kind, site 0); sites[0] is the
// Program site. A strand's site is the innermost open node's site that is set (0 at top level).
class ModelBuilder {
 public:
  ModelBuilder() {
    model_.sites.push_back({0, SiteKind::Program, "", 0, ""});
    model_.nodes.push_back({NodeKind::Program, kNone, 1, 0, kNone, 0, 0});
    open_.push_back(0);
  }

  uint32_t add_site(SiteKind kind, uint64_t address = 0) {
    model_.sites.push_back({address ? address : 0x1000 + model_.sites.size(), kind, "", 0, ""});
    return static_cast<uint32_t>(model_.sites.size() - 1);
  }
  uint32_t new_instance() { return model_.instance_count++; }

  // Opens a child of the innermost open node. instance: kNone, an id from new_instance(), or
  // kFresh for a new id.
  static constexpr uint32_t kFresh = kNone - 1;
  uint32_t open(NodeKind kind, uint32_t site = kNone, uint32_t instance = kFresh) {
    if (site == kNone) instance = kNone;
    if (instance == kFresh) instance = new_instance();
    const uint32_t id = static_cast<uint32_t>(model_.nodes.size());
    const uint32_t begin = static_cast<uint32_t>(model_.strands.size());
    model_.nodes.push_back({kind, open_.back(), 1, site, instance, begin, begin});
    open_.push_back(id);
    return id;
  }
  void close() {
    const uint32_t id = open_.back();
    open_.pop_back();
    model::Node& node = model_.nodes[id];
    node.subtree_size = static_cast<uint32_t>(model_.nodes.size()) - id;
    node.strand_end = static_cast<uint32_t>(model_.strands.size());
  }

  uint32_t strand(uint64_t work, std::vector<uint32_t> preds = {}, uint32_t thread = 0) {
    const uint32_t id = static_cast<uint32_t>(model_.strands.size());
    uint32_t site = 0;
    for (auto it = open_.rbegin(); it != open_.rend(); ++it) {
      if (model_.nodes[*it].site != kNone) {
        site = model_.nodes[*it].site;
        break;
      }
    }
    model_.strands.push_back({work, 0, 0, thread, open_.back(), site});
    preds_.push_back(std::move(preds));
    return id;
  }
  // Adds an edge into an existing strand (for example a join discovered later in the walk).
  void add_pred(uint32_t strand, uint32_t pred) { preds_[strand].push_back(pred); }

  uint32_t strand_count() const { return static_cast<uint32_t>(model_.strands.size()); }
  uint32_t current() const { return open_.back(); }
  bool is_open(uint32_t node) const {
    return std::find(open_.begin(), open_.end(), node) != open_.end();
  }
  const Model& peek() const { return model_; }

  // Closes every open node (the root included) and lays out the predecessor lists.
  Model finish() {
    while (!open_.empty()) close();
    model_.pred_begin.assign(1, 0);
    model_.preds.clear();
    for (const auto& list : preds_) {
      model_.preds.insert(model_.preds.end(), list.begin(), list.end());
      model_.pred_begin.push_back(static_cast<uint32_t>(model_.preds.size()));
    }
    return std::move(model_);
  }

 private:
  Model model_;
  std::vector<uint32_t> open_;
  std::vector<std::vector<uint32_t>> preds_;
};

// Checks the invariants documented in model.hpp (plus index ranges). Returns "" when they hold,
// else the first violation found.
inline std::string check_model(const Model& m) {
  const size_t n = m.strands.size();
  if (m.pred_begin.size() != n + 1) return "pred_begin size";
  if (m.pred_begin[0] != 0 || m.pred_begin[n] != m.preds.size()) return "pred_begin bounds";
  for (size_t s = 0; s < n; ++s) {
    if (m.pred_begin[s] > m.pred_begin[s + 1]) return "pred_begin not monotone";
    for (uint32_t p : m.preds_of(static_cast<uint32_t>(s))) {
      if (p >= s) return "pred " + std::to_string(p) + " of strand " + std::to_string(s);
    }
    if (m.strands[s].site >= m.sites.size()) return "strand site";
    if (m.strands[s].node >= m.nodes.size()) return "strand node";
    const model::Node& owner = m.nodes[m.strands[s].node];
    if (s < owner.strand_begin || s >= owner.strand_end) return "strand outside its node";
  }
  if (m.nodes.empty()) return n == 0 ? "" : "no root";
  if (m.nodes[0].parent != kNone || m.nodes[0].subtree_size != m.nodes.size()) return "root";
  if (m.nodes[0].strand_begin != 0 || m.nodes[0].strand_end != n) return "root strands";
  for (size_t v = 1; v < m.nodes.size(); ++v) {
    const model::Node& node = m.nodes[v];
    const std::string at = " at node " + std::to_string(v);
    if (node.parent >= v) return "parent" + at;
    const model::Node& parent = m.nodes[node.parent];
    if (v + node.subtree_size > node.parent + parent.subtree_size) return "subtree" + at;
    if (node.subtree_size == 0) return "empty subtree" + at;
    if (node.strand_begin > node.strand_end) return "strand range" + at;
    if (node.strand_begin < parent.strand_begin || node.strand_end > parent.strand_end) {
      return "strands outside parent" + at;
    }
    if (node.site != kNone && node.site >= m.sites.size()) return "site" + at;
    if (node.instance != kNone && node.instance >= m.instance_count) return "instance" + at;
    // The range holds exactly the subtree's strands (Strand::node is the innermost node).
    for (uint32_t s = node.strand_begin; s < node.strand_end && s < n; ++s) {
      const uint32_t owner = m.strands[s].node;
      if (owner < v || owner >= v + node.subtree_size) {
        return "strand " + std::to_string(s) + " in range of node " + std::to_string(v) +
               " but not in its subtree";
      }
    }
  }
  return "";
}

struct RandomModelOptions {
  uint32_t max_strands = 40;
  uint32_t min_strands = 1;               // the root keeps adding items until there are this many
  uint32_t site_count = 4;                // sites besides the program site
  uint32_t max_depth = 5;                 // construct nesting below the root
  uint32_t max_items = 4;                 // strands or children per node
  double child_probability = 0.4;         // an item is a child node rather than a strand
  double structural_probability = 0.2;    // a child without site (implicit task, phase...)
  double share_probability = 0.3;         // a sited child joins an existing closed instance
  double own_instance_probability = 0.1;  // a sited child with instance == kNone
  double chain_probability = 0.7;         // a strand depends on the strand just before it
  uint32_t max_extra_preds = 2;           // additional random earlier predecessors
  double source_probability = 0.05;       // a strand with no predecessor at all
  uint64_t max_work = 20;
  double zero_work_probability = 0.1;
};

// Marks each strand, with `probability`, as loop iterations seen only together (Model::divisible)
// of 2 to max_iterations iterations.
inline void add_divisible(std::mt19937_64& rng, Model& m, double probability,
                          uint32_t max_iterations = 5) {
  std::uniform_real_distribution<double> chance(0, 1);
  std::uniform_int_distribution<uint32_t> iterations(2, max_iterations);
  for (uint32_t s = 0; s < m.strands.size(); ++s)
    if (chance(rng) < probability) m.divisible.push_back({s, iterations(rng)});
}

// Gives strand s a worker and a timestamp (the scheduling analyses read them).
inline void set_time(Model& m, uint32_t s, uint32_t thread, uint64_t start, uint64_t end) {
  m.strands[s].thread = thread;
  m.strands[s].start = start;
  m.strands[s].end = end;
}

// A random model satisfying the invariants, with recursion (a site nested in itself), instances
// made of several disjoint nodes, structural nodes, zero-work strands and arbitrary earlier
// predecessors (not just series-parallel edges).
inline Model random_model(std::mt19937_64& rng, const RandomModelOptions& opt = {}) {
  ModelBuilder b;
  std::vector<uint32_t> sites;
  const SiteKind kinds[] = {SiteKind::Parallel,  SiteKind::Task,     SiteKind::Loop,
                            SiteKind::Taskloop,  SiteKind::Sections, SiteKind::Single,
                            SiteKind::Taskgroup, SiteKind::Masked};
  for (uint32_t i = 0; i < opt.site_count; ++i) sites.push_back(b.add_site(kinds[i % 8]));
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto pick = [&](uint32_t count) {
    return std::uniform_int_distribution<uint32_t>(0, count - 1)(rng);
  };
  // Closed nodes per site that carry an instance id: candidates for sharing. An instance whose
  // node is still open cannot be shared by its descendant (ranges of one instance are disjoint).
  std::vector<std::vector<uint32_t>> closed(opt.site_count + 1);

  auto add_strand = [&]() {
    const uint32_t s = b.strand_count();
    std::vector<uint32_t> preds;
    if (s > 0 && !chance(opt.source_probability)) {
      if (chance(opt.chain_probability)) preds.push_back(s - 1);
      const uint32_t extra = opt.max_extra_preds ? pick(opt.max_extra_preds + 1) : 0;
      for (uint32_t i = 0; i < extra; ++i) preds.push_back(pick(s));
      if (preds.empty()) preds.push_back(pick(s));
      std::sort(preds.begin(), preds.end());
      preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    }
    const uint64_t work = chance(opt.zero_work_probability)
                              ? 0
                              : std::uniform_int_distribution<uint64_t>(1, opt.max_work)(rng);
    b.strand(work, std::move(preds), pick(4));
  };

  auto build = [&](auto&& self, uint32_t depth) -> void {
    const uint32_t items = 1 + pick(opt.max_items);
    for (uint32_t i = 0; i < items && b.strand_count() < opt.max_strands; ++i) {
      if (depth < opt.max_depth && opt.site_count > 0 && chance(opt.child_probability)) {
        uint32_t site = kNone, instance = kNone;
        if (!chance(opt.structural_probability)) {
          const uint32_t k = pick(opt.site_count);
          site = sites[k];
          auto& pool = closed[k];
          // A few random candidates rather than a scan of the pool, which keeps generation
          // linear for the large models of benchmarks.
          bool shared = false;
          if (!pool.empty() && chance(opt.share_probability)) {
            for (int attempt = 0; attempt < 4 && !shared; ++attempt) {
              const uint32_t inst =
                  b.peek().nodes[pool[pick(static_cast<uint32_t>(pool.size()))]].instance;
              bool busy = false;  // an open node holds this instance
              for (uint32_t u = b.current(); u != kNone; u = b.peek().nodes[u].parent) {
                if (b.peek().nodes[u].instance == inst) busy = true;
              }
              if (!busy) {
                instance = inst;
                shared = true;
              }
            }
          }
          if (!shared && !chance(opt.own_instance_probability)) instance = b.new_instance();
          const uint32_t v = b.open(NodeKind::Task, site, instance);
          self(self, depth + 1);
          b.close();
          if (instance != kNone) pool.push_back(v);
        } else {
          b.open(NodeKind::ImplicitTask);
          self(self, depth + 1);
          b.close();
        }
      } else {
        add_strand();
      }
    }
  };
  add_strand();  // a model always has at least one strand
  do {
    build(build, 0);
  } while (b.strand_count() < std::min(opt.min_strands, opt.max_strands));
  return b.finish();
}

// Times `m`'s strands as a list scheduler with random gaps would run them on 1-4 workers (threads
// 10, 11, ...), some strands left untimed (synthetic joins); `spread`: the gaps' and durations'
// range (a small one makes many strands start and end at the same time).
inline void time_randomly(std::mt19937_64& rng, Model& m, uint64_t spread = 20) {
  const uint32_t P = 1 + static_cast<uint32_t>(rng() % 4);
  std::vector<uint64_t> free_at(P, 1000 + rng() % 50);
  std::vector<uint64_t> eff_end(m.strands.size(), 0);
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    uint64_t ready = 0;
    for (uint32_t p : m.preds_of(s)) ready = std::max(ready, eff_end[p]);
    if (s > 0 && rng() % 8 == 0) {  // a synthetic join strand
      m.strands[s].thread = kNone;
      m.strands[s].start = m.strands[s].end = 0;
      eff_end[s] = ready;
      continue;
    }
    const uint32_t w = static_cast<uint32_t>(rng() % P);
    const uint64_t start = std::max(ready, free_at[w]) + rng() % spread;
    const uint64_t end = start + m.strands[s].work % (spread * 5 / 2);
    set_time(m, s, 10 + w, start, end);
    free_at[w] = end;
    eff_end[s] = end;
  }
}

// A serial chain of strands with the given works (one strand per work, at top level).
inline Model chain_model(const std::vector<uint64_t>& works) {
  ModelBuilder b;
  for (size_t i = 0; i < works.size(); ++i) {
    b.strand(works[i],
             i ? std::vector<uint32_t>{static_cast<uint32_t>(i - 1)} : std::vector<uint32_t>{});
  }
  return b.finish();
}

// fork (work 0) -> one task per work (site 1, each its own instance) -> join (work 0).
inline Model fork_join_model(const std::vector<uint64_t>& works) {
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t fork = b.strand(0);
  std::vector<uint32_t> ends;
  for (uint64_t w : works) {
    b.open(NodeKind::Task, site);
    ends.push_back(b.strand(w, {fork}));
    b.close();
  }
  ends.push_back(fork);
  b.strand(0, ends);
  return b.finish();
}

// Recursive fib(n) with one task site: each call is a task node with a strand of work 1, then
// (for n >= 2) its two child calls spawned from that strand, then a join strand of work 1 after
// both. The program has one serial strand (work 1) before and after the top call.
// Work W(n) = 1 (n < 2), 2 + W(n-1) + W(n-2); span S(n) = 1 (n < 2), 2 + S(n-1).
inline uint32_t fib_task(ModelBuilder& b, uint32_t site, uint32_t n, uint32_t pred) {
  b.open(NodeKind::Task, site);
  const uint32_t first = b.strand(1, {pred});
  uint32_t last = first;
  if (n >= 2) {
    const uint32_t a = fib_task(b, site, n - 1, first);
    const uint32_t c = fib_task(b, site, n - 2, first);
    last = b.strand(1, {first, a, c});
  }
  b.close();
  return last;
}
inline Model fib_model(uint32_t n, uint32_t* site_out = nullptr) {
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  if (site_out) *site_out = site;
  const uint32_t start = b.strand(1);
  const uint32_t end = fib_task(b, site, n, start);
  b.strand(1, {start, end});
  return b.finish();
}

// An unbalanced tree search's shape: every node is a task of one site that does 2 units, and
// with probability 0.22 makes four children and waits for them (a binomial tree, nearly
// critical: most nodes are leaves, a few subtrees go deep), under a top task making 200 roots;
// 2277 tasks, 41 deep with seed 7.
inline uint32_t tree_task(ModelBuilder& b, uint32_t site, std::mt19937_64& rng, uint32_t creator,
                          uint32_t& budget) {
  b.open(NodeKind::Task, site);
  uint32_t current = b.strand(2, {creator});
  std::vector<uint32_t> joined;
  if (budget >= 4 && std::bernoulli_distribution(0.22)(rng)) {
    budget -= 4;
    for (int child = 0; child < 4; ++child) {
      joined.push_back(tree_task(b, site, rng, current, budget));
      current = b.strand(1, {current});
    }
  }
  joined.push_back(current);
  const uint32_t last = joined.size() > 1 ? b.strand(1, joined) : current;
  b.close();
  return last;
}

inline Model unbalanced_tree_model(uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t start = b.strand(1);
  b.open(NodeKind::Task, site);
  uint32_t current = b.strand(1, {start});
  std::vector<uint32_t> joined;
  uint32_t budget = 40000;
  for (int root = 0; root < 200; ++root) {
    joined.push_back(tree_task(b, site, rng, current, budget));
    current = b.strand(1, {current});
  }
  joined.push_back(current);
  const uint32_t top = b.strand(1, joined);
  b.close();
  b.strand(1, {start, top});
  return b.finish();
}

// A search whose top call makes 512 calls of 10 units, one after the other, every 64th of them
// with 100 calls of 10 under it (UTS's binomial tree in small: a wide level of calls that mostly
// do nothing, a few deep ones). 1,313 tasks of one site, 3 deep; work 13,121.
inline Model wide_search_model() {
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t start = b.strand(1);
  b.open(NodeKind::Task, site);
  const uint32_t top = b.strand(0, {start});
  std::vector<uint32_t> ends;
  uint32_t current = top;
  for (uint32_t i = 0; i < 512; ++i) {
    b.open(NodeKind::Task, site);
    uint32_t last = b.strand(10, {current});
    if (i % 64 == 0) {
      std::vector<uint32_t> joined{last};
      for (uint32_t k = 0; k < 100; ++k) {
        b.open(NodeKind::Task, site);
        joined.push_back(b.strand(10, {last}));
        b.close();
        last = b.strand(0, {last});
        joined[0] = last;
      }
      last = b.strand(0, joined);
    }
    b.close();
    ends.push_back(last);
    current = b.strand(0, {current});
  }
  ends.push_back(current);
  const uint32_t wait = b.strand(0, ends);
  b.close();
  b.strand(1, {wait});
  return b.finish();
}

}  // namespace tasklens::fixtures
