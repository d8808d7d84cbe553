// The readers' memory check (platform/platform.hpp): sizes, /proc/meminfo and cgroup texts
// parsed, the budget read on this machine.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "errors.hpp"
#include "platform/platform.hpp"

namespace tasklens::platform {
namespace {

TEST(MemoryBudget, SizesTakeBinarySuffixes) {
  EXPECT_EQ(parse_size("1000"), 1000u);
  EXPECT_EQ(parse_size("4K"), 4096u);
  EXPECT_EQ(parse_size("3m"), 3u << 20);
  EXPECT_EQ(parse_size("2G"), 2ull << 30);
  EXPECT_EQ(parse_size("1T"), 1ull << 40);
  EXPECT_EQ(parse_size("  512M\n"), 512u << 20);  // as a cgroup file holds it
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("G"));
  EXPECT_FALSE(parse_size("12X"));
  EXPECT_FALSE(parse_size("1.5G"));
  EXPECT_FALSE(parse_size("-1"));
  EXPECT_FALSE(parse_size("99999999999999999999"));
  EXPECT_FALSE(parse_size("99999999999T"));  // overflows when shifted
}

TEST(MemoryBudget, MeminfoGivesAvailableAndFreeSwap) {
  const std::string text =
      "MemTotal:       24684172 kB\nMemFree:        23908468 kB\n"
      "MemAvailable:   24210804 kB\nSwapTotal:       1000 kB\nSwapFree:         500 kB\n";
  EXPECT_EQ(available_from_meminfo(text), (24210804ull + 500) * 1024);
  EXPECT_EQ(available_from_meminfo("MemAvailable: 10 kB\n"), 10240u);  // no swap line
  EXPECT_FALSE(available_from_meminfo("MemTotal: 10 kB\n"));           // an old kernel
  EXPECT_FALSE(available_from_meminfo(""));
}

TEST(MemoryBudget, CgroupMaxIsNoLimit) {
  EXPECT_FALSE(cgroup_limit("max\n"));
  EXPECT_EQ(cgroup_limit("1073741824\n"), 1ull << 30);
  EXPECT_FALSE(cgroup_limit(""));
}

TEST(MemoryBudget, TheEnvironmentCanOnlyLowerTheBudget) {
  unsetenv("TASKLENS_MEMORY_LIMIT");
  const auto machine = memory_budget();
  ASSERT_TRUE(machine) << "/proc/meminfo is readable on Linux";
  EXPECT_GT(machine->bytes, 16u << 20);
  setenv("TASKLENS_MEMORY_LIMIT", "1M", 1);
  const auto limited = memory_budget();
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->bytes, 1u << 20);
  EXPECT_EQ(limited->source, "TASKLENS_MEMORY_LIMIT");
  setenv("TASKLENS_MEMORY_LIMIT", "1000T", 1);  // more than the machine: the machine's
  const auto roomy = memory_budget();
  ASSERT_TRUE(roomy);
  EXPECT_LT(roomy->bytes, 1000ull << 40);
  EXPECT_NE(roomy->source, "TASKLENS_MEMORY_LIMIT");
  setenv("TASKLENS_MEMORY_LIMIT", "lots", 1);
  EXPECT_THROW(memory_budget(), UsageError);
  unsetenv("TASKLENS_MEMORY_LIMIT");
}

}  // namespace
}  // namespace tasklens::platform
