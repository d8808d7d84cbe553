// The one-pass profile (stream_profile.hpp) and the replay of a model through it.
#include "analysis/stream_profile.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "analysis/algebra.hpp"
#include "errors.hpp"
#include "model/slots.hpp"

namespace tasklens::analysis {

using model::kNone;

// ---- StreamProfile

using model::take_slot;

StreamProfile::StreamProfile(uint32_t num_sites, uint64_t log_block_entries)
    : sites_as_they_come_(num_sites == kSitesAsTheyCome),
      rows_(sites_as_they_come_ ? 0 : num_sites),
      present_(rows_.size(), 0),
      log_(log_block_entries) {}

StreamProfile::Instance StreamProfile::open_instance(uint32_t site) {
  const Instance i = take_slot(instances_, free_instances_);
  instances_[i] = Open{site, next_serial_++, true, true, 0, 0};
  if (is_row(site)) {
    ++rows_[site].count;
    present_[site] = 1;
  }
  return i;
}

void StreamProfile::close_instance(Instance i) {
  Open& open = instances_[i];
  if (open.outermost && is_row(open.site)) {
    rows_[open.site].work += open.work;
    rows_[open.site].span += open.span;
  }
  open.open = false;
  free_instances_.push_back(i);
}

StreamProfile::Strand StreamProfile::strand(uint64_t work, uint64_t span_weight, uint32_t site,
                                            const Strand* preds, uint32_t pred_count,
                                            const Instance* instances, uint32_t instance_count,
                                            uint64_t iterations, uint32_t /*fragment*/,
                                            uint64_t order) {
  span_weight = iteration_span(span_weight, iterations);
  const uint64_t arrival = arrivals_++;
  if (order == kArrival) order = arrival;
  // The longest path here, ties going to the strand met first (as in longest_path). An empty
  // join brings no path.
  uint64_t longest = 0, longest_order = 0, via = PathLog::kNoVia;
  last_winner_ = kNoWinner;
  for (uint32_t k = 0; k < pred_count; ++k) {
    const Live& p = live_[preds[k]];
    if (p.arrival == PathLog::kNoVia) continue;
    if (via == PathLog::kNoVia || longer_path(p.dist, p.order, longest, longest_order)) {
      longest = p.dist;
      longest_order = p.order;
      via = p.arrival;
      last_winner_ = k;
    }
  }
  const uint64_t here = longest + span_weight;
  log_.push(via, site, span_weight);
  // Of the strands reaching the span, the path ends at the one met last (as in longest_path).
  if (arrival == 0 || here > best_ || (here == best_ && order > best_order_)) {
    best_ = here;
    best_end_ = arrival;
    best_order_ = order;
  }
  work_ += work;
  if (is_row(site)) present_[site] = 1;

  const Strand s = take_slot(live_, free_strands_);
  peak_live_ = std::max(peak_live_, ++live_count_);
  // The distances inside each instance: only predecessors inside the same instance count.
  // (live_ does not grow below: `me` stays valid.)
  Live& me = live_[s];
  me.dist = here;
  me.arrival = arrival;
  me.order = order;
  me.inside_count = 0;
  me.more.clear();
  for (uint32_t j = 0; j < instance_count; ++j) {
    Open& open = instances_[instances[j]];
    if (!open.outermost) continue;  // its figures are not kept
    uint64_t inner = 0;
    for (uint32_t k = 0; k < pred_count; ++k) {
      const Live& p = live_[preds[k]];
      // A predecessor's instances come in the same order (outermost first) as this strand's,
      // so the j-th is the likely match.
      if (j < p.inside_count && j < kInline && p.inside[j].instance == instances[j] &&
          p.inside[j].serial == open.serial) {
        inner = std::max(inner, p.inside[j].dist);
        continue;
      }
      for (uint32_t i = 0; i < p.inside_count; ++i) {
        const Distance& d = p.at(i);
        if (d.instance == instances[j] && d.serial == open.serial) {
          inner = std::max(inner, d.dist);
          break;
        }
      }
    }
    const uint64_t d = inner + span_weight;
    open.work += work;
    open.span = std::max(open.span, d);
    const Distance entry{instances[j], open.serial, d};
    if (me.inside_count < kInline)
      me.inside[me.inside_count] = entry;
    else
      me.more.push_back(entry);
    ++me.inside_count;
  }
  return s;
}

StreamProfile::Strand StreamProfile::open_join() {
  const Strand j = take_slot(live_, free_strands_);
  peak_live_ = std::max(peak_live_, ++live_count_);
  Live& me = live_[j];
  me.dist = 0;
  me.arrival = PathLog::kNoVia;  // nothing folded yet: it brings no path
  me.inside_count = 0;
  me.more.clear();
  return j;
}

void StreamProfile::fold(Strand join, Strand pred) {
  Live& j = live_[join];
  const Live& p = live_[pred];
  last_fold_won_ = false;
  if (p.arrival == PathLog::kNoVia) return;  // an empty join
  // The winner as among a strand's predecessors: a join only groups them.
  if (j.arrival == PathLog::kNoVia || longer_path(p.dist, p.order, j.dist, j.order)) {
    j.dist = p.dist;
    j.arrival = p.arrival;
    j.order = p.order;
    last_fold_won_ = true;
  }
  // Its distances inside the instances still open: the longest of each, an entry per instance.
  // Entries of closed instances are dropped first, so that a join lives in as many entries as
  // instances are open around what it joins.
  uint32_t kept = 0;
  for (uint32_t k = 0; k < j.inside_count; ++k) {
    const Distance d = j.at(k);
    const Open& o = instances_[d.instance];
    if (!o.open || o.serial != d.serial) continue;
    if (kept < kInline)
      j.inside[kept] = d;
    else
      j.more[kept - kInline] = d;
    ++kept;
  }
  j.inside_count = kept;
  if (!j.more.empty()) j.more.resize(kept > kInline ? kept - kInline : 0);
  for (uint32_t i = 0; i < p.inside_count; ++i) {
    const Distance& d = p.at(i);
    const Open& o = instances_[d.instance];
    if (!o.open || o.serial != d.serial) continue;
    auto same = [&](uint32_t k) {
      const Distance& x = j.at(k);
      return x.instance == d.instance && x.serial == d.serial;
    };
    // What a join folds lies in the same instances, outermost first, as a rule: the i-th is
    // the likely match (as in strand()).
    uint32_t k = i;
    if (!(i < j.inside_count && same(i)))
      for (k = 0; k < j.inside_count && !same(k);) ++k;
    if (k == j.inside_count) {
      if (k < kInline)
        j.inside[k] = d;
      else
        j.more.push_back(d);
      ++j.inside_count;
    } else {
      Distance& mine = k < kInline ? j.inside[k] : j.more[k - kInline];
      mine.dist = std::max(mine.dist, d.dist);
    }
  }
}

void StreamProfile::release(Strand s) {
  free_strands_.push_back(s);
  --live_count_;
}

Profile StreamProfile::finish(bool with_path, std::vector<uint64_t>* path_strands,
                              std::vector<std::pair<uint64_t, uint64_t>>* path_weights) {
  if (path_strands) path_strands->assign(rows_.size(), 0);
  Profile profile;
  profile.work = work_;
  profile.span = arrivals_ == 0 ? 0 : best_;
  profile.parallelism = parallelism_of(profile.work, profile.span);
  // One walk back along the winning predecessors: each site's exclusive share of the path.
  const bool path_fits = arrivals_ <= uint64_t{UINT32_MAX};
  if (arrivals_ > 0) {
    for (uint64_t s = best_end_; s != PathLog::kNoVia;) {
      const PathLog::Entry e = log_.at(s);
      if (e.site != PathLog::kNoSite && e.site < rows_.size()) {
        rows_[e.site].critical_work += e.weight;
        if (path_strands) ++(*path_strands)[e.site];
      }
      if (with_path && path_fits) profile.critical_path.push_back(static_cast<uint32_t>(s));
      if (path_weights) path_weights->emplace_back(s, e.weight);
      s = e.via;
    }
    std::reverse(profile.critical_path.begin(), profile.critical_path.end());
    if (path_weights) std::reverse(path_weights->begin(), path_weights->end());
  }
  finish_site_rows(profile, rows_, present_);
  return profile;
}

// ---- The replay of a model

namespace {

// Values grouped by a key in [0, keys): values_of(k) in the order they were added. One array for
// all keys (a vector per strand would cost an allocation each).
class Buckets {
 public:
  explicit Buckets(size_t keys) : begin_(keys + 1, 0) {}
  void count(size_t key) { ++begin_[key + 1]; }
  void lay_out() {
    for (size_t k = 1; k < begin_.size(); ++k) begin_[k] += begin_[k - 1];
    values_.resize(begin_.back());
    fill_.assign(begin_.begin(), begin_.end() - 1);
  }
  void add(size_t key, uint32_t value) { values_[fill_[key]++] = value; }
  auto values_of(size_t key) const {
    struct Range {
      const uint32_t *b, *e;
      const uint32_t* begin() const { return b; }
      const uint32_t* end() const { return e; }
    };
    return Range{values_.data() + begin_[key], values_.data() + begin_[key + 1]};
  }

 private:
  std::vector<uint32_t> begin_, values_, fill_;
};

}  // namespace

ProfileTape::ProfileTape(const model::Model& m, const Weights* weights) {
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  const uint32_t num_sites = static_cast<uint32_t>(m.sites.size());
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());
  num_sites_ = num_sites;
  strands_ = n;
  auto put64 = [&](uint64_t v) {
    words_.push_back(static_cast<uint32_t>(v));
    words_.push_back(static_cast<uint32_t>(v >> 32));
  };
  // An instance of group g opens: kOpen g site outermost.
  auto open = [&](uint32_t g, uint32_t site, bool outermost) {
    words_.insert(words_.end(), {kOpen, g, site, outermost ? 1u : 0u});
  };
  auto close = [&](uint32_t g) { words_.insert(words_.end(), {kClose, g}); };
  auto strand_end = [&](uint32_t v) { return std::min(m.nodes[v].strand_end, n); };

  // The instances (profile.hpp): the sited nodes grouped by (site, instance id), a node without
  // an instance id one by itself; the root for the Program site when no node carries it.
  const std::vector<uint8_t> nested = nested_nodes(m, num_sites);
  std::vector<uint32_t> group_of(num_nodes, kNone);
  struct Group {
    uint32_t site;
    uint32_t begin = UINT32_MAX, end = 0;  // strands [begin, end) cover its nodes
    bool outermost = true;
  };
  std::vector<Group> groups;
  {
    // An instance id's group for the first site met with it; other sites (not made by the
    // builder, possible in a damaged trace) in a map.
    std::vector<uint32_t> first_group(m.instance_count, kNone);
    std::unordered_map<uint64_t, uint32_t> other_sites;
    for (uint32_t v = 0; v < num_nodes; ++v) {
      const model::Node& node = m.nodes[v];
      if (node.site >= num_sites) continue;
      uint32_t g = static_cast<uint32_t>(groups.size());
      if (node.instance < m.instance_count &&
          (first_group[node.instance] == kNone ||
           groups[first_group[node.instance]].site == node.site)) {
        if (first_group[node.instance] == kNone) first_group[node.instance] = g;
        g = first_group[node.instance];
      } else if (node.instance != kNone) {
        g = other_sites.try_emplace(uint64_t{node.site} << 32 | node.instance, g).first->second;
      }
      if (g == groups.size()) groups.push_back({node.site});
      group_of[v] = g;
      groups[g].begin = std::min(groups[g].begin, std::min(node.strand_begin, n));
      groups[g].end = std::max(groups[g].end, strand_end(v));
      if (nested[v]) groups[g].outermost = false;
    }
  }
  bool root_for_program = num_sites > 0 && num_nodes > 0;
  for (const Group& g : groups) root_for_program = root_for_program && g.site != 0;
  if (root_for_program) groups.push_back({0, 0, n, true});

  // Instances open at their first strand and close after their last; those without strands
  // open and close at once (they count, and add nothing). Sited nodes join the strands' chain
  // at their first strand and leave it at their end.
  Buckets opening(n + 1), closing(n + 1), node_opening(n + 1), node_closing(n + 1);
  auto node_has_strands = [&](uint32_t v) {
    return group_of[v] != kNone && m.nodes[v].strand_begin < strand_end(v);
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t g = 0; g < groups.size(); ++g) {
      if (groups[g].begin >= groups[g].end) continue;
      pass ? opening.add(groups[g].begin, g) : opening.count(groups[g].begin);
      pass ? closing.add(groups[g].end, g) : closing.count(groups[g].end);
    }
    for (uint32_t v = 0; v < num_nodes; ++v) {
      if (!node_has_strands(v)) continue;
      pass ? node_opening.add(m.nodes[v].strand_begin, v)
           : node_opening.count(m.nodes[v].strand_begin);
      pass ? node_closing.add(strand_end(v), v) : node_closing.count(strand_end(v));
    }
    if (!pass) {
      opening.lay_out();
      closing.lay_out();
      node_opening.lay_out();
      node_closing.lay_out();
    }
  }
  groups_ = static_cast<uint32_t>(groups.size());
  for (uint32_t g = 0; g < groups.size(); ++g) {
    if (groups[g].begin < groups[g].end) continue;
    open(g, groups[g].site, groups[g].outermost);
    close(g);
  }

  // Each strand's last successor: it is released after that one.
  std::vector<uint32_t> last_use(n, kNone);
  for (uint32_t s = 0; s < n; ++s)
    for (uint32_t p : m.preds_of(s)) last_use[p] = s;
  Buckets release_after(n);
  for (uint32_t p = 0; p < n; ++p)
    if (last_use[p] != kNone) release_after.count(last_use[p]);
  release_after.lay_out();
  for (uint32_t p = 0; p < n; ++p)
    if (last_use[p] != kNone) release_after.add(last_use[p], p);

  // The strand's chain of instances, per site the outermost node containing it (nodes join in
  // preorder, an ancestor first): `outer` holds the nodes that had no node of their site
  // around them when they joined, `instances` their instances, in the same order.
  std::vector<uint32_t> open_of_site(num_sites, 0);  // nodes of each site in the chain
  std::vector<uint32_t> outer;
  std::vector<uint32_t> instances;  // groups
  bool instances_changed = true;
  if (root_for_program) outer.push_back(kNone);  // the program's instance, opened at strand 0
  const model::DivisibleStrand* divisible = m.divisible.data();
  const model::DivisibleStrand* const divisible_end = divisible + m.divisible.size();
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t g : opening.values_of(s)) {
      open(g, groups[g].site, groups[g].outermost);
      if (root_for_program && g + 1 == groups.size()) {
        instances.push_back(g);
        instances_changed = true;
      }
    }
    for (uint32_t v : node_closing.values_of(s)) {
      --open_of_site[m.nodes[v].site];
      for (size_t i = outer.size(); i-- > 0;) {
        if (outer[i] != v) continue;
        outer.erase(outer.begin() + static_cast<ptrdiff_t>(i));
        instances.erase(instances.begin() + static_cast<ptrdiff_t>(i));
        instances_changed = true;
        break;
      }
    }
    for (uint32_t v : node_opening.values_of(s)) {
      if (open_of_site[m.nodes[v].site]++ != 0) continue;
      outer.push_back(v);
      instances.push_back(group_of[v]);
      instances_changed = true;
    }
    if (instances_changed) {  // kInstances count group...
      words_.push_back(kInstances);
      words_.push_back(static_cast<uint32_t>(instances.size()));
      words_.insert(words_.end(), instances.begin(), instances.end());
      instances_changed = false;
    }
    const model::Strand& strand = m.strands[s];
    const uint64_t work = weights ? weights->work[s] : strand.work;
    uint64_t span = weights ? weights->span[s] : strand.work;
    if (divisible != divisible_end && divisible->strand == s)
      span = iteration_span(span, (divisible++)->iterations);
    // kStrand work(2 words) span(2) site order count preds... (strand ids)
    words_.push_back(kStrand);
    put64(work);
    put64(span);
    words_.push_back(strand.site);
    words_.push_back(m.strand_order.size() == m.strands.size() ? m.strand_order[s] : s);
    words_.push_back(m.pred_begin[s + 1] - m.pred_begin[s]);
    for (uint32_t p : m.preds_of(s)) words_.push_back(p);
    // kRelease strand
    if (last_use[s] == kNone) words_.insert(words_.end(), {kRelease, s});
    for (uint32_t p : release_after.values_of(s)) words_.insert(words_.end(), {kRelease, p});
    for (uint32_t g : closing.values_of(s + 1)) close(g);
  }
}

Profile ProfileTape::play(uint64_t log_block_entries, uint64_t* peak_live_strands) const {
  StreamProfile stream(num_sites_, log_block_entries);
  std::vector<StreamProfile::Strand> handle(strands_);
  std::vector<StreamProfile::Instance> open(groups_, kNone), instances;
  std::vector<StreamProfile::Strand> preds;
  uint32_t next_strand = 0;
  const uint32_t* w = words_.data();
  const uint32_t* const end = w + words_.size();
  auto get64 = [&] {
    const uint64_t v = w[0] | uint64_t{w[1]} << 32;
    w += 2;
    return v;
  };
  while (w != end) {
    switch (*w++) {
      case kOpen:
        open[w[0]] = stream.open_instance(w[1]);
        if (!w[2]) stream.not_outermost(open[w[0]]);
        w += 3;
        break;
      case kClose:
        stream.close_instance(open[*w++]);
        break;
      case kInstances: {
        const uint32_t count = *w++;
        instances.clear();
        for (uint32_t i = 0; i < count; ++i) instances.push_back(open[*w++]);
        break;
      }
      case kStrand: {
        const uint64_t work = get64();
        const uint64_t span = get64();
        const uint32_t site = *w++;
        const uint32_t order = *w++;
        const uint32_t count = *w++;
        preds.clear();
        for (uint32_t i = 0; i < count; ++i) preds.push_back(handle[*w++]);
        handle[next_strand++] =
            stream.strand(work, span, site, preds.data(), count, instances.data(),
                          static_cast<uint32_t>(instances.size()), 1, 0, order);
        break;
      }
      case kRelease:
        stream.release(handle[*w++]);
        break;
    }
  }
  if (peak_live_strands) *peak_live_strands = stream.peak_live_strands();
  return stream.finish();
}

}  // namespace tasklens::analysis
