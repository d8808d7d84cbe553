// What-if profiles in one pass (whatif.hpp's curves and "after" profile, for a recording whose
// DAG does not fit in the memory): one model::StrandSink that feeds, from the same stream of
// strands, the recorded profile, the profile after every unit, and the longest path of every
// point of every curve at once.
//
// In one pass a unit is a set of construct sites or of code fragments, whole strands as
// unit_of_sites and unit_of_fragments take them (the strands whose innermost site, or whose
// fragment, is one of them), or a user region, the part of each strand's work inside it as
// unit_of_region takes it (the builder's region_work calls). Sites and fragments are met as the
// pass goes, so such a unit is a test of a site's or a fragment's index, asked once per index.
//
// Exactly whatif_curves' and apply_units' figures: the same weights (span_weights: each unit's
// part u of a strand of work w, capped at what the units before it left, keeps u / k on paths, so
// the strand weighs w - covered + round(sum of u / k), and that in work sums too when speeding
// up), the same longest paths, and each unit's work on the recorded critical path, followed
// along the path the recorded profile picks (the same winner at each strand, StreamProfile's
// rule for ties).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/stream_profile.hpp"
#include "analysis/whatif.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::analysis {

// Two StreamProfiles fed the same calls, so that their slots match (checked): what the sinks
// below share. Every call but strand() goes to both.
class TwinProfiles : public model::StrandSink {
 public:
  Instance open_instance(uint32_t site) override;
  void not_outermost(Instance i) override;
  void close_instance(Instance i) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  void release(Strand s) override;

 protected:
  TwinProfiles();
  // The first profile's slot, once the second's is known to be the same.
  static uint32_t same(uint32_t first, uint32_t second);
  // Blocks of a quarter of report's path log, so that both together hold half of what its one
  // holds.
  StreamProfile first_, second_;
};

// Adds `work` inside `region` to a strand's (or a fragment's) parts, one per region: a region
// met twice is one part, as unit_of_region sums a strand's entries.
inline void add_region_part(std::vector<std::pair<uint32_t, uint64_t>>& parts, uint32_t region,
                            uint64_t work) {
  for (auto& [r, w] : parts)
    if (r == region) {
      w += work;
      return;
    }
  parts.emplace_back(region, work);
}

struct StreamUnit {
  std::string name;
  double factor = 0;                  // its own factor (--site NAME=FACTOR); 0: the curve's
  bool by_fragment = false;           // `has` tests fragments (Strand::fragment), else sites
  std::function<bool(uint32_t)> has;  // is this site (or fragment) index in the unit?
  uint32_t region = model::kNone;     // a user region's id instead (`has` is then unused)
};

// The first profile is the recorded one, the second the one after every unit.
class StreamWhatIf final : public TwinProfiles {
 public:
  // As whatif_curves(units, factors, mode), and the profile after every unit at `after_factor`
  // (each at its own factor where it has one), as whatif_report builds them. At most 254 units.
  StreamWhatIf(std::vector<StreamUnit> units, std::vector<double> factors, WhatIfMode mode,
               double after_factor);

  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  bool wants_regions() const override { return wants_regions_; }
  void region_work(uint32_t region, uint64_t work) override;

  struct Result {
    Profile before;  // the recorded profile
    std::vector<WhatIfCurve> curves;
    Profile after;  // after every unit at after_factor
  };
  Result finish();

 private:
  static constexpr uint8_t kNoUnit = 0xff;
  // Which units hold `index` (a site, or a fragment), one byte per unit, asked once per index.
  const uint8_t* members(std::vector<uint8_t>& table, std::vector<uint8_t>& known, uint32_t index,
                         bool fragments);
  // The weight on paths of a strand of work w whose units' capped parts are parts_[u] for the
  // units in `set` (their order), each at its factor: `own` takes a unit's own factor where it
  // has one, else the one whose divisor is `divisor` (span_weights).
  uint64_t weight(uint64_t w, uint64_t covered, const std::vector<uint8_t>& set, bool own,
                  double divisor) const;
  // The parts of the units in `set` capped in order at what is left of w (span_weights' cap);
  // returns their sum.
  uint64_t cap_parts(uint64_t w, const std::vector<uint8_t>& set);
  // A live strand's or join's entry: each set's covered work along its
  // recorded path, then each point's distance.
  uint64_t* entry(Strand s);

  std::vector<StreamUnit> units_;
  std::vector<double> factors_;
  WhatIfMode mode_;
  double after_factor_;
  // What span_weights divides a part by at each factor, at each unit's own factor, at
  // after_factor_: max(k, 1), or 0 for an infinite k (the part keeps nothing).
  std::vector<double> divisor_, own_divisor_;
  double after_divisor_ = 1;
  std::vector<std::vector<uint8_t>> sets_;  // units of each curve's set, in units_' order
  bool has_all_ = false;                    // the last set is "all"
  uint32_t points_ = 0;                     // sets x factors: one longest path each
  uint32_t stride_ = 0;                     // sets + points
  std::vector<uint8_t> site_members_, site_known_, fragment_members_, fragment_known_;
  std::vector<uint8_t> all_units_;  // every unit, in order: the "after" profile's set
  bool wants_regions_ = false;      // a unit is a region
  // Per strand, scratch: each unit's part, then capped within the set at hand; the regions'
  // parts the builder gave for the next strand.
  std::vector<uint64_t> part_, capped_, scratch_covered_;
  std::vector<std::pair<uint32_t, uint64_t>> region_parts_;

  // Per live strand or join, in the profiles' slots: entry() above; whether it lies on a
  // recorded path (an empty join does not).
  std::vector<uint64_t> live_;
  std::vector<uint8_t> has_path_;
  std::vector<uint64_t> best_, work_;   // per point
  std::vector<uint64_t> unit_work_;     // per set
  std::vector<uint64_t> best_covered_;  // per set, the covered work along the recorded path
  std::vector<uint64_t> scratch_;
};

// What `whatif --list` shows, in one pass: the profile (its rows are the sites), and each code
// fragment's work and exclusive work on the critical path. A second StreamProfile sees every
// strand as if its fragment were its site and without instances: its rows' critical work is then
// each fragment's share of the same critical path (the same calls, the same winners).
// (The second also opens the instances; a strand names none to it, so they only add counts and
// spans to its rows, never critical work.) Each user region's work is the strands' parts inside
// it, and its work on the critical path those parts along the path the first profile picks (a
// sum per region carried by every live strand and join, as StreamWhatIf carries its units').
class StreamUnitList final : public TwinProfiles {
 public:
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  bool wants_regions() const override { return true; }
  void region_work(uint32_t region, uint64_t work) override;

  // By site index, the strands attributed to a site (Strand::site, as diff's site units), and
  // by fragment index the strands running it: their work, count, work on the critical path and
  // count there. By region id, the work inside the region and the part of it on the critical
  // path (work and critical only).
  struct Units {
    std::vector<uint64_t> work, strands, critical, on_path;
  };
  struct Result {
    Profile profile;
    Units sites, fragments, regions;
  };
  Result finish();

 private:
  // A live strand's or join's sums per region along its recorded path (`region_count_` of them).
  uint64_t* path_of(Strand s);
  void grow(Strand s);  // the tables hold slot s
  void more_regions(uint32_t count);

  Units sites_, fragments_;
  std::vector<std::pair<uint32_t, uint64_t>> parts_;  // the next strand's, by region
  uint32_t region_count_ = 0;
  Units regions_units_;
  std::vector<uint64_t> paths_, best_;
  std::vector<uint8_t> has_path_;
};

}  // namespace tasklens::analysis
