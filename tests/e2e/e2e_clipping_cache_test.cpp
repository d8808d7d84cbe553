// The robust span's clipping kept between commands (load/clipping_cache.hpp): a recording read
// in passes a second time is read once, with the same result to the byte; a decision that does
// not match its recording is dropped and taken again; a rewritten recording gets its own.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

class ClippingCache : public E2E {
 protected:
  EnvOverrides env() const {
    EnvOverrides e = default_env();
    e["TASKLENS_CACHE_DIR"] = path("cache");
    e["TASKLENS_TIMINGS"] = "1";
    e["TASKLENS_CACHE"] = std::nullopt;
    return e;
  }
  // Records fib 22 into `trace` and reads it with `report --stream` a first time: that reading
  // decides the clipping and keeps it.
  void SetUp() override {
    E2E::SetUp();
    trace = path("t.tlens");
    report = {TASKLENS_BIN, "report", "--stream", "--format", "json", trace};
    ASSERT_TRUE(record(example("suite_fib", "clang"), {"22"}, trace).exited(0));
    first = run(report, env());
    ASSERT_TRUE(first.exited(0)) << first.describe();
    EXPECT_EQ(first.err.find("robust (kept)"), std::string::npos) << first.err;
    ASSERT_EQ(entries().size(), 1u);
  }
  std::string trace;
  std::vector<std::string> report;
  RunResult first;
  std::vector<std::filesystem::path> entries() const {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(path("cache") + "/clipping", ec))
      out.push_back(e.path());
    return out;
  }
};

// How many passes a reading made: its timings' "model" phases.
size_t passes_of(const RunResult& r) {
  size_t n = 0;
  for (size_t at = r.err.find(" model "); at != std::string::npos;
       at = r.err.find(" model ", at + 1))
    ++n;
  return n;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(ClippingCache, ASecondReadingInPassesReadsOnceAndGivesTheSameReport) {
  const RunResult second = run(report, env());
  ASSERT_TRUE(second.exited(0)) << second.describe();
  EXPECT_NE(second.err.find("robust (kept)"), std::string::npos) << second.err;
  EXPECT_EQ(passes_of(second), 1u) << second.err;
  EXPECT_EQ(second.out, first.out);  // the as-measured figures and the clipped strands too
  // The table (its "as measured" line) and the other readings in passes, alike.
  const std::vector<std::string> table = {TASKLENS_BIN, "report", "--stream", trace};
  EnvOverrides off = env();
  off["TASKLENS_CACHE"] = "off";
  const RunResult kept_table = run(table, env()), plain_table = run(table, off);
  ASSERT_TRUE(kept_table.exited(0) && plain_table.exited(0)) << plain_table.describe();
  EXPECT_EQ(kept_table.out, plain_table.out);
  EXPECT_EQ(plain_table.err.find("robust (kept)"), std::string::npos) << plain_table.err;
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{TASKLENS_BIN, "advise", "--stream", "--format", "json", trace},
        {TASKLENS_BIN, "predict", "--stream", "--format", "json", trace},
        {TASKLENS_BIN, "diff", "--stream", "--format", "json", trace, trace}}) {
    const RunResult kept = run(argv, env()), plain = run(argv, off);
    ASSERT_TRUE(kept.exited(0) && plain.exited(0)) << kept.describe() << plain.describe();
    EXPECT_NE(kept.err.find("robust (kept)"), std::string::npos) << kept.err;
    EXPECT_EQ(kept.out, plain.out) << argv[1];
  }
  EXPECT_EQ(entries().size(), 1u);  // TASKLENS_CACHE=off wrote none
}

TEST_F(ClippingCache, ADecisionThatDoesNotMatchItsRecordingIsTakenAgain) {
  const std::filesystem::path entry = entries()[0];
  json kept = json::parse(read_file(entry));
  // A clipped strand the recording does not have: the first strand, with a work it never had.
  kept["strands"].insert(kept["strands"].begin(),
                         json::array({0, 0, 0, 0, 123456789, 1, 1, 200, false}));
  kept["fragments"].insert(kept["fragments"].begin(), 999999);
  std::ofstream(entry, std::ios::trunc) << kept.dump();

  const RunResult again = run(report, env());
  ASSERT_TRUE(again.exited(0)) << again.describe();
  EXPECT_EQ(again.out, first.out);
  EXPECT_EQ(again.err.find("robust (kept)"), std::string::npos) << again.err;
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_EQ(json::parse(read_file(entries()[0]))["strands"].size(),
            kept["strands"].size() - 1);  // decided again

  // A damaged entry is no decision.
  std::ofstream(entries()[0], std::ios::trunc) << "{\"format\": 1, \"strands\": [";
  const RunResult damaged = run(report, env());
  ASSERT_TRUE(damaged.exited(0)) << damaged.describe();
  EXPECT_EQ(damaged.out, first.out);
  EXPECT_EQ(damaged.err.find("robust (kept)"), std::string::npos) << damaged.err;

  // The recording written again (another run of the program): a decision of its own.
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"22"}, trace).exited(0));
  const RunResult rewritten = run(report, env());
  ASSERT_TRUE(rewritten.exited(0)) << rewritten.describe();
  EXPECT_EQ(rewritten.err.find("robust (kept)"), std::string::npos) << rewritten.err;
  EXPECT_EQ(entries().size(), 2u);
}

}  // namespace
}  // namespace tasklens::e2e
