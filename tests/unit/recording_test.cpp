// What src/load/recording.hpp decides without reading a trace: that the passes of one reading
// (advise's steps, diff's costs) read the same recording. (Its readings themselves run in every
// e2e test.)
#include "load/recording.hpp"

#include <gtest/gtest.h>

#include <string>

#include "errors.hpp"

namespace tasklens::load {
namespace {

Streamed read_with(std::vector<std::string> sites, std::vector<std::string> fragments) {
  Streamed st;
  for (std::string& s : sites) {
    report::SiteLabel label;
    label.site = std::move(s);
    st.labels.push_back(label);
  }
  st.fragment_labels = std::move(fragments);
  return st;
}

TEST(Recording, APassThatMetOtherSitesOrFragmentsIsRefused) {
  const Streamed first = read_with({"<program>", "fib.c:19"}, {"<unknown>", "fib.c:19-21"});
  EXPECT_NO_THROW(
      check_read_alike(first, read_with({"<program>", "fib.c:19"}, {"<unknown>", "fib.c:19-21"})));
  for (const Streamed& again : {read_with({"<program>", "fib.c:20"}, {"<unknown>", "fib.c:19-21"}),
                                read_with({"<program>"}, {"<unknown>", "fib.c:19-21"}),
                                read_with({"<program>", "fib.c:19"}, {"fib.c:19-21", "<unknown>"}),
                                read_with({"<program>", "fib.c:19"}, {"<unknown>"})}) {
    try {
      check_read_alike(first, again);
      FAIL() << "not refused";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("the recording changed between two of its passes"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tasklens::load
