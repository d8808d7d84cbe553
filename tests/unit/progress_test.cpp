// The reader's progress line (src/load/progress.cpp): its words, and that it shows nothing where
// stderr is not a terminal (the tests' own stderr is a pipe or a file under ctest). On a
// terminal: tests/e2e/e2e_cli_test.cpp, under script(1).
#include "load/progress.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

namespace tasklens::load {
namespace {

TEST(Progress, TheLineSaysThePhaseHowFarAndHowLong) {
  EXPECT_EQ(progress_line("reading run.tlens", 43, 100, "events", 6.2),
            "tasklens: reading run.tlens: 43% of 100 events, 6 s");
  EXPECT_EQ(progress_line("reading run.tlens", 5'200'000, 12'400'000, "events", 12),
            "tasklens: reading run.tlens: 41% of 12.4 M events, 12 s");
  EXPECT_EQ(progress_line("reading big.tlens", 1, 2'600'000'000, "events", 61.6),
            "tasklens: reading big.tlens: 0% of 2.6 G events, 62 s");
  EXPECT_EQ(progress_line("reading a.tlens", 0, 45'000, "events", 2),
            "tasklens: reading a.tlens: 0% of 45 K events, 2 s");
  // Never 100% while the phase is on (the next phase's line follows its end).
  EXPECT_EQ(progress_line("reading a.tlens", 999, 1000, "events", 3),
            "tasklens: reading a.tlens: 99% of 1000 events, 3 s");
  EXPECT_EQ(progress_line("reading a.tlens", 1200, 1000, "events", 3),
            "tasklens: reading a.tlens: 99% of 1000 events, 3 s");
  // No total: the phase and the time only.
  EXPECT_EQ(progress_line("analysing run.tlens", 7, 0, "", 9.4),
            "tasklens: analysing run.tlens, 9 s");
}

TEST(Progress, NothingIsShownWhereStderrIsNotATerminal) {
  if (isatty(STDERR_FILENO)) GTEST_SKIP() << "run with stderr on a terminal: see e2e_cli_test";
  Progress& p = Progress::global();
  p.start();
  EXPECT_FALSE(p.enabled());
  p.phase("reading x.tlens");  // no thread started, nothing written
  p.amount(1, 2, "events");
  p.stop();
  p.stop();  // twice: nothing either
}

}  // namespace
}  // namespace tasklens::load
