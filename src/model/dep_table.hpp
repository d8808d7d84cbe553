// The dependence objects of one task's children: from each address their `depend` clauses name
// to its last writer and the readers since (the builder orders each new child after them).
// Internal to src/model.
//
// A parent such as a `single` creating every task of a tiled loop nest names millions of
// addresses, and its taskwaits clear them again and again. A node-based map allocates and frees
// an entry and a readers' vector per address each time. This table allocates only while it
// grows: open addressing over a dense array of
// entries that clear() keeps, readers' vectors with their capacity. Entries come in the order
// their addresses were first named since the last clear, whatever the addresses.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/model.hpp"

namespace tasklens::model::detail {

struct DepEntry {
  uint32_t last_out = kNone;  // a task
  std::vector<uint32_t> readers;
};

class DepTable {
 public:
  // The entry of `address`, a new one (no writer, no readers) if it was not named since clear().
  DepEntry& operator[](uint64_t address) {
    if (4 * (used_ + 1) > 3 * slots_.size()) grow();
    const size_t mask = slots_.size() - 1;
    for (size_t i = slot_of(address);; i = (i + 1) & mask) {
      const uint32_t k = slots_[i];
      if (k == kEmpty) {
        slots_[i] = used_;
        if (used_ == items_.size()) items_.emplace_back();
        Item& item = items_[used_++];
        item.address = address;
        item.slot = static_cast<uint32_t>(i);
        return item.entry;
      }
      if (items_[k].address == address) return items_[k].entry;
    }
  }
  bool empty() const { return used_ == 0; }
  size_t size() const { return used_; }
  // Every entry, in the order their addresses were first named.
  template <typename F>
  void for_each(F&& f) const {
    for (uint32_t k = 0; k < used_; ++k) f(items_[k].address, items_[k].entry);
  }
  // Forgets every address, in time proportional to the entries (not the table), keeping the
  // memory for the next ones.
  void clear() {
    for (uint32_t k = 0; k < used_; ++k) {
      Item& item = items_[k];
      slots_[item.slot] = kEmpty;
      item.entry.last_out = kNone;
      item.entry.readers.clear();
    }
    used_ = 0;
  }

 private:
  static constexpr uint32_t kEmpty = 0xffffffffu;
  struct Item {
    uint64_t address = 0;
    uint32_t slot = 0;  // its index in slots_
    DepEntry entry;
  };
  size_t slot_of(uint64_t address) const {
    // Fibonacci hashing: addresses of one array differ in a few middle bits.
    return static_cast<size_t>((address * 0x9E3779B97F4A7C15ull) >> (64 - bits_));
  }
  void grow() {
    bits_ = slots_.empty() ? 4 : bits_ + 1;
    slots_.assign(size_t{1} << bits_, kEmpty);
    const size_t mask = slots_.size() - 1;
    for (uint32_t k = 0; k < used_; ++k) {
      size_t i = slot_of(items_[k].address);
      while (slots_[i] != kEmpty) i = (i + 1) & mask;
      slots_[i] = k;
      items_[k].slot = static_cast<uint32_t>(i);
    }
  }
  std::vector<uint32_t> slots_;  // item index, or kEmpty
  std::vector<Item> items_;      // [0, used_) live; the rest kept for reuse
  uint32_t used_ = 0;
  uint32_t bits_ = 0;
};

// A task's joins into the next strand it opens (its `depend` predecessors, mostly): a few,
// kept inline so that a task with dependences does not allocate them; more spill to the heap.
class RefList {
 public:
  // (User-provided, so that a const TaskExtra holding one can be default-initialized.)
  RefList() noexcept {}
  RefList(const RefList&) = delete;
  RefList& operator=(const RefList&) = delete;
  ~RefList() {
    if (cap_ > kInline) delete[] heap_;
  }
  void push_back(uint32_t ref) {
    if (size_ == cap_) spill();
    data()[size_++] = ref;
  }
  bool empty() const { return size_ == 0; }
  uint32_t size() const { return size_; }
  void clear() { size_ = 0; }  // (the heap, if any, is kept)
  const uint32_t* begin() const { return data(); }
  const uint32_t* end() const { return data() + size_; }

 private:
  static constexpr uint32_t kInline = 4;
  uint32_t* data() { return cap_ > kInline ? heap_ : inline_; }
  const uint32_t* data() const { return cap_ > kInline ? heap_ : inline_; }
  void spill() {
    uint32_t* grown = new uint32_t[2 * cap_];
    std::copy(begin(), end(), grown);
    if (cap_ > kInline) delete[] heap_;
    heap_ = grown;
    cap_ *= 2;
  }
  uint32_t size_ = 0, cap_ = kInline;
  union {
    uint32_t inline_[kInline];
    uint32_t* heap_;
  };
};

}  // namespace tasklens::model::detail
