// The parallelism profile in one pass over the strands, holding only what later strands can still
// reach: Cilkscale's and TaskProf's scheme carried over to a DAG (docs/design-scale.md, step 1).
// compute_profile (profile.hpp) needs the whole model in memory; this gives the same Profile from
// a stream of strands in any topological order, so its memory follows the live strands and the
// open construct instances (the recursion's depth times the threads), not the task count.
//
// What the caller says, and when:
//  * open_instance(site) when an instance of a site begins (before its first strand), and
//    close_instance when no strand will join it any more. An instance is one of profile.hpp's:
//    the nodes of one site sharing an instance id.
//  * not_outermost(instance) when one of its nodes lies inside an instance of the same site (a
//    recursion): such an instance adds to its site's count only, as in compute_profile. It may be
//    said at any time before its close.
//  * strand(...) for every strand, each after all of its predecessors, with the instances it
//    belongs to: for each site, the outermost open instance of that site whose nodes contain it.
//  * release(strand) once no later strand has it as a predecessor.
//  * finish() at the end.
//
// Exactly compute_profile's figures (the tests compare them on every model they build): the work,
// the span, the rows, and the same critical path whatever the topological order strands come in:
// ties between paths go, as in longest_path, to the strand met first (algebra.hpp's longer_path,
// by the order each strand is given), and the path ends at the strand reaching the span that was
// met last.
//
// The critical path is found after the pass: each strand's winning predecessor, its site and its
// weight on paths go to a log (PathLog) which finish() reads backwards once.
#pragma once

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "analysis/profile.hpp"
#include "analysis/temp_blocks.hpp"
#include "model/strand_sink.hpp"
#include "trace/format.hpp"

namespace tasklens::analysis {

// The log of winning predecessors, read backwards once (stream_profile.cpp). Entry i is strand i
// of the arrival order: its winning predecessor (kNoVia: none), its site and its weight on paths.
// Entries are packed in 16 bytes: the predecessor as a distance back (40 bits), the site (24 bits;
// the sites from kNoSite on, which no recording has, would lose their share of the path). Full
// blocks go to a temporary file in $TMPDIR as three varints an entry (the distances are mostly
// small), then zstd, so that a billion strands hold one block in memory and little disk
// (docs/benchmarks.md has the sizes).
class PathLog {
 public:
  static constexpr uint64_t kNoVia = ~uint64_t{0};
  static constexpr uint32_t kNoSite = (1u << 24) - 1;
  struct Entry {
    uint64_t via = kNoVia;
    uint32_t site = kNoSite;
    uint64_t weight = 0;
  };
  explicit PathLog(uint64_t block_entries = uint64_t{1} << 20)
      : log_("the critical path", block_entries) {}
  void push(uint64_t via, uint32_t site, uint64_t weight) {
    const uint64_t back = via == kNoVia ? 0 : size() - via;
    log_.push({back << 24 | (site < kNoSite ? site : kNoSite), weight});
  }
  uint64_t size() const { return log_.size(); }
  uint64_t file_bytes() const { return log_.file_bytes(); }
  Entry at(uint64_t index) {  // reads and decompresses a block when it must; best backwards
    const Packed& p = log_.at(index);
    const uint64_t back = p.back_site >> 24;
    return {back == 0 ? kNoVia : index - back, static_cast<uint32_t>(p.back_site & kNoSite),
            p.weight};
  }

 private:
  struct Packed {
    uint64_t back_site;  // (index - via) << 24 | site; 0 back: no predecessor
    uint64_t weight;
  };
  static_assert(sizeof(Packed) == 16);
  struct PackedCodec {
    static size_t bound(size_t n) { return n * 30; }
    static uint8_t* encode(const Packed* in, size_t n, uint8_t* out) {
      for (size_t i = 0; i < n; ++i) {
        out = trace::put_varint(out, in[i].back_site >> 24);
        out = trace::put_varint(out, in[i].back_site & kNoSite);
        out = trace::put_varint(out, in[i].weight);
      }
      return out;
    }
    static void decode(const uint8_t* in, size_t n, Packed* out) {
      for (size_t i = 0; i < n; ++i) {
        uint64_t back, site;
        in = get_temp_varint(get_temp_varint(in, back), site);
        in = get_temp_varint(in, out[i].weight);
        out[i].back_site = back << 24 | site;
      }
    }
  };
  BlockLog<Packed, PackedCodec> log_;
};

class StreamProfile final : public model::StrandSink {
 public:
  using Strand = uint32_t;    // a live strand or join (recycled after release)
  using Instance = uint32_t;  // an open instance (recycled after close)
  // num_sites for a caller that learns the sites as it goes (the builder's streaming mode):
  // every site met is a row.
  static constexpr uint32_t kSitesAsTheyCome = UINT32_MAX;

  // `num_sites`: Model::sites.size(); sites at or above it are not rows (as in compute_profile).
  // `log_block_entries`: the path log's block (PathLog).
  explicit StreamProfile(uint32_t num_sites, uint64_t log_block_entries = uint64_t{1} << 20);

  Instance open_instance(uint32_t site) override;
  void not_outermost(Instance i) override { instances_[i].outermost = false; }
  void close_instance(Instance i) override;

  // work: what the strand adds to work sums; span_weight: its weight on paths (the what-if's, one
  // iteration's share for loop iterations seen only together); site: Strand::site.
  // order: see StrandSink; kArrival (for callers that give strands in the order they met them)
  // takes the order of arrival.
  static constexpr uint64_t kArrival = ~uint64_t{0};
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations = 1, uint32_t fragment = 0, uint64_t order = kArrival) override;
  // A join (model::StrandSink): a live entry holding the longest of the strands folded into it,
  // and, per open instance they lie in, the longest inside it. It adds no work, no weight and no
  // entry to the path log: a strand taking it as a predecessor takes its winner's path.
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  void release(Strand s) override;

  // The profile; `with_path` also gives Profile::critical_path, as arrival indexes (the strand
  // ids when strands came in id order). `path_strands`, when given, receives per row (by site)
  // the strands of the critical path attributed to it.
  // `path_weights`, when given, receives the critical path's strands as (arrival index, weight
  // on the path), in path order (analysis/stream_structure.hpp's second pass).
  Profile finish(bool with_path = true, std::vector<uint64_t>* path_strands = nullptr,
                 std::vector<std::pair<uint64_t, uint64_t>>* path_weights = nullptr);

  // Live strands at most so far: what the pass held.
  uint64_t peak_live_strands() const { return peak_live_; }
  // What the critical path's log holds on disk (in $TMPDIR) so far.
  uint64_t file_bytes() const { return log_.file_bytes(); }
  // Which of the last strand's predecessors its longest path came through (an index into its
  // `preds`; kNoWinner: none), and whether the last fold made the folded strand the join's: for
  // a caller following the same critical path (StreamWhatIf).
  static constexpr uint32_t kNoWinner = UINT32_MAX;
  uint32_t last_winner() const { return last_winner_; }
  bool last_fold_won() const { return last_fold_won_; }
  // Whether the path now ends at the last strand (so far the one reaching the span met last).
  bool last_ended_path() const { return best_end_ == arrivals_ - 1; }

 private:
  struct Distance {  // a strand's longest path inside one instance containing it
    Instance instance;
    // The instance's serial: a recycled slot does not match an old strand (it would take a
    // strand still live 2^32 instances later to meet its slot's serial again).
    uint32_t serial;
    uint64_t dist;
  };
  // Most strands lie in a few instances (one per site nested around them): those are kept in
  // the slot, more in `more` (kept, with its capacity, when the slot is reused).
  static constexpr uint32_t kInline = 4;
  struct Live {
    uint64_t dist = 0;     // longest path ending here
    uint64_t arrival = 0;  // arrival index (the path log's); a join's: its winner's
    uint64_t order = 0;    // the order it was met in (a join's: its winner's), for ties
    uint32_t inside_count = 0;
    Distance inside[kInline];
    std::vector<Distance> more;
    const Distance& at(uint32_t k) const { return k < kInline ? inside[k] : more[k - kInline]; }
  };
  struct Open {
    uint32_t site = 0;
    uint32_t serial = 0;
    bool outermost = true;
    bool open = false;  // closed: a join's distance inside it is dropped
    uint64_t work = 0, span = 0;
  };
  // Is `site` a row? Grows the rows for kSitesAsTheyCome.
  bool is_row(uint32_t site) {
    if (site < rows_.size()) return true;
    if (!sites_as_they_come_ || site == UINT32_MAX) return false;
    rows_.resize(site + 1);
    present_.resize(site + 1, 0);
    return true;
  }
  bool sites_as_they_come_;
  std::vector<Live> live_;
  std::vector<Strand> free_strands_;
  std::vector<Open> instances_;
  std::vector<Instance> free_instances_;
  uint32_t next_serial_ = 0;
  std::vector<SiteRow> rows_;
  std::vector<uint8_t> present_;
  PathLog log_;
  uint64_t work_ = 0, best_ = 0;
  uint64_t best_end_ = PathLog::kNoVia, best_order_ = 0;
  uint32_t last_winner_ = kNoWinner;
  bool last_fold_won_ = false;
  uint64_t arrivals_ = 0, live_count_ = 0, peak_live_ = 0;
};

// A model as the calls a streaming loader would make to StreamProfile: in id order, every
// instance opened at its first strand and closed after its last, every strand released after its
// last successor. Kept to be played again, so that the engine's own speed can be timed apart
// from this preparation (bench/stream_profile).
class ProfileTape {
 public:
  explicit ProfileTape(const model::Model& model, const Weights* weights = nullptr);
  Profile play(uint64_t log_block_entries = uint64_t{1} << 20,
               uint64_t* peak_live_strands = nullptr) const;

 private:
  enum Op : uint32_t { kOpen, kClose, kInstances, kStrand, kRelease };
  std::vector<uint32_t> words_;  // ops and their arguments (tape.cpp's put_* say how)
  uint32_t num_sites_ = 0, strands_ = 0, groups_ = 0;
};

// compute_profile's result computed by StreamProfile from the model's tape: the equality the
// tests check.
inline Profile stream_profile_of(const model::Model& model, const Weights* weights = nullptr,
                                 uint64_t log_block_entries = uint64_t{1} << 20,
                                 uint64_t* peak_live_strands = nullptr) {
  return ProfileTape(model, weights).play(log_block_entries, peak_live_strands);
}

}  // namespace tasklens::analysis
