// The simulator's graph and the overheads from one pass (analysis/stream_predict.hpp).
#include "analysis/stream_predict.hpp"

#include <algorithm>

#include "analysis/algebra.hpp"
#include "model/builder.hpp"

namespace tasklens::analysis {

OverheadCost GapSketch::trimmed_mean() {
  if (count_ <= exact_limit_) return analysis::trimmed_mean(exact_);
  if (exact()) return counted_trimmed_mean();
  // Some larger values in buckets: every value into them, then the buckets' account.
  for (uint64_t v = 0; v < kSmall; ++v) {
    if (small_[v] == 0) continue;
    const size_t b = QuantileSketch::bucket_of(v);
    if (b >= counts_.size()) {
      counts_.resize(b + 1, 0);
      sums_.resize(b + 1, 0);
    }
    counts_[b] += small_[v];
    sums_[b] += small_[v] * v;
  }
  small_.assign(kSmall, 0);
  OverheadCost c;
  c.samples = count_;
  // The median: the value at index count / 2 of the sorted gaps (its bucket's lower end).
  uint64_t median = 0;
  for (uint64_t b = 0, seen = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen > count_ / 2) {
      median = QuantileSketch::lower_of(b);
      break;
    }
  }
  uint64_t keep = count_ - count_ / 100;
  if (median > 0) {
    uint64_t within = 0;  // gaps at most kGapOutlier times the median (by bucket)
    for (uint64_t b = 0; b < counts_.size() && QuantileSketch::lower_of(b) <= kGapOutlier * median;
         ++b)
      within += counts_[b];
    keep = std::min(keep, within);
  }
  // The sum of the `keep` smallest: whole buckets, then part of one at its mean.
  double sum = 0;
  uint64_t left = keep;
  for (uint64_t b = 0; b < counts_.size() && left > 0; ++b) {
    if (counts_[b] <= left) {
      sum += double(sums_[b]);
      left -= counts_[b];
    } else {
      sum += double(sums_[b]) / double(counts_[b]) * double(left);
      left = 0;
    }
  }
  c.ticks = keep ? sum / double(keep) : 0;
  return c;
}

// predict.hpp's trimmed_mean on the values as counted (below kSmall) and kept (the others): the
// same median, the same values kept, the same sum.
OverheadCost GapSketch::counted_trimmed_mean() {
  std::sort(large_.begin(), large_.end());
  OverheadCost c;
  c.samples = count_;
  uint64_t small_count = 0;
  for (uint64_t n : small_) small_count += n;
  auto value_at = [&](uint64_t rank) {  // the value at `rank` of the sorted values
    if (rank >= small_count) return large_[rank - small_count];
    for (uint64_t v = 0, seen = 0;; ++v)
      if ((seen += small_[v]) > rank) return v;
  };
  uint64_t keep = count_ - count_ / 100;
  const uint64_t median = value_at(count_ / 2);
  if (median > 0) {
    const uint64_t limit = kGapOutlier * median;
    uint64_t within = 0;  // values at most kGapOutlier times the median
    for (uint64_t v = 0; v < kSmall && v <= limit; ++v) within += small_[v];
    within += static_cast<uint64_t>(std::upper_bound(large_.begin(), large_.end(), limit) -
                                    large_.begin());
    keep = std::min(keep, within);
  }
  unsigned __int128 sum = 0;
  uint64_t left = keep;
  for (uint64_t v = 0; v < kSmall && left > 0; ++v) {
    const uint64_t take = std::min(small_[v], left);
    sum += static_cast<unsigned __int128>(take) * v;
    left -= take;
  }
  for (size_t i = 0; i < large_.size() && left > 0; ++i, --left) sum += large_[i];
  c.ticks = keep ? static_cast<double>(sum) / static_cast<double>(keep) : 0;
  return c;
}

namespace {

// Predecessors (node | SimGraph::kSameTask) once per node, sorted, the flag of any of a node's
// kept. Returns how many.
size_t by_node(std::vector<uint32_t>& preds) {
  std::sort(preds.begin(), preds.end());
  size_t distinct = 0;
  for (size_t k = 0; k < preds.size(); ++k) {
    if (distinct > 0 && ((preds[distinct - 1] ^ preds[k]) & ~SimGraph::kSameTask) == 0)
      preds[distinct - 1] |= preds[k];
    else
      preds[distinct++] = preds[k];
  }
  preds.resize(distinct);
  return distinct;
}

}  // namespace

StreamPredict::StreamPredict(uint32_t max_nodes, bool tsc, uint32_t threads, StreamTasks* tasks,
                             uint64_t grain)
    : max_nodes_(std::max<uint32_t>(max_nodes, 16)), tsc_(tsc), tasks_(tasks), grain_(grain) {
  gap_window_ = std::clamp<size_t>((size_t{160} << 20) / 40 / std::max<uint32_t>(threads, 1), 4096,
                                   model::kMaxTaskloopHeld + 4096);
}

void StreamPredict::times(uint64_t start, uint64_t end, uint32_t thread) {
  start_ = start;
  end_ = end;
  thread_ = thread;
}

StreamPredict::Strand StreamPredict::take_handle() {
  if (!free_.empty()) {
    const Strand s = free_.back();
    free_.pop_back();
    return s;
  }
  return static_cast<Strand>(live_.size());
}

template <class T>
void StreamPredict::make_room(std::vector<T>& v, size_t more, size_t limit) {
  const size_t need = v.size() + more;
  if (need <= v.capacity()) return;
  // Past an eighth of the budget the array takes the whole budget at once: doubling from just
  // under it would hold both arrays, nearly three budgets, while it copies.
  const size_t grown = v.capacity() < limit / 8 ? 2 * v.capacity()
                       : v.capacity() < limit   ? limit
                                                : v.capacity() + v.capacity() / 8;
  v.reserve(std::max({need, grown, size_t{64}}));
  peak_graph_bytes_ = std::max(peak_graph_bytes_, graph_bytes());
}

uint64_t StreamPredict::graph_bytes() const {
  return graph_.nodes.capacity() * sizeof(SimGraph::Node) +
         (graph_.pred_begin.capacity() + graph_.preds.capacity() + rep_.capacity() +
          out_edges_.capacity() + new_of_.capacity()) *
             sizeof(uint32_t) +
         (end_in_.capacity() + live_span_.capacity()) * sizeof(uint64_t);
}

uint32_t StreamPredict::add_node(const uint32_t* preds, uint32_t count, SimGraph::Node node) {
  const uint32_t v = static_cast<uint32_t>(graph_.nodes.size());
  // The budget's arrays: max_nodes_ and a few (a strand may add a node per join it names).
  const size_t limit = size_t{max_nodes_} + 64;
  make_room(graph_.nodes, 1, limit);
  make_room(rep_, 1, limit);
  make_room(out_edges_, 1, limit);
  make_room(graph_.pred_begin, 1, limit + 1);
  make_room(graph_.preds, count, 2 * limit);
  graph_.nodes.push_back(node);
  rep_.push_back(v);
  out_edges_.push_back(0);
  graph_.preds.insert(graph_.preds.end(), preds, preds + count);
  graph_.pred_begin.push_back(static_cast<uint32_t>(graph_.preds.size()));
  return v;
}

uint32_t StreamPredict::node_of(Strand s, uint64_t order) {
  Live& j = live_[s];
  if (j.node != kNoNode) return j.node = find(j.node);
  // A join gets its node when a strand first names it, every fold made (the builder folds all
  // before a strand takes the join): one untimed node, or none when its folds are one node.
  std::vector<uint32_t>& f = j.folds;
  for (uint32_t& x : f) x = find(x);
  std::sort(f.begin(), f.end());
  f.erase(std::unique(f.begin(), f.end()), f.end());
  if (f.size() == 1 && grain_ > 0) {
    j.node = f[0];
  } else {
    SimGraph::Node n;
    n.start_class = uint8_t(f.empty() ? StartClass::First : StartClass::Sync);
    n.order = static_cast<uint32_t>(order);
    j.node = add_node(f.data(), static_cast<uint32_t>(f.size()), n);
    j.dist_in = 0;
  }
  f.clear();
  f.shrink_to_fit();
  return j.node;
}

// A node takes a strand (or a node) while it stays within the grain and most of it is one path:
// what it holds beside its longest path is what running it on one worker can add to a path
// through it.
bool StreamPredict::can_join(uint32_t node, uint64_t duration, uint64_t iterations,
                             uint64_t span_in) const {
  const SimGraph::Node& n = graph_.nodes[node];
  const uint64_t work = n.duration + duration;
  return grain_ > 0 && iterations <= 1 && n.iterations <= 1 && work <= grain_ &&
         work - std::min(work, std::max(n.span, span_in)) <= grain_ / kSlackShare;
}

// Adds a strand (or, collapsing again, a node) to `node`: its duration, and its first strand as
// one more inner strand of its class, unless the node had no timed strand yet (a join's node):
// then it starts the node.
void StreamPredict::absorb(uint32_t node, const SimGraph::Node& x, bool is_node, uint64_t span_in) {
  SimGraph::Node& n = graph_.nodes[node];
  n.duration += x.duration;
  n.span = std::max(n.span, span_in);
  if (is_node)
    for (int k = 0; k < 3; ++k) n.inner[k] += x.inner[k];
  if (!x.timed) return;
  if (!n.timed) {
    n.timed = true;
    n.start_class = x.start_class;
    return;
  }
  if (x.start_class != uint8_t(StartClass::First)) ++n.inner[x.start_class - 1];
  graph_.has_inner = true;
}

StreamPredict::Strand StreamPredict::strand(uint64_t work, uint64_t, uint32_t, const Strand* preds,
                                            uint32_t pred_count, const Instance*, uint32_t,
                                            uint64_t iterations, uint32_t, uint64_t order) {
  const bool timed = thread_ != model::kNone && (start_ != 0 || end_ != 0);
  const uint64_t duration = !timed ? 0 : tsc_ ? work : (end_ > start_ ? end_ - start_ : 0);
  ++r_.strands;
  total_duration_ += duration;

  // Its predecessors: the longest path to it, its ready time, its class, its task's strand.
  uint64_t dist = 0, start_in = 0;
  ReadyEnd ready;
  bool through_join = false;
  Strand same = kNoStrand;  // its task's previous strand among them (timed)
  for (uint32_t k = 0; k < pred_count; ++k) {
    const Live& p = live_[preds[k]];
    dist = std::max(dist, p.dist);
    start_in = std::max(start_in, p.dist_in);
    if (later(p.ready, ready)) ready = p.ready;
    through_join = through_join || p.join || !p.timed;
    if (!p.join && p.timed && p.task == key_) same = preds[k];
  }
  const StartClass cls = pred_count == 0                   ? StartClass::First
                         : pred_count >= 2 || through_join ? StartClass::Sync
                         : same != kNoStrand               ? StartClass::Continue
                                                           : StartClass::Spawn;
  dist += iteration_span(duration, iterations);
  if (iterations > 1) ++r_.divisible;
  r_.span = std::max(r_.span, dist);
  r_.work += duration;
  SimGraph::Node mine;
  mine.duration = duration;
  mine.iterations = static_cast<uint32_t>(std::clamp<uint64_t>(iterations, 1, ~uint32_t{0}));
  mine.start_class = uint8_t(cls);
  mine.timed = timed;
  mine.span = duration;
  mine.order = static_cast<uint32_t>(order);

  // Its node: a wait's, collapsed with what it joins (merge_region); or its task's previous
  // strand's, when that node has no successor yet; or one of its own.
  uint32_t node = kNoNode;
  uint64_t dist_in = duration;
  std::vector<uint32_t> region;
  if (merge_region(preds, pred_count, same, mine, node)) {
    push_node(region, node);
  } else {
    scratch_.clear();
    for (uint32_t k = 0; k < pred_count; ++k)
      scratch_.push_back(node_of(preds[k], order) | (preds[k] == same ? SimGraph::kSameTask : 0));
    const size_t distinct = by_node(scratch_);
    const uint32_t only = distinct == 1 ? scratch_[0] & ~SimGraph::kSameTask : kNoNode;
    if (only != kNoNode && same != kNoStrand && !through_join && out_edges_[only] == 0 &&
        can_join(only, duration, iterations, start_in + duration)) {
      node = only;
      dist_in = start_in + duration;
      absorb(node, mine, false, dist_in);
      region = std::move(live_[same].region);
    } else {
      node = add_node(scratch_.data(), static_cast<uint32_t>(distinct), mine);
      // Its predecessors' nodes have one more successor (a wait's folds are not counted).
      for (size_t k = 0; k < distinct; ++k) {
        const uint32_t v = scratch_[k] & ~SimGraph::kSameTask;
        for (uint32_t q = 0; q < pred_count; ++q)
          if (!live_[preds[q]].join && live_[preds[q]].node == v) {
            ++out_edges_[v];
            break;
          }
      }
      // A new stretch of its task: after a wait that was not collapsed, or its first strand.
      if (same != kNoStrand && cls == StartClass::Continue) region = std::move(live_[same].region);
      push_node(region, node);
    }
  }

  // The overheads: the gap before it on its worker, by how it started (measure_overheads).
  if (timed) {
    ++r_.timed_strands;
    if (r_.timed_strands == 1) r_.first = start_, r_.last = end_;
    r_.first = std::min(r_.first, start_);
    r_.last = std::max(r_.last, std::max(start_, end_));
    if (thread_ >= threads_.size()) threads_.resize(thread_ + 1);
    ThreadGaps& t = threads_[thread_];
    if (t.pending.capacity() == 0) t.pending.reserve(gap_window_ + 1);
    t.pending.push_back({start_, order, end_, ready.end, ready.thread, uint8_t(cls)});
    std::push_heap(t.pending.begin(), t.pending.end(), std::greater<Started>());
    if (t.pending.size() > gap_window_) take_gap(thread_);
  }

  const Strand s = take_handle();
  Live& x = live(s);
  x.node = node;
  x.task = key_;
  x.timed = timed;
  x.join = false;
  x.dist = dist;
  x.dist_in = dist_in;
  x.region = std::move(region);
  x.order = order;
  x.ready = timed ? ReadyEnd{end_, order, thread_} : ready;
  if (graph_.nodes.size() > max_nodes_) {
    compact();
    if (graph_.nodes.size() > max_nodes_ / 2) collapse_again();
  }
  return s;
}

StreamPredict::Strand StreamPredict::open_join() {
  const Strand s = take_handle();
  Live& x = live(s);
  x = Live{};
  x.join = true;
  return s;
}

void StreamPredict::fold(Strand join, Strand pred) {
  const uint32_t v = node_of(pred, live_[pred].order);
  Live& p = live_[pred];
  Live& j = live_[join];
  j.dist = std::max(j.dist, p.dist);
  j.dist_in = std::max(j.dist_in, p.dist_in);
  if (later(p.ready, j.ready)) j.ready = p.ready;
  push_node(j.folds, v);
}

// A join may take a fold per task of a whole region (a barrier's, a taskgroup's: a list as long
// as the recording's tasks), and a task's region a node per child a loop creates, while the
// graph has at most max_nodes_ nodes to name: when such a list is full, the nodes it names twice
// go, and it grows only if it stays over half full, so it holds at most about twice the nodes
// it names. (Both are used as sets: node_of and merge_region sort them.)
void StreamPredict::push_node(std::vector<uint32_t>& list, uint32_t node) {
  if (list.size() == list.capacity() && list.size() >= kListKeptAsItComes) {
    for (uint32_t& x : list) x = find(x);
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    if (list.size() > list.capacity() / 2) list.reserve(2 * list.capacity());
  }
  list.push_back(node);
  r_.longest_list = std::max<uint64_t>(r_.longest_list, list.size());
}

void StreamPredict::release(Strand s) {
  // (A handle is taken again: a long list's memory goes with it.)
  for (std::vector<uint32_t>* list : {&live_[s].folds, &live_[s].region})
    if (list->capacity() > kListKeptAsItComes) std::vector<uint32_t>().swap(*list);
  live_[s].folds.clear();
  live_[s].region.clear();
  free_.push_back(s);
}

// A wait (a strand after a join, in the task of `same`) collapses its task's stretch since the
// task's first strand or last wait (the region `same` carries) with the children the join waits
// for, into the region's first node, when that is a subgraph entered at that node alone and left
// by this strand alone, within the grain: every other node of the region has its predecessors
// in it; every child is one node (its whole subtree, collapsed at its own waits), entered from
// the region, with no successor but waits; the region's nodes have no successor but each other
// and the children. Being left only here, the collapsed node makes no successor wait for more
// than it did; what it costs is the parallelism inside it, at most a grain on any path.
bool StreamPredict::merge_region(const Strand* preds, uint32_t count, Strand same,
                                 const SimGraph::Node& mine, uint32_t& into) {
  if (grain_ == 0 || same == kNoStrand || live_[same].region.empty()) return false;
  // Only a wait collapses: without a join among the predecessors nothing below can return
  // true, and the region (every node since the task's last wait: one per child a loop of
  // creates made) is not sorted for each strand of that loop, which was quadratic.
  if (std::none_of(preds, preds + count, [&](Strand p) { return live_[p].join; })) return false;
  members_.clear();
  for (uint32_t x : live_[same].region) members_.push_back(find(x));
  std::sort(members_.begin(), members_.end());
  members_.erase(std::unique(members_.begin(), members_.end()), members_.end());
  const auto in_region = [&](uint32_t v) {
    return std::binary_search(members_.begin(), members_.end(), find(v));
  };
  children_.clear();
  bool joins = false;
  for (uint32_t k = 0; k < count; ++k) {
    const Live& p = live_[preds[k]];
    if (!p.join) {
      if (!in_region(p.node)) return false;
      continue;
    }
    if (p.node != kNoNode) return false;  // (a join another strand named already)
    joins = true;
    for (uint32_t f : p.folds)
      if (!in_region(f)) children_.push_back(find(f));
  }
  if (!joins) return false;
  std::sort(children_.begin(), children_.end());
  children_.erase(std::unique(children_.begin(), children_.end()), children_.end());
  uint64_t work = mine.duration, inside = 0;
  const auto entered_from_region = [&](uint32_t v) {
    for (uint32_t i = graph_.pred_begin[v]; i < graph_.pred_begin[v + 1]; ++i) {
      if (!in_region(graph_.preds[i] & ~SimGraph::kSameTask)) return false;
      ++inside;
    }
    return graph_.pred_begin[v + 1] > graph_.pred_begin[v];
  };
  for (size_t k = 0; k < members_.size(); ++k) {
    work += graph_.nodes[members_[k]].duration;
    if (k > 0 && !entered_from_region(members_[k])) return false;
  }
  for (uint32_t c : children_) {
    const SimGraph::Node& n = graph_.nodes[c];
    work += n.duration;
    if (out_edges_[c] != 0 || n.iterations > 1 || !entered_from_region(c)) return false;
  }
  if (work > grain_) return false;
  uint64_t out = 0;
  for (uint32_t v : members_) out += out_edges_[v];
  if (out != inside) return false;  // a region's node has a successor outside
  into = members_[0];               // (the lowest: the region's first node)
  for (size_t k = 1; k < members_.size(); ++k) {
    absorb(into, graph_.nodes[members_[k]], true, 0);
    rep_[members_[k]] = into;
  }
  for (uint32_t c : children_) {
    absorb(into, graph_.nodes[c], true, 0);
    rep_[c] = into;
  }
  dead_ += members_.size() - 1 + children_.size();
  out_edges_[into] = 0;
  absorb(into, mine, false, 0);
  return true;
}

// The graph without the nodes collapsed into others: node ids renumbered in the same order, in
// place (a node's new number is at most its old one, and so is where its predecessors go), so
// that compacting never holds two graphs.
void StreamPredict::compact() {
  if (dead_ == 0) return;
  const uint32_t n = static_cast<uint32_t>(graph_.nodes.size());
  // New numbers: the standing nodes' in order, then each collapsed one takes its root's.
  new_of_.assign(n, kNoNode);
  uint32_t next = 0;
  for (uint32_t v = 0; v < n; ++v)
    if (find(v) == v) new_of_[v] = next++;
  for (uint32_t v = 0; v < n; ++v) new_of_[v] = new_of_[find(v)];
  peak_graph_bytes_ = std::max(peak_graph_bytes_, graph_bytes());
  std::vector<uint32_t>& begin = graph_.pred_begin;
  std::vector<uint32_t>& preds = graph_.preds;
  size_t written = 0;
  uint32_t lo = begin[0];
  for (uint32_t v = 0; v < n; ++v) {
    const uint32_t hi = begin[v + 1];
    if (rep_[v] == v) {  // standing: its own root
      const uint32_t k = new_of_[v];
      for (uint32_t i = lo; i < hi; ++i)
        preds[written++] =
            new_of_[preds[i] & ~SimGraph::kSameTask] | (preds[i] & SimGraph::kSameTask);
      graph_.nodes[k] = graph_.nodes[v];
      begin[k + 1] = static_cast<uint32_t>(written);
    }
    lo = hi;
  }
  for (Live& l : live_)
    if (l.node != kNoNode) l.node = new_of_[l.node];
  end_rewrite(next, written);
  dead_ = 0;
}

// The end of an in-place rewrite (compact, collapse_again) that kept `nodes` nodes and `preds`
// predecessors: the arrays cut there, every node its own root, the successor counts taken again,
// and the live strands' lists renumbered by new_of_ (their own nodes are the caller's).
void StreamPredict::end_rewrite(uint32_t nodes, size_t preds) {
  graph_.nodes.resize(nodes);
  graph_.pred_begin.resize(size_t{nodes} + 1);
  graph_.preds.resize(preds);
  rep_.resize(nodes);
  for (uint32_t v = 0; v < nodes; ++v) rep_[v] = v;
  out_edges_.assign(nodes, 0);
  for (uint32_t p : graph_.preds) ++out_edges_[p & ~SimGraph::kSameTask];
  for (Live& l : live_) {
    for (uint32_t& f : l.folds) f = new_of_[f];
    for (uint32_t& x : l.region) x = new_of_[x];
  }
}

// The graph collapsed again with a larger grain, by the same rule, in its order (a topological
// one): a node whose predecessors all went to one new node joins it if the grain allows. In
// place, as compact().
void StreamPredict::collapse_again() {
  do {
    grain_ = std::max({grain_ * 2, uint64_t{1}, 4 * total_duration_ / max_nodes_});
    const uint32_t n = static_cast<uint32_t>(graph_.nodes.size());
    new_of_.assign(n, kNoNode);
    // Per old node: the longest path inside its new node ending at its end, taking the old
    // node as one path of its span.
    end_in_.assign(n, 0);
    // The live strands' nodes' spans before their nodes are rewritten.
    live_span_.assign(live_.size(), 0);
    for (size_t s = 0; s < live_.size(); ++s)
      if (live_[s].node != kNoNode) live_span_[s] = graph_.nodes[live_[s].node].span;
    peak_graph_bytes_ = std::max(peak_graph_bytes_, graph_bytes());
    std::vector<uint32_t>& begin = graph_.pred_begin;
    std::vector<uint32_t>& preds = graph_.preds;
    uint32_t next = 0;
    size_t written = 0;
    uint32_t lo = begin[0];
    for (uint32_t v = 0; v < n; ++v) {
      const uint32_t hi = begin[v + 1];
      uint64_t start_in = 0;
      scratch_.clear();
      for (uint32_t i = lo; i < hi; ++i) {
        const uint32_t p = preds[i] & ~SimGraph::kSameTask;
        start_in = std::max(start_in, end_in_[p]);
        scratch_.push_back(new_of_[p] | (preds[i] & SimGraph::kSameTask));
      }
      lo = hi;
      const size_t distinct = by_node(scratch_);
      const SimGraph::Node x = graph_.nodes[v];
      const uint32_t into = distinct == 1 ? scratch_[0] & ~SimGraph::kSameTask : kNoNode;
      if (into != kNoNode && can_join(into, x.duration, x.iterations, start_in + x.span)) {
        end_in_[v] = start_in + x.span;
        absorb(into, x, true, end_in_[v]);
        new_of_[v] = into;
      } else {
        end_in_[v] = x.span;
        new_of_[v] = next;
        graph_.nodes[next] = x;
        std::copy(scratch_.begin(), scratch_.begin() + distinct, preds.begin() + written);
        written += distinct;
        begin[++next] = static_cast<uint32_t>(written);
      }
    }
    for (size_t s = 0; s < live_.size(); ++s) {
      Live& l = live_[s];
      if (l.node != kNoNode) {
        l.dist_in += end_in_[l.node] - live_span_[s];
        l.node = new_of_[l.node];
      }
    }
    end_rewrite(next, written);
  } while (graph_.nodes.size() > max_nodes_ / 2);
}

// The earliest strand waiting on `thread`: the gap before it (measure_overheads's).
void StreamPredict::take_gap(uint32_t thread) {
  ThreadGaps& t = threads_[thread];
  std::pop_heap(t.pending.begin(), t.pending.end(), std::greater<Started>());
  const Started u = t.pending.back();
  t.pending.pop_back();
  if (t.busy_until == kNoTime) {  // its worker's first strand
    ++r_.workers;
    t.busy_until = u.end;
    return;
  }
  const uint64_t worker_free = t.busy_until;
  t.busy_until = std::max(t.busy_until, u.end);
  if (u.ready_thread == model::kNone) return;
  const uint64_t free = std::max(u.ready, worker_free);
  const uint64_t gap = u.start > free ? u.start - free : 0;
  if (u.ready_thread != thread)
    steal_.add(gap);
  else if (u.start_class == uint8_t(StartClass::Sync))
    sync_.add(gap);
  else if (u.start_class == uint8_t(StartClass::Spawn))
    spawn_.add(gap);
  else
    cont_.add(gap);
}

StreamPredict::Result StreamPredict::finish() {
  for (uint32_t t = 0; t < threads_.size(); ++t)
    while (!threads_[t].pending.empty()) take_gap(t);
  compact();
  Result r = std::move(r_);
  r.grain = grain_;
  r.peak_graph_bytes = peak_graph_bytes_;
  // What only the pass needed goes before the simulator is built from the graph.
  for (std::vector<uint32_t>* v : {&rep_, &out_edges_, &new_of_, &members_, &children_})
    std::vector<uint32_t>().swap(*v);
  std::vector<uint64_t>().swap(live_span_);
  std::vector<Live>().swap(live_);
  // The graph's longest path, each node run whole (loop iterations seen together still weigh
  // one iteration's share, as they split when run).
  std::vector<uint64_t>& dist = end_in_;
  dist.assign(graph_.nodes.size(), 0);
  for (uint32_t v = 0; v < graph_.nodes.size(); ++v) {
    uint64_t d = 0;
    for (uint32_t i = graph_.pred_begin[v]; i < graph_.pred_begin[v + 1]; ++i)
      d = std::max(d, dist[graph_.preds[i] & ~SimGraph::kSameTask]);
    dist[v] = d + iteration_span(graph_.nodes[v].duration, graph_.nodes[v].iterations);
    r.collapsed_span = std::max(r.collapsed_span, dist[v]);
  }
  std::vector<uint64_t>().swap(end_in_);
  r.graph = std::move(graph_);
  r.overheads.spawn = spawn_.trimmed_mean();
  r.overheads.steal = steal_.trimmed_mean();
  r.overheads.sync = sync_.trimmed_mean();
  r.overheads.cont = cont_.trimmed_mean();
  r.overheads_exact = spawn_.exact() && steal_.exact() && sync_.exact() && cont_.exact();
  return r;
}

}  // namespace tasklens::analysis
