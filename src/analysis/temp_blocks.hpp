// What a one-pass reading keeps for later that grows with the strand count (the critical path's
// log, the schedule's events): blocks compressed with LZ4 into an unnamed temporary file in
// $TMPDIR, read back by index, so that the memory holds a block or a few, whatever the count.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
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
};

// A log of fixed-size entries, in blocks of `block_entries` of which the full ones go to a
// TempBlocks; at() reads a block back when it must (one at a time: best read in long runs, as a
// walk backwards does).
template <class T>
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
      loaded_.resize(block_entries_);
      blocks_.get(b, loaded_.data());
      loaded_block_ = b;
    }
    return loaded_[index - b * block_entries_];
  }
  uint64_t file_bytes() const { return blocks_.file_bytes(); }

 private:
  void spill() {
    blocks_.put(tail_.data(), tail_.size() * sizeof(T));
    spilled_ += tail_.size();
    tail_.clear();
  }
  TempBlocks blocks_;
  uint64_t block_entries_;
  std::vector<T> tail_;  // entries [spilled_, size())
  uint64_t spilled_ = 0;
  std::vector<T> loaded_;  // a block read back
  uint64_t loaded_block_ = ~uint64_t{0};
};

}  // namespace tasklens::analysis
