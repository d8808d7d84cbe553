// A pass's calls to its sink, kept on disk to be played again (docs/robust-span.md).
//
// Why: the robust span's first reading of a recording takes two passes when strands are clipped
// (nearly always on a shared machine): the census beside the profile, then the profile again
// with the clipped strands. The second pass made the same calls as the first, but for the
// clipped strands' works, and most of a pass's time is the decoding and the builder, not the sink
// (docs/benchmarks.md, "The readers' instructions per task"). So the first pass's calls
// (model::SinkThread's chunks) are packed (each call's fields as varints) into an unnamed temporary
// file as they are played, and the second pass plays them back through the clipping instead of
// reading the trace again.
//
// The spool gives up, and the second pass reads the trace as before, when it would take more
// than its budget of disk (a quarter of $TMPDIR's free room when it starts, at most 16 GiB;
// the bytes per task: docs/benchmarks.md) or a write fails: it never fails a reading.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/temp_blocks.hpp"
#include "model/sink_thread.hpp"

namespace tasklens::load {

class SinkSpool final : public model::ChunkTap {
 public:
  // `budget_bytes`: the most it writes (0: a quarter of $TMPDIR's free room, at most 16 GiB).
  explicit SinkSpool(uint64_t budget_bytes = 0);

  // Keeps the calls beyond the profile's (tasks, times, task keys, regions, nodes) that `sink`
  // wants, and no others: a replay's target must want no more (the pass's first sink, made
  // before its calls come: the census beside it wants the times, which its replay does not).
  void keep_for(const model::StrandSink& sink);

  // (The sink's thread.) Keeps the chunk, or gives up.
  void chunk(const uint64_t* words, size_t count) noexcept override;

  // Whether it holds every chunk it was told (after the pass).
  bool complete() const { return blocks_ != nullptr; }
  uint64_t file_bytes() const { return blocks_ ? blocks_->file_bytes() : 0; }

  // Plays every chunk, in order, into `target` (the calls it does not want skipped:
  // model::CallPlayer). Only when complete(); throws std::logic_error otherwise, or when
  // `target` wants calls that were not kept.
  void replay(model::StrandSink& target);

 private:
  bool keep_[16] = {};  // per model::SinkOp beyond the profile's: kept
  uint64_t budget_;
  std::unique_ptr<analysis::TempBlocks> blocks_;  // null once it gave up
  std::vector<uint8_t> packed_;                   // a chunk as packed
  uint64_t order_ = 0;                            // the last strand's order, packed
  std::vector<uint64_t> words_back_;              // a chunk laid out again
};

}  // namespace tasklens::load
