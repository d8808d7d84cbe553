// `view`'s structure in one pass (stream_structure.hpp).
#include "analysis/stream_structure.hpp"

namespace tasklens::analysis {

StreamStructure::StreamStructure(const TimelineBounds& bounds, size_t max_slices, size_t max_nodes,
                                 std::vector<std::pair<uint64_t, uint64_t>> path)
    : trie_(ConstructTrie::groups_for(max_nodes)),
      timeline_(bounds, max_slices),
      path_(std::move(path)) {}

void StreamStructure::node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t) {
  ++nodes_;
  ConstructTrie::Placed placed;
  if (parent == kNoNode) {
    placed = trie_.add_node(ConstructTrie::kNoGroup, site == kNoSite ? model::kNone : site,
                            static_cast<model::NodeKind>(kind));
  } else {
    auto it = live_.find(parent);
    // (A parent already done: a damaged trace; the node counts under the root.)
    const ConstructTrie::Placed up =
        it == live_.end() ? ConstructTrie::Placed{0, true} : it->second;
    // Below a node the trie had no room for, everything counts in the same group's subtree.
    placed = up.member ? trie_.add_node(up.group, site == kNoSite ? model::kNone : site,
                                        static_cast<model::NodeKind>(kind))
                       : up;
  }
  live_[key] = placed;
  peak_live_ = std::max(peak_live_, live_.size());
}

void StreamStructure::strand_node(uint64_t key) {
  auto it = live_.find(key);
  current_ = it == live_.end() ? ConstructTrie::Placed{0, true} : it->second;
}

StreamStructure::Strand StreamStructure::strand(uint64_t work, uint64_t, uint32_t site,
                                                const Strand*, uint32_t, const Instance*, uint32_t,
                                                uint64_t, uint32_t, uint64_t) {
  uint64_t critical = 0;
  while (next_on_path_ < path_.size() && path_[next_on_path_].first == arrivals_)
    critical += path_[next_on_path_++].second;
  trie_.add_strand(current_, work, critical);
  timeline_.add(start_, end_, thread_, site, current_.group);
  ++arrivals_;
  start_ = end_ = 0;
  thread_ = UINT32_MAX;
  return 0;
}

}  // namespace tasklens::analysis
