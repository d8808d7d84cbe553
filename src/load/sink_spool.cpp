// A pass's calls to its sink, kept to be played again (sink_spool.hpp).
#include "load/sink_spool.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "trace/format.hpp"

namespace tasklens::load {

namespace {

using model::SinkOp;

constexpr uint64_t op(SinkOp o) { return static_cast<uint64_t>(o); }

inline uint64_t zigzag_delta(uint64_t v, uint64_t last) {
  return trace::zigzag(static_cast<int64_t>(v - last));
}

// The words each call that is not coded field by field carries after its op
// (model::SinkThread's layout).
int extra_words(SinkOp o) {
  switch (o) {
    case SinkOp::kTask:
    case SinkOp::kNode:
      return 4;
    case SinkOp::kTimes:
      return 3;
    case SinkOp::kRegionWork:
      return 2;
    case SinkOp::kTaskKey:
    case SinkOp::kStrandNode:
    case SinkOp::kNodeDone:
      return 1;
    default:
      return 0;
  }
}

}  // namespace

SinkSpool::SinkSpool(uint64_t budget_bytes)
    : budget_(budget_bytes
                  ? budget_bytes
                  : std::min<uint64_t>(analysis::temp_dir_free_bytes() / 4, uint64_t{16} << 30)),
      blocks_(std::make_unique<analysis::TempBlocks>("the first pass's strands",
                                                     /*compress=*/false)) {}

void SinkSpool::keep_for(const model::StrandSink& sink) {
  keep_[static_cast<int>(SinkOp::kTask)] = sink.wants_tasks();
  keep_[static_cast<int>(SinkOp::kTaskStart)] = sink.wants_task_starts();
  keep_[static_cast<int>(SinkOp::kTimes)] = sink.wants_times();
  keep_[static_cast<int>(SinkOp::kTaskKey)] = sink.wants_task_keys();
  keep_[static_cast<int>(SinkOp::kRegionWork)] = sink.wants_regions();
  keep_[static_cast<int>(SinkOp::kNode)] = keep_[static_cast<int>(SinkOp::kStrandNode)] =
      keep_[static_cast<int>(SinkOp::kNodeDone)] = sink.wants_nodes();
}

void SinkSpool::chunk(const uint64_t* words, size_t count) noexcept {
  if (!blocks_) return;
  try {
    // Each call as its op's byte and its fields as varints, the strands' against the strand
    // before (the order, the work on paths against the work): a fifth of its words' bytes. Not
    // compressed: zstd's fastest level cost the sink's thread more than the replay saves
    // (docs/benchmarks.md).
    const uint64_t head = count;  // the words the block stands for, to lay them out again
    packed_.resize(sizeof head + count * 11);
    std::memcpy(packed_.data(), &head, sizeof head);
    uint8_t* out = packed_.data() + sizeof head;
    const uint64_t* w = words;
    const uint64_t* const end = words + count;
    while (w != end) {
      const SinkOp o = static_cast<SinkOp>(*w++);
      switch (o) {
        case SinkOp::kStrand: {
          const uint32_t pred_count = static_cast<uint32_t>(w[6] >> 32),
                         instance_count = static_cast<uint32_t>(w[6]);
          *out++ = static_cast<uint8_t>(o);
          out = trace::put_varint(out, w[0]);                        // handle
          out = trace::put_varint(out, w[1]);                        // work
          out = trace::put_varint(out, zigzag_delta(w[2], w[1]));    // its weight on paths
          out = trace::put_varint(out, w[3] >> 32);                  // site
          out = trace::put_varint(out, w[3] & 0xffffffffu);          // fragment
          out = trace::put_varint(out, w[4]);                        // iterations
          out = trace::put_varint(out, zigzag_delta(w[5], order_));  // order
          order_ = w[5];
          out = trace::put_varint(out, pred_count);
          out = trace::put_varint(out, instance_count);
          w += 7;
          for (uint32_t k = 0; k < pred_count + instance_count; ++k)
            out = trace::put_varint(out, *w++);
          break;
        }
        case SinkOp::kOpen:
          *out++ = static_cast<uint8_t>(o);
          out = trace::put_varint(trace::put_varint(out, w[0]), w[1]);
          w += 2;
          break;
        case SinkOp::kFold:
          *out++ = static_cast<uint8_t>(o);
          out = trace::put_varint(trace::put_varint(out, w[0] >> 32), w[0] & 0xffffffffu);
          ++w;
          break;
        case SinkOp::kNotOutermost:
        case SinkOp::kClose:
        case SinkOp::kOpenJoin:
        case SinkOp::kRelease:
          *out++ = static_cast<uint8_t>(o);
          out = trace::put_varint(out, *w++);
          break;
        default: {  // the calls a profile does not take
          const int n = extra_words(o);
          if (keep_[static_cast<int>(o) & 15]) {
            *out++ = static_cast<uint8_t>(o);
            for (int k = 0; k < n; ++k) out = trace::put_varint(out, w[k]);
          }
          w += n;
          break;
        }
      }
    }
    blocks_->put(packed_.data(), static_cast<size_t>(out - packed_.data()));
    if (blocks_->file_bytes() > budget_) blocks_.reset();  // too large: read the trace again
  } catch (...) {  // no room, no temporary file, no memory: read the trace again
    blocks_.reset();
  }
}

void SinkSpool::replay(model::StrandSink& target) {
  if (!blocks_) throw std::logic_error("SinkSpool::replay: the spool gave up");
  auto kept = [this](SinkOp o) { return keep_[static_cast<int>(o)]; };
  if ((target.wants_tasks() && !kept(SinkOp::kTask)) ||
      (target.wants_task_starts() && !kept(SinkOp::kTaskStart)) ||
      (target.wants_times() && !kept(SinkOp::kTimes)) ||
      (target.wants_task_keys() && !kept(SinkOp::kTaskKey)) ||
      (target.wants_regions() && !kept(SinkOp::kRegionWork)) ||
      (target.wants_nodes() && !kept(SinkOp::kNode)))
    throw std::logic_error("SinkSpool::replay: the sink wants calls this spool did not keep");
  model::CallPlayer player(target);
  std::vector<uint8_t> block;
  uint64_t order = 0;
  for (size_t b = 0; b < blocks_->blocks(); ++b) {
    block.resize(blocks_->raw_bytes(b));
    blocks_->get(b, block.data());
    uint64_t count;
    std::memcpy(&count, block.data(), sizeof count);
    words_back_.resize(count);  // (at most: the calls not kept are not laid out)
    const uint8_t* in = block.data() + sizeof count;
    const uint8_t* const end = block.data() + block.size();
    uint64_t* w = words_back_.data();
    auto get = [&in]() {
      uint64_t v;
      in = analysis::get_temp_varint(in, v);
      return v;
    };
    while (in != end) {
      const SinkOp o = static_cast<SinkOp>(*in++);
      *w++ = op(o);
      switch (o) {
        case SinkOp::kStrand: {
          w[0] = get();
          w[1] = get();
          w[2] = w[1] + static_cast<uint64_t>(trace::unzigzag(get()));
          const uint64_t site = get();
          w[3] = site << 32 | get();
          w[4] = get();
          order += static_cast<uint64_t>(trace::unzigzag(get()));
          w[5] = order;
          const uint64_t preds = get();
          const uint64_t instances = get();
          w[6] = preds << 32 | instances;
          w += 7;
          for (uint64_t k = 0; k < preds + instances; ++k) *w++ = get();
          break;
        }
        case SinkOp::kOpen:
          w[0] = get();
          w[1] = get();
          w += 2;
          break;
        case SinkOp::kFold: {
          const uint64_t join = get();
          *w++ = join << 32 | get();
          break;
        }
        case SinkOp::kNotOutermost:
        case SinkOp::kClose:
        case SinkOp::kOpenJoin:
        case SinkOp::kRelease:
          *w++ = get();
          break;
        default:
          for (int k = extra_words(o); k > 0; --k) *w++ = get();
          break;
      }
    }
    player.play(words_back_.data(), static_cast<size_t>(w - words_back_.data()));
  }
}

}  // namespace tasklens::load
