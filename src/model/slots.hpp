// Entries kept in a vector whose slots are reused once their entry is retired: the one-pass
// profile's live strands and instances (analysis/stream_profile.cpp), the streaming builder's
// joins and instance chains (builder_stream.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace tasklens::model {

// A slot of `slots` for a new entry: one a retired entry left (in `free`), or a new one at the
// end. The entry keeps what the retired one held: the caller sets it.
template <class T>
uint32_t take_slot(std::vector<T>& slots, std::vector<uint32_t>& free) {
  if (free.empty()) {
    slots.emplace_back();
    return static_cast<uint32_t>(slots.size() - 1);
  }
  const uint32_t slot = free.back();
  free.pop_back();
  return slot;
}

}  // namespace tasklens::model
