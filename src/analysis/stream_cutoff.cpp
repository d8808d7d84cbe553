// The cut-off advice in passes (analysis/stream_cutoff.hpp).
#include "analysis/stream_cutoff.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/algebra.hpp"
#include "model/model.hpp"

namespace tasklens::analysis {

using model::NodeKind;
using model::StrandSink;

namespace {

constexpr uint32_t kNo = ~0u;

bool is_explicit_task(uint8_t kind, uint8_t parent_kind) {
  return kind == static_cast<uint8_t>(NodeKind::Task) &&
         parent_kind != static_cast<uint8_t>(NodeKind::Taskloop);
}

constexpr uint8_t kNoKind = 0xff;

}  // namespace

// ---- pass 1 ----

void CutoffScan::node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t) {
  auto up = parent == kNoNode ? nodes_.end() : nodes_.find(parent);
  const uint32_t above = up == nodes_.end() ? kNo : up->second.nearest_site;
  const uint8_t parent_kind = up == nodes_.end() ? kNoKind : up->second.kind;
  const bool member = is_explicit_task(kind, parent_kind) && site != kNoSite && is_task_site_(site);
  nodes_[key] = Node{kind, member ? site : above};
  if (!member) return;
  if (site >= count_.size()) {
    count_.resize(site + 1, 0);
    next_.resize(site + 1);
    self_loop_.resize(site + 1, 0);
  }
  ++count_[site];
  if (above == kNo) return;
  if (above == site) self_loop_[site] = 1;
  auto& out = next_[above];
  if (std::find(out.begin(), out.end(), site) == out.end()) out.push_back(site);
}

StrandSink::Strand CutoffScan::strand(uint64_t work, uint64_t, uint32_t, const Strand*, uint32_t,
                                      const Instance*, uint32_t, uint64_t, uint32_t fragment,
                                      uint64_t) {
  pace_.add_mean(work, thread_, start_, end_, fragment);
  if (thread_ != kNo && (start_ != 0 || end_ != 0)) {  // (model::is_timed)
    first_start_ = std::min(first_start_, start_);
    last_end_ = std::max(last_end_, end_);
  }
  thread_ = kNo;
  return 0;
}

std::vector<Recursion> CutoffScan::recursions() const {
  std::vector<std::vector<uint32_t>> next = next_;
  next.resize(count_.size());
  return recursion_groups(next, count_, self_loop_);
}

PaceTable CutoffScan::pace() const {
  PaceTable p = pace_;
  p.means();
  return p;
}

// ---- pass 2 ----

CutoffExtents::CutoffExtents(const std::vector<Recursion>& recursions, TaskSiteTest is_task_site,
                             PaceTable pace)
    : is_task_site_(std::move(is_task_site)), pace_(std::move(pace)) {
  for (const Recursion& r : recursions) {
    std::vector<uint8_t> in;
    for (uint32_t s : r.sites) {
      if (s >= in.size()) in.resize(s + 1, 0);
      in[s] = 1;
    }
    in_set_.push_back(std::move(in));
  }
  extents_.resize(recursions.size());
  scope_path_.resize(recursions.size());
}

void CutoffExtents::node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t) {
  auto up = parent == kNoNode ? nodes_.end() : nodes_.find(parent);
  Node n{parent, site, kind, std::vector<uint32_t>(in_set_.size(), 0)};
  const uint8_t parent_kind = up == nodes_.end() ? kNoKind : up->second.kind;
  const bool task = is_explicit_task(kind, parent_kind) && site != kNoSite && is_task_site_(site);
  for (size_t r = 0; r < in_set_.size(); ++r) {
    const bool member = task && site < in_set_[r].size() && in_set_[r][site];
    n.depth[r] = (up == nodes_.end() ? 0 : up->second.depth[r]) + member;
    if (!member) continue;
    RecursionExtent& e = extents_[r];
    const uint32_t d = n.depth[r];
    if (d >= e.tasks_at.size()) e.tasks_at.resize(d + 1, 0);
    ++e.tasks_at[d];
    e.max_depth = std::max(e.max_depth, d);
    if (d != 1) continue;
    // The innermost node holding every task of depth 1: the common start of the paths from the
    // root (every node on them is live: a node is done after the nodes inside it).
    std::vector<std::pair<uint64_t, uint32_t>> path{{key, site}};
    for (uint64_t v = parent; v != kNoNode;) {
      auto it = nodes_.find(v);
      if (it == nodes_.end()) break;
      path.emplace_back(v, it->second.site);
      v = it->second.parent;
    }
    std::reverse(path.begin(), path.end());
    auto& scope = scope_path_[r];
    if (scope.empty()) {
      scope = std::move(path);
    } else {
      size_t common = 0;
      while (common < scope.size() && common < path.size() &&
             scope[common].first == path[common].first)
        ++common;
      scope.resize(std::max<size_t>(common, 1));
    }
  }
  nodes_[key] = std::move(n);
}

StrandSink::Strand CutoffExtents::strand(uint64_t work, uint64_t, uint32_t, const Strand*, uint32_t,
                                         const Instance*, uint32_t, uint64_t, uint32_t fragment,
                                         uint64_t) {
  pace_.add_slice(work, thread_, start_, end_, fragment);
  thread_ = kNo;
  return 0;
}

std::vector<RecursionExtent> CutoffExtents::extents() const {
  std::vector<RecursionExtent> out = extents_;
  for (size_t r = 0; r < out.size(); ++r) {
    const auto& path = scope_path_[r];
    if (path.empty()) continue;
    out[r].scope = path.back().first;
    for (size_t i = path.size(); i-- > 0;)
      if (path[i].second != kNoSite && path[i].second != 0) {
        out[r].scope_site = path[i].second;
        break;
      }
  }
  return out;
}

// ---- pass 3: every candidate depth at once ----

namespace {
// A join's tag per cut: which chain its folds came from.
constexpr uint64_t kEmpty = ~uint64_t{0}, kOutside = ~uint64_t{0} - 1, kMixed = ~uint64_t{0} - 2;
uint64_t merge_tag(uint64_t a, uint64_t b) {
  if (a == kEmpty) return b;
  if (b == kEmpty || a == b) return a;
  return kMixed;
}
}  // namespace

struct StreamCutoffPass::State {
  std::vector<uint8_t> in_set;
  TaskSiteTest is_task_site;
  const PaceTable& pace;
  std::vector<uint32_t> cuts;
  uint64_t per_task;
  uint64_t scope;
  size_t k_count;

  // A member at a cut's depth: its chain there (held by the strands inside it, whose fold into
  // a join may come after the node is done).
  struct Chain {
    uint64_t key = 0;
    uint32_t cut = kNo;
    bool headed = false, read = false;
    uint64_t start_d = 0, start_b = 0, span_weight = 0, weight = 0;
  };
  using Chains = std::vector<std::shared_ptr<Chain>>;
  struct Node {
    uint64_t key = 0;
    uint8_t kind = 0;
    bool member = false, in_scope = false;
    uint32_t depth = 0;
    uint64_t owner = kNoNode;           // the nearest member ancestor-or-self's key
    uint64_t creating_owner = kNoNode;  // a member's: its parent's owner (the creating task)
    // A member's: the chains of its member ancestors-or-self at each cut <= its depth.
    std::shared_ptr<const Chains> chains;
  };
  std::vector<Node> nodes;
  std::vector<uint32_t> free_nodes;
  std::unordered_map<uint64_t, uint32_t> node_slot;

  struct Live {
    bool join = false, in_scope = false;
    uint32_t depth = 0;
    uint64_t owner = kNoNode;
    std::shared_ptr<const Chains> chains;
    std::vector<uint64_t> v;    // per cut: distance, burdened distance (plain strands; joins)
    std::vector<uint64_t> tag;  // joins: per cut
  };
  std::vector<Live> live;
  std::vector<uint32_t> free_live;

  uint64_t work = 0;
  std::vector<uint64_t> best, best_burdened;
  std::vector<std::string> why;  // per cut: "" while exact
  std::vector<QuantileSketch> leaves;

  State(const PaceTable& p) : pace(p) {}

  Node* find_node(uint64_t key) {
    auto it = node_slot.find(key);
    return it == node_slot.end() ? nullptr : &nodes[it->second];
  }
  uint32_t new_live() {
    uint32_t slot;
    if (!free_live.empty()) {
      slot = free_live.back();
      free_live.pop_back();
    } else {
      slot = static_cast<uint32_t>(live.size());
      live.emplace_back();
    }
    Live& x = live[slot];
    x.v.assign(2 * k_count, 0);
    x.tag.clear();
    x.chains.reset();
    return slot;
  }
  void not_exact(size_t k, const char* reason) {
    if (why[k].empty()) why[k] = reason;
  }
  void not_exact_upto(uint32_t depth, const char* reason) {
    for (size_t k = 0; k < k_count && cuts[k] <= depth; ++k) not_exact(k, reason);
  }
};

StreamCutoffPass::StreamCutoffPass(const Recursion& recursion, const RecursionExtent& extent,
                                   TaskSiteTest is_task_site, const PaceTable& pace,
                                   std::vector<uint32_t> cuts, uint64_t per_task)
    : s_(std::make_unique<State>(pace)) {
  State& s = *s_;
  for (uint32_t site : recursion.sites) {
    if (site >= s.in_set.size()) s.in_set.resize(site + 1, 0);
    s.in_set[site] = 1;
  }
  s.is_task_site = std::move(is_task_site);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  s.cuts = std::move(cuts);
  s.k_count = s.cuts.size();
  s.per_task = per_task;
  s.scope = extent.scope;
  s.best.assign(s.k_count, 0);
  s.best_burdened.assign(s.k_count, 0);
  s.why.assign(s.k_count, "");
  s.leaves.resize(s.k_count);
}

StreamCutoffPass::~StreamCutoffPass() = default;

void StreamCutoffPass::node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t) {
  State& s = *s_;
  uint32_t slot;
  if (!s.free_nodes.empty()) {
    slot = s.free_nodes.back();
    s.free_nodes.pop_back();
  } else {
    slot = static_cast<uint32_t>(s.nodes.size());
    s.nodes.emplace_back();
  }
  // (Looked up once the slot is made: emplace_back may move the nodes.)
  const State::Node* up = parent == kNoNode ? nullptr : s.find_node(parent);
  State::Node n;
  n.key = key;
  n.kind = kind;
  n.member = is_explicit_task(kind, up ? up->kind : kNoKind) && site != kNoSite &&
             site < s.in_set.size() && s.in_set[site] && s.is_task_site(site);
  n.in_scope = key == s.scope || (up && up->in_scope);
  const uint32_t above = up ? up->depth : 0;
  n.depth = above + n.member;
  n.owner = n.member ? key : (up ? up->owner : kNoNode);
  if (n.member) {
    n.creating_owner = up ? up->owner : kNoNode;
    const State::Node* owner = up && up->owner != kNoNode ? s.find_node(up->owner) : nullptr;
    if (owner && owner->chains) n.chains = owner->chains;
    if ((n.chains ? n.chains->size() : 0) < s.k_count &&
        s.cuts[n.chains ? n.chains->size() : 0] == n.depth) {
      auto chains = std::make_shared<State::Chains>(n.chains ? *n.chains : State::Chains{});
      auto chain = std::make_shared<State::Chain>();
      chain->key = key;
      chain->cut = static_cast<uint32_t>(chains->size());
      chains->push_back(std::move(chain));
      n.chains = std::move(chains);
    }
  } else {
    n.chains = up ? up->chains : nullptr;
    // A kept task or a team's construct inside a task of the recursion: the cut-off program
    // runs it beside the chain, not in it.
    if (above >= 1 && kind != static_cast<uint8_t>(NodeKind::Taskgroup))
      s.not_exact_upto(above,
                       "a task of another construct, or a team's construct, runs inside the "
                       "recursion's tasks");
  }
  s.nodes[slot] = std::move(n);
  s.node_slot[key] = slot;
}

void StreamCutoffPass::node_done(uint64_t key) {
  State& s = *s_;
  auto it = s.node_slot.find(key);
  if (it == s.node_slot.end()) return;
  State::Node& n = s.nodes[it->second];
  if (n.member && n.chains && !n.chains->empty() && n.chains->back()->key == key) {
    const State::Chain& c = *n.chains->back();
    const size_t k = c.cut;
    if (c.headed) {
      s.best[k] = std::max(s.best[k], c.start_d + c.span_weight);
      s.best_burdened[k] = std::max(s.best_burdened[k], c.start_b + s.per_task + c.span_weight);
    }
    s.leaves[k].add(c.weight);
  }
  n.chains.reset();
  s.free_nodes.push_back(it->second);
  s.node_slot.erase(it);
}

StrandSink::Strand StreamCutoffPass::strand(uint64_t work, uint64_t, uint32_t, const Strand* preds,
                                            uint32_t pred_count, const Instance*, uint32_t,
                                            uint64_t iterations, uint32_t fragment, uint64_t) {
  State& s = *s_;
  const bool first_of_task = task_start_;
  task_start_ = false;
  const uint32_t slot = s.new_live();
  const State::Node* node = s.find_node(strand_node_);
  State::Live& x = s.live[slot];
  x.join = false;
  x.in_scope = node && node->in_scope;
  const uint32_t thread = thread_;
  thread_ = kNo;
  if (!x.in_scope) return slot;  // (outside the scope: no path goes through it)
  x.depth = node->depth;
  x.owner = node->owner;
  const State::Node* owner = node->owner == kNoNode ? nullptr : s.find_node(node->owner);
  x.chains = owner ? owner->chains : nullptr;
  const uint64_t weight = s.pace.weight(work, thread, start_, end_, fragment);
  const uint64_t span_weight = iteration_span(weight, iterations);
  s.work += weight;
  const bool heads_a_task = first_of_task && owner && node->key == owner->key;
  for (size_t k = 0; k < s.k_count; ++k) {
    const uint32_t cut = s.cuts[k];
    if (cut > x.depth) {  // a plain strand of the cut-off program
      uint64_t d = 0, b = 0;
      for (uint32_t i = 0; i < pred_count; ++i) {
        const State::Live& y = s.live[preds[i]];
        if (!y.in_scope) continue;
        if (!y.join && y.depth >= cut) {
          s.not_exact(k, "a dependence leaves a subtree the cut-off runs as calls");
          continue;
        }
        d = std::max(d, y.v[2 * k]);
        b = std::max(b, y.v[2 * k + 1]);
      }
      x.v[2 * k] = d + span_weight;
      x.v[2 * k + 1] = b + span_weight + (first_of_task ? s.per_task : 0);
      s.best[k] = std::max(s.best[k], x.v[2 * k]);
      s.best_burdened[k] = std::max(s.best_burdened[k], x.v[2 * k + 1]);
      continue;
    }
    // Inside the chain of its depth-`cut` ancestor.
    State::Chain* chain = (*x.chains)[k].get();
    const uint64_t chain_key = chain->key;
    if (heads_a_task && chain_key == owner->key) {  // the chain starts here
      uint64_t d = 0, b = 0;
      for (uint32_t i = 0; i < pred_count; ++i) {
        const State::Live& y = s.live[preds[i]];
        if (!y.in_scope) continue;
        const bool from_chain =
            y.join ? (y.tag[k] != kEmpty && y.tag[k] != kOutside) : y.depth >= cut;
        if (from_chain) s.not_exact(k, "a dependence joins two subtrees the cut-off runs as calls");
        d = std::max(d, y.v[2 * k]);
        b = std::max(b, y.v[2 * k + 1]);
      }
      chain->headed = true;
      chain->start_d = d;
      chain->start_b = b;
    } else {
      bool creator = !first_of_task;  // a call inside the chain starts after its creation
      for (uint32_t i = 0; i < pred_count; ++i) {
        const State::Live& y = s.live[preds[i]];
        if (!y.in_scope) continue;
        const bool inside = y.join ? (y.tag[k] == kEmpty || y.tag[k] == chain_key)
                                   : y.depth >= cut && y.chains && (*y.chains)[k]->key == chain_key;
        if (!inside) s.not_exact(k, "a dependence enters a subtree the cut-off runs as calls");
        if (!y.join && node->member && y.owner == node->creating_owner) creator = true;
      }
      if (!creator)
        s.not_exact(k, "a task of the recursion has no recorded creation to run as a call at");
    }
    if (chain->read) s.not_exact(k, "a subtree was waited for before all of it had run");
    chain->span_weight += span_weight;
  }
  // Every chain around it holds its work (its task's subtree's, for the leaves' sizes).
  if (x.chains)
    for (const std::shared_ptr<State::Chain>& chain : *x.chains) chain->weight += weight;
  return slot;
}

StrandSink::Strand StreamCutoffPass::open_join() {
  State& s = *s_;
  const uint32_t slot = s.new_live();
  State::Live& j = s.live[slot];
  j.join = true;
  j.in_scope = true;
  j.tag.assign(s.k_count, kEmpty);
  return slot;
}

void StreamCutoffPass::fold(Strand join, Strand pred) {
  State& s = *s_;
  const State::Live& y = s.live[pred];
  if (!y.in_scope) return;
  State::Live& j = s.live[join];
  for (size_t k = 0; k < s.k_count; ++k) {
    const uint32_t cut = s.cuts[k];
    uint64_t d = 0, b = 0, tag = kOutside;
    if (y.join) {
      d = y.v[2 * k];
      b = y.v[2 * k + 1];
      tag = y.tag[k];
    } else if (cut > y.depth) {
      d = y.v[2 * k];
      b = y.v[2 * k + 1];
    } else {
      State::Chain& chain = *(*y.chains)[k];
      tag = chain.key;
      // A task of that depth ended (a fold is a task's end): its chain's end. A deeper task's
      // end is inside a chain: whatever waits for it outside that chain also waits for the
      // chain's task, whose end comes later in the cut-off program.
      if (cut == y.depth) {
        chain.read = true;
        d = chain.start_d + chain.span_weight;
        b = chain.start_b + s.per_task + chain.span_weight;
      }
    }
    j.v[2 * k] = std::max(j.v[2 * k], d);
    j.v[2 * k + 1] = std::max(j.v[2 * k + 1], b);
    j.tag[k] = merge_tag(j.tag[k], tag);
  }
}

void StreamCutoffPass::release(Strand x) {
  State& s = *s_;
  s.live[x].chains.reset();
  s.free_live.push_back(x);
}

StreamCutoffPass::Result StreamCutoffPass::finish() {
  State& s = *s_;
  Result r;
  r.work = s.work;
  for (size_t k = 0; k < s.k_count; ++k) {
    CutoffLevel l;
    l.depth = s.cuts[k];
    l.span = s.best[k];
    l.burdened_span = s.best_burdened[k];
    const QuantileSketch& leaves = s.leaves[k];
    l.leaf_tasks = leaves.count();
    if (leaves.count() > 0) {
      // The upper median (rank n/2 + 1), as nth_element at n/2 gives it.
      const double n = static_cast<double>(leaves.count());
      l.leaf_median_work =
          leaves.percentile(100.0 * (static_cast<double>(leaves.count() / 2) + 0.5) / n);
      l.leaf_smallest_work = leaves.min();
    }
    r.levels.push_back(l);
    r.exact.push_back(s.why[k].empty());
    r.why.push_back(s.why[k]);
  }
  return r;
}

// ---- the driver ----

namespace {

// The depths advise_cutoff's machine search tries (cutoff.cpp), and the deepest.
std::vector<uint32_t> first_depths(uint32_t deepest) {
  std::vector<uint32_t> out;
  for (uint32_t d = 1; d <= deepest && out.size() < kMachineDepths;
       d = d < kEveryDepthUpTo ? d + 1 : d + d / 4)
    out.push_back(d);
  out.push_back(deepest);
  return out;
}

struct MissingDepth {
  uint32_t depth;
};

}  // namespace

StreamCutoffAdvice stream_advise_cutoffs(const CutoffScan& scan,
                                         const std::function<void(model::StrandSink&)>& read,
                                         const TaskSiteTest& is_task_site, size_t recursions,
                                         double target, uint64_t per_task,
                                         const CutoffMachine& machine) {
  StreamCutoffAdvice out;
  std::vector<Recursion> groups = scan.recursions();
  if (groups.empty()) return out;
  CutoffExtents extents_pass(groups, is_task_site, scan.pace());
  read(extents_pass);
  ++out.passes;
  const std::vector<RecursionExtent> extents = extents_pass.extents();
  const PaceTable& pace = extents_pass.pace();
  std::vector<size_t> order;
  for (size_t r = 0; r < groups.size(); ++r) {
    groups[r].max_depth = extents[r].max_depth;
    groups[r].scope_site = extents[r].scope_site;
    if (groups[r].max_depth >= 2) order.push_back(r);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return groups[a].tasks > groups[b].tasks; });
  if (order.size() > recursions) order.resize(recursions);
  for (size_t r : order) {
    const Recursion& rec = groups[r];
    const RecursionExtent& extent = extents[r];
    const uint32_t deepest = std::max(1u, rec.max_depth);
    std::map<uint32_t, std::pair<CutoffLevel, std::string>> known;  // by depth: level, why not
    uint64_t work = 0;
    std::vector<uint32_t> wanted = first_depths(deepest);
    CutoffSource source;
    source.max_depth = rec.max_depth;
    source.scope = 0;
    source.tasks_within = [&extent](uint32_t cut) {
      uint64_t n = 0;
      for (uint32_t d = 1; d <= cut && d < extent.tasks_at.size(); ++d) n += extent.tasks_at[d];
      return n;
    };
    source.depth = [&](uint32_t d, bool) {
      d = std::min(d, deepest);
      auto it = known.find(d);
      if (it == known.end()) throw MissingDepth{d};
      if (!it->second.second.empty()) throw CutoffDepthNotExact(it->second.second);
      CutoffLevel l = it->second.first;
      l.tasks_kept = source.tasks_within(d);
      l.parallelism = parallelism_of(work, l.span);
      l.burdened_parallelism = parallelism_of(work, l.burdened_span);
      return l;
    };
    for (;;) {
      if (!wanted.empty()) {
        StreamCutoffPass pass(rec, extent, is_task_site, pace, wanted, per_task);
        read(pass);
        ++out.passes;
        const StreamCutoffPass::Result result = pass.finish();
        work = result.work;
        for (size_t k = 0; k < result.levels.size(); ++k)
          known[result.levels[k].depth] = {result.levels[k], result.why[k]};
        wanted.clear();
      }
      source.work = work;
      try {
        CutoffAdvice a = advise_cutoff(rec, source, target, per_task, 2, machine);
        a.recursion.scope_site = rec.scope_site;
        out.cutoffs.push_back(std::move(a));
        break;
      } catch (const MissingDepth& missing) {
        // The search narrows a bracket: evaluate it through at once, a pass for many steps.
        auto above = known.upper_bound(missing.depth);
        const uint32_t hi = above == known.end() ? deepest : above->first;
        const uint32_t lo = above == known.begin() ? 1 : std::prev(above)->first;
        const uint32_t step = std::max(1u, (hi - lo) / static_cast<uint32_t>(kMachineDepths));
        for (uint32_t d = lo + 1; d < hi; d += step) wanted.push_back(d);
        wanted.push_back(missing.depth);
      } catch (const CutoffDepthNotExact& e) {
        out.not_evaluated.push_back(e.what());
        break;
      }
    }
  }
  return out;
}

}  // namespace tasklens::analysis
