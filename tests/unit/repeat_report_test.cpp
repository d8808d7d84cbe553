// `record --repeat`'s account of a series of recordings: the file names, the median, the spread
// and what it tells the user.
#include "report/repeat_report.hpp"

#include <gtest/gtest.h>

namespace tasklens::report {
namespace {

RepeatFigures run(unsigned k, double parallelism, double steal = -1) {
  RepeatFigures f;
  f.run = k;
  f.path = "r." + std::to_string(k) + ".tlens";
  f.parallelism = parallelism;
  f.work = "10.000 ms";
  f.span = "2.000 ms";
  f.host_steal = steal;
  return f;
}

TEST(RepeatReport, TheRunsNumberGoesBeforeTheExtension) {
  EXPECT_EQ(numbered_output("run.tlens", 2), "run.2.tlens");
  EXPECT_EQ(numbered_output("tasklens.data", 1), "tasklens.1.data");
  EXPECT_EQ(numbered_output("/tmp/x/run", 3), "/tmp/x/run.3");
  EXPECT_EQ(numbered_output("a.b.tlens", 10), "a.b.10.tlens");
  EXPECT_EQ(numbered_output(".tlens", 4), ".tlens.4");  // a name that is all extension
}

TEST(RepeatReport, TheMedianIsTheMiddleRecordingAndTheSpreadTheFarthestFromIt) {
  // Odd count: the middle one, wherever it was recorded.
  RepeatSpread s = repeat_spread({run(1, 6.0), run(2, 4.0), run(3, 5.0)});
  EXPECT_EQ(s.median, 2u);
  EXPECT_DOUBLE_EQ(s.most_apart, 0.2);  // 4 and 6 both lie 20% from 5
  // Even count: the lower middle one (a recording that exists, not a mean).
  s = repeat_spread({run(1, 8.0), run(2, 2.0), run(3, 4.0), run(4, 5.0)});
  EXPECT_EQ(s.median, 2u);
  EXPECT_DOUBLE_EQ(s.most_apart, 1.0);  // 8 is twice 4
  // Ties keep the recording order; one recording is its own median.
  s = repeat_spread({run(1, 3.0), run(2, 3.0)});
  EXPECT_EQ(s.median, 0u);
  EXPECT_EQ(s.most_apart, 0);
  EXPECT_EQ(repeat_spread({run(1, 7.0)}).median, 0u);
}

TEST(RepeatReport, TheSummarySaysWhetherOneRecordingStandsForTheProgram) {
  std::vector<RepeatFigures> agree = {run(1, 5.0), run(2, 5.2), run(3, 4.9)};
  std::string text = repeat_summary(agree, repeat_spread(agree), "./app", "r.tlens");
  EXPECT_NE(text.find("3 recordings of ./app"), std::string::npos) << text;
  EXPECT_NE(text.find("agree within 4%"), std::string::npos) << text;
  EXPECT_NE(text.find("r.tlens is run 1's recording"), std::string::npos) << text;
  EXPECT_NE(text.find("r.1.tlens"), std::string::npos) << text;
  EXPECT_EQ(text.find("host steal"), std::string::npos) << "no column when no trace says";

  std::vector<RepeatFigures> apart = {run(1, 4.0), run(2, 6.3, 12), run(3, 5.2, 0)};
  text = repeat_summary(apart, repeat_spread(apart), "./app", "r.tlens");
  EXPECT_NE(text.find("4.00 to 6.30, median 5.20: up to 23% from the median"), std::string::npos)
      << text;
  EXPECT_NE(text.find("take a difference under 23% for noise"), std::string::npos) << text;
  EXPECT_NE(text.find("r.tlens is run 3's recording"), std::string::npos) << text;
  EXPECT_NE(text.find("host steal"), std::string::npos) << text;
  EXPECT_NE(text.find("12%"), std::string::npos) << text;
  // The median's row is marked, and only it.
  const size_t mark = text.find("<- median");
  ASSERT_NE(mark, std::string::npos) << text;
  EXPECT_EQ(text.find("<- median", mark + 1), std::string::npos) << text;
  EXPECT_NE(text.rfind("5.20", mark), std::string::npos) << text;
}

}  // namespace
}  // namespace tasklens::report
