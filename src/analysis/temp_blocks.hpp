// What a one-pass reading keeps for later that grows with the strand count (the critical path's
// log, the schedule's events): blocks packed (an entry codec, then zstd) into an unnamed
// temporary file in $TMPDIR, read back by index, so that the memory holds a block or a few,
// whatever the count.
#pragma once

#include <zstd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tasklens::analysis {

// The directory TempBlocks writes to ($TMPDIR, else /tmp) and the bytes free there (0 when it
// cannot be read): for a warning before a pass that needs the room.
std::string temp_dir();
uint64_t temp_dir_free_bytes();

class TempBlocks {
 public:
  // `what` names the contents in the errors ("the critical path"). Without `compress` the blocks
  // are stored as given (their writer packed them already).
  explicit TempBlocks(std::string what, bool compress = true);
  ~TempBlocks();
  TempBlocks(const TempBlocks&) = delete;
  TempBlocks& operator=(const TempBlocks&) = delete;

  // Appends a block of `bytes` bytes (at most 1 GiB); returns its index.
  size_t put(const void* data, size_t bytes);
  // Reads block `index` back into `out`, which has room for its `raw_bytes`.
  void get(size_t index, void* out);
  size_t raw_bytes(size_t index) const { return blocks_[index].raw; }
  size_t blocks() const { return blocks_.size(); }
  uint64_t file_bytes() const { return file_bytes_; }

 private:
  struct Block {
    uint64_t offset;
    uint32_t bytes, raw;
  };
  std::string what_;
  bool compress_;
  int fd_ = -1;  // the file, made at the first block
  uint64_t file_bytes_ = 0;
  std::vector<Block> blocks_;
  std::vector<char> scratch_;
  ZSTD_CCtx* cctx_ = nullptr;  // made at the first block that needs it
  ZSTD_DCtx* dctx_ = nullptr;
};

// LEB128 (trace::put_varint's) from bytes this process wrote itself: no bound checked.
inline const uint8_t* get_temp_varint(const uint8_t* p, uint64_t& v) {
  v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    v |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) return p;
  }
}

// A byte buffer that grows without writing its new bytes: std::vector zero-fills them, which
// would keep a codec's worst-case bound resident whatever it wrote.
class ScratchBytes {
 public:
  uint8_t* room(size_t bytes) {
    if (bytes > capacity_) {
      data_ = std::make_unique_for_overwrite<uint8_t[]>(bytes);
      capacity_ = bytes;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
};

// How a BlockLog stores a block of entries: as they are in memory (the default). A codec for an
// entry type whose fields are small numbers or near the previous entry's writes varints instead,
// which zstd then packs far better than the structs (docs/benchmarks.md); its `bound` is the most
// bytes `n` entries may take.
template <class T>
struct RawEntries {
  static size_t bound(size_t n) { return n * sizeof(T); }
  static uint8_t* encode(const T* in, size_t n, uint8_t* out) {
    std::memcpy(out, in, n * sizeof(T));
    return out + n * sizeof(T);
  }
  static void decode(const uint8_t* in, size_t n, T* out) { std::memcpy(out, in, n * sizeof(T)); }
};

// A log of fixed-size entries, in blocks of `block_entries` of which the full ones go to a
// TempBlocks through `Codec`; at() reads a block back when it must (one at a time: best read in
// long runs, as a walk backwards does).
template <class T, class Codec = RawEntries<T>>
class BlockLog {
 public:
  BlockLog(std::string what, uint64_t block_entries)
      : blocks_(std::move(what)), block_entries_(block_entries ? block_entries : 1) {
    tail_.reserve(std::min<uint64_t>(block_entries_, uint64_t{1} << 16));
  }
  void push(const T& entry) {
    if (tail_.size() == block_entries_) [[unlikely]]
      spill();
    tail_.push_back(entry);
  }
  uint64_t size() const { return spilled_ + tail_.size(); }
  const T& at(uint64_t index) {
    if (index >= spilled_) return tail_[index - spilled_];
    const uint64_t b = index / block_entries_;
    if (b != loaded_block_) {
      uint8_t* bytes = bytes_.room(blocks_.raw_bytes(b));
      blocks_.get(b, bytes);
      loaded_.resize(block_entries_);
      Codec::decode(bytes, block_entries_, loaded_.data());
      loaded_block_ = b;
    }
    return loaded_[index - b * block_entries_];
  }
  uint64_t file_bytes() const { return blocks_.file_bytes(); }

 private:
  void spill() {
    uint8_t* bytes = bytes_.room(Codec::bound(tail_.size()));
    const uint8_t* end = Codec::encode(tail_.data(), tail_.size(), bytes);
    blocks_.put(bytes, static_cast<size_t>(end - bytes));
    spilled_ += tail_.size();
    tail_.clear();
  }
  TempBlocks blocks_;
  uint64_t block_entries_;
  std::vector<T> tail_;  // entries [spilled_, size())
  uint64_t spilled_ = 0;
  std::vector<T> loaded_;  // a block read back
  uint64_t loaded_block_ = ~uint64_t{0};
  ScratchBytes bytes_;  // a block's bytes, encoded
};

}  // namespace tasklens::analysis
