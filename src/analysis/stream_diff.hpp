// The differential analysis (diff.hpp) on recordings read in passes, for recordings whose DAGs do
// not fit in the memory: a pass over each recording into a StreamUnitList gives its figures
// (work, span, and each unit's work, strands and part of the critical path), then one more pass
// over other into a StreamScaledSpans gives every span a cost needs at once (one longest path per
// unit to cost, each with that unit's strands rescaled). Three passes, memory that follows the
// live strands times the units costed.
//
// Exactly compute_diff's figures for the recordings' one metric (one pass reads no other): the
// same units, sums and critical paths (StreamProfile's, with the DAG's tie rule), and the same
// rescaled amounts (scale_amount).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/diff.hpp"
#include "analysis/stream_whatif.hpp"
#include "model/model.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::analysis {

// A recording's figures from its pass: `result` of its StreamUnitList, `m` the model that pass
// gave (its sites, counts and one-pass facts). `names` as DiffInput's (its model unused): the
// sites' names by site index, the fragments' groups by fragment index and the groups' names.
DiffFigures diff_figures(const StreamUnitList::Result& result, const model::Model& m,
                         const DiffInput& names);

// Several longest paths at once, each with a set of strands rescaled: one per ScaledSpan.
class StreamScaledSpans final : public model::StrandSink {
 public:
  struct Rescaled {
    bool every_strand = false;  // the program
    bool by_fragment = false;   // `has` tests a strand's fragment index, else its site index
    std::function<bool(uint32_t)> has;
    uint64_t base = 0, other = 0;  // each strand's amount times base / other (scale_amount)
  };
  explicit StreamScaledSpans(std::vector<Rescaled> paths);

  Instance open_instance(uint32_t) override { return 0; }  // (spans only: no instance figures)
  void not_outermost(Instance) override {}
  void close_instance(Instance) override {}
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  void release(Strand s) override;

  // The span of each path, in the order given.
  std::vector<uint64_t> finish() const { return best_; }

 private:
  // Which paths rescale strands of site (or fragment) `index`, asked once per index.
  const std::vector<uint32_t>& members(uint32_t index, bool fragments);
  uint64_t* distances(Strand s) { return live_.data() + size_t{s} * paths_.size(); }
  Strand slot();

  std::vector<Rescaled> paths_;
  std::vector<std::vector<uint32_t>> site_members_, fragment_members_;
  std::vector<uint8_t> site_known_, fragment_known_;
  std::vector<uint32_t> all_;   // the paths that rescale every strand
  std::vector<uint64_t> live_;  // per live strand or join: its distance on each path
  std::vector<Strand> free_;
  uint32_t slots_ = 0;
  std::vector<uint64_t> best_, scratch_;
};

// The paths diff_of's ScaledSpans ask for, as a pass over other gives them: each unit's strands
// are those whose site (or fragment, through `fragment_group`: its group by fragment index) is
// among the unit's ids in `other`, its figures from an earlier pass that numbered them alike.
std::vector<StreamScaledSpans::Rescaled> rescaled_paths(
    const std::vector<ScaledSpan>& requests, const DiffFigures& other,
    const std::vector<uint32_t>& fragment_group);

}  // namespace tasklens::analysis
