// The robust span's clipping of a recording read in passes, kept between commands.
//
// A reading in passes decides what the robust rule clips with a census beside its first pass,
// then reads the recording again with those strands clipped (load/recording.hpp): on a shared
// machine nearly every recording has strands to clip, so every command that computes a span
// read it twice (three times when the census could not decide). The decision depends on the
// recording, the build of tasklens and the model's settings only, so it is kept in the user's
// cache (platform::cache_dir()/clipping) and the next command on the same recording reads it
// once. A recording rewritten, moved or touched, another tasklens binary or other model settings
// make another key; an entry that does not match the pass (ClippingSink's check of each clipped
// strand's fragment and work) is dropped and the decision taken again. TASKLENS_CACHE=off keeps
// nothing and reads nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/robust.hpp"

namespace tasklens::load {

struct CachedClipping {
  analysis::Clipping clipping;
  std::vector<uint32_t> fragments;  // per clipped strand, as the pass numbers them
  bool robust = false;              // the rule applied (a metric it judges)
  // The work, span and parallelism as measured, when the reading that decided knew them.
  bool has_measured = false;
  analysis::SpanFigures measured;
};

// The entry for the recording at `path` under the current settings, if one is kept.
std::optional<CachedClipping> cached_clipping(const std::string& path);
// Keeps `c` for the recording at `path` (nothing when there is no cache directory, or it cannot
// be written: a cache never fails a command). Keeps at most kClippingEntries entries, the
// oldest dropped first.
void keep_clipping(const std::string& path, const CachedClipping& c);
// Drops the entry for `path` (it did not match its recording).
void forget_clipping(const std::string& path);

inline constexpr size_t kClippingEntries = 64;

// The entry's text, and back (nullopt when it is not one): for the tests.
std::string clipping_to_json(const CachedClipping& c);
std::optional<CachedClipping> clipping_from_json(const std::string& text);

}  // namespace tasklens::load
