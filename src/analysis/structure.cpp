// The construct tree's aggregates and the timeline's slices (structure.hpp).
#include "analysis/structure.hpp"

#include <algorithm>
#include <tuple>

namespace tasklens::analysis {

uint32_t ConstructTrie::resolve(uint32_t g) const {
  while (groups_[g].folded_into != kNoGroup) g = groups_[g].folded_into;
  return g;
}

ConstructTrie::Placed ConstructTrie::add_node(uint32_t parent_group, uint32_t site,
                                              model::NodeKind kind) {
  if (parent_group == kNoGroup) {
    if (groups_.empty()) {
      groups_.emplace_back();
      groups_[0].kind = kind;
      groups_[0].site = site;
      at_depth_.assign(1, 1);
      active_ = 1;
    }
    ++groups_[0].count;
    return {0, true};
  }
  // Below the depth kept, a node counts in its ancestor's group at that depth.
  if (groups_[parent_group].folded_into != kNoGroup) return {resolve(parent_group), false};
  if (groups_[parent_group].depth >= depth_limit_) return {parent_group, false};
  const uint64_t key = (uint64_t{parent_group} << 32 | site) * 16 + static_cast<uint8_t>(kind);
  auto it = child_of_.find(key);
  if (it == child_of_.end()) {
    it = child_of_.emplace(key, static_cast<uint32_t>(groups_.size())).first;
    Group g;
    g.parent = parent_group;
    g.depth = groups_[parent_group].depth + 1;
    g.kind = kind;
    g.site = site;
    if (at_depth_.size() <= g.depth) at_depth_.resize(g.depth + 1, 0);
    ++at_depth_[g.depth];
    ++active_;
    groups_.push_back(std::move(g));
    groups_[parent_group].children.push_back(it->second);
  }
  const uint32_t g = it->second;  // (before a fold, which erases entries of the map)
  if (active_ > max_groups_) fold_deepest();
  if (groups_[g].folded_into != kNoGroup) return {resolve(g), false};
  ++groups_[g].count;
  return {g, true};
}

void ConstructTrie::fold_deepest() {
  capped_ = true;
  // The deepest level whose groups and all above them fit in three quarters of the room (so
  // that folding is rare), at least the root's.
  uint64_t kept = 0;
  uint32_t limit = 0;
  for (uint32_t d = 0; d < at_depth_.size(); ++d) {
    if (kept + at_depth_[d] > max_groups_ / 4 * 3 && d > 0) break;
    kept += at_depth_[d];
    limit = d;
  }
  depth_limit_ = limit;
  // Parents come before children: a group's ancestor at the limit is its parent, or where its
  // parent went.
  for (uint32_t g = 1; g < groups_.size(); ++g) {
    Group& x = groups_[g];
    if (x.folded_into != kNoGroup || x.depth <= limit) continue;
    const uint32_t to = groups_[x.parent].depth == limit ? x.parent : resolve(x.parent);
    Group& a = groups_[to];
    a.below_work += x.own_work + x.below_work;
    a.below_strands += x.own_strands + x.below_strands;
    a.below_critical += x.own_critical + x.below_critical;
    --at_depth_[x.depth];
    --active_;
    child_of_.erase((uint64_t{x.parent} << 32 | x.site) * 16 + static_cast<uint8_t>(x.kind));
    Group folded;  // (its totals went to `to`; its children are folded too)
    folded.parent = x.parent;
    folded.depth = x.depth;
    folded.kind = x.kind;
    folded.site = x.site;
    folded.folded_into = to;
    x = std::move(folded);
  }
  for (Group& x : groups_)
    if (x.depth == limit && x.folded_into == kNoGroup) std::vector<uint32_t>().swap(x.children);
}

std::vector<ConstructTrie::Aggregate> ConstructTrie::aggregates(
    size_t max_nodes, std::vector<uint32_t>& listed_of) const {
  std::vector<Aggregate> out;
  listed_of.assign(groups_.size(), kNoGroup);
  if (groups_.empty()) return out;
  // Subtree totals: a group's children come after it.
  std::vector<uint64_t> work(groups_.size()), strands(groups_.size()), critical(groups_.size());
  for (size_t g = groups_.size(); g-- > 0;) {
    const Group& x = groups_[g];
    work[g] += x.own_work + x.below_work;
    strands[g] += x.own_strands + x.below_strands;
    critical[g] += x.own_critical + x.below_critical;
    if (x.parent != kNoGroup) {
      work[x.parent] += work[g];
      strands[x.parent] += strands[g];
      critical[x.parent] += critical[g];
    }
  }
  auto listed = [&](uint32_t g, uint32_t parent) {
    const Group& x = groups_[g];
    Aggregate a;
    a.group = g;
    a.parent = parent;
    a.depth = x.depth;
    a.kind = x.kind;
    a.site = x.site;
    a.count = x.count;
    a.work = work[g];
    a.own_work = x.own_work;
    a.strands = strands[g];
    a.critical = critical[g];
    listed_of[g] = static_cast<uint32_t>(out.size());
    out.push_back(a);
  };
  listed(0, kNoGroup);
  max_nodes = std::max<size_t>(max_nodes, 1);
  std::vector<uint32_t> children;
  for (size_t a = 0; a < out.size(); ++a) {
    children = groups_[out[a].group].children;
    if (children.empty()) continue;
    // The heaviest first (then the most strands, the most nodes, then by kind and site: two
    // children never tie): the order the page lists them in, the same whatever order the nodes
    // were added in.
    std::sort(children.begin(), children.end(), [&](uint32_t x, uint32_t y) {
      const Group &a = groups_[x], &b = groups_[y];
      return std::make_tuple(~work[x], ~strands[x], ~a.count, a.kind, a.site) <
             std::make_tuple(~work[y], ~strands[y], ~b.count, b.kind, b.site);
    });
    if (out.size() + children.size() > max_nodes) {
      out[a].cut = true;
      continue;
    }
    for (uint32_t c : children) listed(c, static_cast<uint32_t>(a));
  }
  // Groups below a cut take their nearest listed ancestor's aggregate (parents come first).
  for (size_t g = 1; g < groups_.size(); ++g)
    if (listed_of[g] == kNoGroup) listed_of[g] = listed_of[groups_[g].parent];
  return out;
}

void TimelineBounds::add(uint64_t start, uint64_t end, uint32_t thread) {
  if (!timed_strand(start, end, thread)) return;
  first = std::min(first, start);
  last = std::max(last, end);
  ++timed;
  if (threads.empty() || threads.back() != thread) threads.push_back(thread);
  // (Kept small: sorted and made unique whenever it doubled, so a run of many threads stays
  // linear.)
  if (threads.size() > 2 * unique_threads_ + 64) {
    finish();
    unique_threads_ = threads.size();
  }
}

void TimelineBounds::finish() {
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
}

bool TimelineSlices::Slice::operator<(const Slice& o) const {
  return std::tie(begin, end, busy, site, group, strands) <
         std::tie(o.begin, o.end, o.busy, o.site, o.group, o.strands);
}

TimelineSlices::TimelineSlices(const TimelineBounds& bounds, size_t max_slices) : bounds_(bounds) {
  bounds_.finish();
  workers_.resize(bounds_.threads.size());
  for (size_t w = 0; w < workers_.size(); ++w) workers_[w].thread = bounds_.threads[w];
  if (empty()) return;
  merged_ = bounds_.timed > max_slices;
  if (!merged_) return;
  const uint64_t elapsed = bounds_.last - bounds_.first;
  buckets_ = std::max<uint64_t>(1, max_slices / workers_.size());
  width_ = std::max<uint64_t>(1, (elapsed + buckets_ - 1) / buckets_);
  grid_.assign(workers_.size(), std::vector<Bucket>(buckets_));
}

size_t TimelineSlices::worker_of(uint32_t thread) const {
  return static_cast<size_t>(
      std::lower_bound(bounds_.threads.begin(), bounds_.threads.end(), thread) -
      bounds_.threads.begin());
}

void TimelineSlices::add(uint64_t start, uint64_t end, uint32_t thread, uint32_t site,
                         uint32_t group) {
  if (empty() || !TimelineBounds::timed_strand(start, end, thread)) return;
  const size_t w = worker_of(thread);
  if (w >= workers_.size() || workers_[w].thread != thread) return;  // (not in the bounds)
  const uint64_t b = start - bounds_.first, e = end - bounds_.first;
  Worker& worker = workers_[w];
  worker.busy += e - b;
  worker.strands += 1;
  if (!merged_) {
    worker.slices.push_back({b, e, e - b, site, group, 1});
    return;
  }
  // The strand's piece in every bucket it overlaps ([b, e), at least its start bucket).
  for (uint64_t k = std::min(b / width_, buckets_ - 1);; ++k) {
    const uint64_t lo = std::max(b, k * width_), hi = std::min(e, (k + 1) * width_);
    Bucket& bucket = grid_[w][k];
    const uint64_t piece = hi > lo ? hi - lo : 0;
    bucket.begin = std::min(bucket.begin, lo);
    bucket.end = std::max(bucket.end, std::max(lo, hi));
    bucket.busy += piece;
    bucket.strands += 1;
    auto it = std::find_if(bucket.sites.begin(), bucket.sites.end(),
                           [&](const BucketSite& x) { return x.site == site; });
    if (it == bucket.sites.end()) {
      bucket.sites.push_back({site, 0, piece, lo, group});
      it = bucket.sites.end() - 1;
    } else if (std::make_tuple(piece, ~lo, ~group) >
               std::make_tuple(it->longest, ~it->longest_at, ~it->group)) {
      it->longest = piece;  // the longest piece; ties: the earliest, then the smaller group
      it->longest_at = lo;
      it->group = group;
    }
    it->time += piece;
    if (hi >= e || k + 1 >= buckets_) break;
  }
}

std::vector<TimelineSlices::Worker> TimelineSlices::finish() {
  if (merged_) {
    for (size_t w = 0; w < workers_.size(); ++w) {
      for (const Bucket& bucket : grid_[w]) {
        if (bucket.strands == 0) continue;
        const BucketSite* top = &bucket.sites[0];
        for (const BucketSite& x : bucket.sites)
          if (x.time > top->time || (x.time == top->time && x.site < top->site)) top = &x;
        workers_[w].slices.push_back(
            {bucket.begin, bucket.end, bucket.busy, top->site, top->group, bucket.strands});
      }
    }
    grid_.clear();
  } else {
    for (Worker& w : workers_) std::sort(w.slices.begin(), w.slices.end());
  }
  return std::move(workers_);
}

}  // namespace tasklens::analysis
