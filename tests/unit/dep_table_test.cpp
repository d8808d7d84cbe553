// model/dep_table.hpp: the dependence table against a node-based map over random addresses,
// clears and regrowth (the same entries, in the order first named), and the inline list of a
// task's joins past its inline capacity.
#include "model/dep_table.hpp"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tasklens::model::detail {
namespace {

struct Expected {
  uint32_t last_out = kNone;
  std::vector<uint32_t> readers;
};

// Random writes and reads of addresses from a small pool (so that they repeat) and a large one
// (so that the table grows), cleared now and then, as a parent's taskwaits clear its children's
// dependences: every entry equals the map's, and they come in the order first named.
TEST(DepTable, MatchesAMapInTheOrderFirstNamedThroughClearsAndGrowth) {
  std::mt19937_64 rng(7);
  DepTable table;
  std::unordered_map<uint64_t, Expected> expected;
  std::vector<uint64_t> order;
  for (int round = 0; round < 40; ++round) {
    const int ops = 1 + static_cast<int>(rng() % (round % 5 == 0 ? 5000 : 300));
    for (int i = 0; i < ops; ++i) {
      // Addresses of an array of blocks (8 apart), some far apart, 0 included.
      const uint64_t address =
          rng() % 3 == 0 ? 0x7f0000000000ull + (rng() % 64) * 8 : (rng() % 100000) * 8;
      const uint32_t task = static_cast<uint32_t>(rng() % 1000);
      DepEntry& d = table[address];
      auto [it, fresh] = expected.try_emplace(address);
      if (fresh) order.push_back(address);
      if (rng() % 2) {
        d.readers.push_back(task);
        it->second.readers.push_back(task);
      } else {
        d.last_out = task;
        d.readers.clear();
        it->second.last_out = task;
        it->second.readers.clear();
      }
    }
    ASSERT_EQ(table.size(), expected.size());
    size_t k = 0;
    table.for_each([&](uint64_t address, const DepEntry& d) {
      ASSERT_LT(k, order.size());
      EXPECT_EQ(address, order[k]) << k;
      const Expected& e = expected.at(address);
      EXPECT_EQ(d.last_out, e.last_out) << address;
      EXPECT_EQ(d.readers, e.readers) << address;
      ++k;
    });
    EXPECT_EQ(k, order.size());
    if (rng() % 3 == 0) {
      table.clear();
      expected.clear();
      order.clear();
      EXPECT_TRUE(table.empty());
    }
  }
}

// A cleared address comes back new: no writer, no readers (the kept vectors are emptied).
TEST(DepTable, ClearedAddressesComeBackEmpty) {
  DepTable table;
  for (uint64_t a = 0; a < 100; ++a) {
    table[a * 64].last_out = 3;
    table[a * 64].readers = {1, 2};
  }
  table.clear();
  EXPECT_TRUE(table.empty());
  const DepEntry& d = table[64];
  EXPECT_EQ(d.last_out, kNone);
  EXPECT_TRUE(d.readers.empty());
  EXPECT_EQ(table.size(), 1u);
}

TEST(RefList, KeepsItsRefsInOrderPastItsInlineCapacity) {
  RefList list;
  EXPECT_TRUE(list.empty());
  std::vector<uint32_t> expected;
  for (uint32_t n : {1u, 4u, 5u, 37u}) {
    list.clear();
    expected.clear();
    for (uint32_t i = 0; i < n; ++i) {
      list.push_back(i * 3 + 1);
      expected.push_back(i * 3 + 1);
    }
    EXPECT_EQ(list.size(), n);
    EXPECT_EQ(std::vector<uint32_t>(list.begin(), list.end()), expected) << n;
  }
}

}  // namespace
}  // namespace tasklens::model::detail
