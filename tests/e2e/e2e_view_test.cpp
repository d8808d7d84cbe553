// End to end: `tasklens view` on recorded programs (OpenMP with regions, oneTBB, two runs
// compared, regions named like HTML injections), the page opened in headless Chromium through
// chromedriver (tests/browser/drive_view.py): every view drawn with its content, no console
// error, no dialog, a table sorted and a hierarchy node expanded by real clicks, a timeline slice
// linked to its construct; screenshots in <build>/test-artifacts/view/. And the errors on bad
// input. The timeline is zoomed by a drag. A compare page's differential table (tasklens diff's
// JSON) is drawn and sorted, or says why two runs cannot be compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

const std::vector<std::string> kViews = {"view-summary",  "view-profile",  "view-whatif",
                                         "view-overtime", "view-timeline", "view-hierarchy",
                                         "view-tasks",    "view-sched"};

std::string artifacts() {
  const std::string dir = std::string(TASKLENS_TEST_ARTIFACTS) + "/view";
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs the driver on `page`; the parsed result (a test failure and null when it could not drive).
json drive(const std::string& page, const std::string& name,
           const std::vector<std::string>& texts = {}, bool view_shots = false) {
  std::vector<std::string> argv = {
      "/usr/bin/python3", TASKLENS_VIEW_DRIVER, page, "--shots", artifacts(), "--name", name};
  for (const std::string& t : texts) argv.insert(argv.end(), {"--text", t});
  if (view_shots) argv.push_back("--view-shots");
  if (!std::filesystem::exists("/usr/bin/chromedriver")) {
    ADD_FAILURE() << "/usr/bin/chromedriver not found: install Debian's chromium and "
                     "chromium-driver (scripts/setup.sh does)";
    return json();
  }
  RunResult r = run(argv, default_env(), 240);
  json j;
  try {
    j = json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "driver output is not JSON (" << e.what() << "): " << r.describe();
    return json();
  }
  EXPECT_TRUE(r.exited(0)) << "driver: " << j.value("driver_error", json()).dump() << "\n"
                           << r.describe();
  return j;
}

// "1.234 ms" -> seconds; a count ("12", "1.5 k") -> its value. NaN if unreadable.
double amount_value(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return NAN;
  }
  const std::string unit = text.substr(std::min(text.size(), used + 1));
  if (unit == "s" || unit.empty()) return v;
  if (unit == "ms") return v * 1e-3;
  if (unit == "us") return v * 1e-6;
  if (unit == "ns") return v * 1e-9;
  if (unit == "k") return v * 1e3;
  if (unit == "M") return v * 1e6;
  if (unit == "G") return v * 1e9;
  return NAN;
}

// Browser console entries at error level (SEVERE), one per line.
std::string console_errors(const json& result) {
  std::string s;
  for (const json& m : result.value("console", json::array()))
    if (m.value("level", "") == "SEVERE") s += m.value("message", "") + "\n";
  return s;
}

// The checks every page must pass; returns the inspection of the views.
json expect_page_works(const json& r, size_t runs = 1) {
  if (r.is_null()) return json();
  EXPECT_TRUE(r["driver_error"].is_null()) << r["driver_error"];
  EXPECT_EQ(console_errors(r), "") << "console errors";
  EXPECT_EQ(r["dialogs"].size(), 0u) << r["dialogs"];
  const json& in = r["inspect"];
  EXPECT_EQ(in.value("ready", ""), "true");
  EXPECT_EQ(in.value("images", -1), 0);
  for (const std::string& v : kViews) {
    SCOPED_TRACE(v);
    if (!in["views"].contains(v)) {
      ADD_FAILURE() << "no section " << v;
      continue;
    }
    const json& x = in["views"][v];
    EXPECT_EQ(x.value("rendered", ""), "true");
    EXPECT_EQ(x.value("errors", -1), 0);
    EXPECT_EQ(x.value("columns", 0), static_cast<int>(runs));
    EXPECT_GT(x.value("text_length", 0), 20);
  }
  const json& v = in["views"];
  EXPECT_GE(v["view-profile"]["table_rows"].get<int>(), 2 * static_cast<int>(runs));
  EXPECT_GE(v["view-whatif"]["curves"].get<int>(), 1);
  EXPECT_GE(v["view-whatif"]["steps"].get<int>(), 1);
  EXPECT_EQ(v["view-overtime"]["running_paths"].get<int>(), static_cast<int>(runs));
  EXPECT_EQ(v["view-overtime"]["ready_paths"].get<int>(), static_cast<int>(runs));
  EXPECT_GE(v["view-timeline"]["slices"].get<int>(), 2);
  EXPECT_GE(v["view-hierarchy"]["tree_rows"].get<int>(), 2);
  EXPECT_GE(v["view-tasks"]["task_types"].get<int>(), 1);
  EXPECT_GE(v["view-tasks"]["hist_bars"].get<int>(), 2);
  EXPECT_GE(v["view-sched"]["bar_rows"].get<int>(), 3);  // 2 workers and the total
  EXPECT_GE(v["view-sched"]["bar_segments"].get<int>(), 3);

  // Sorting by a real click on the header: work, largest first.
  const json& work = r["sort"]["work"];
  std::vector<double> values;
  for (size_t i = 1; i < work["after"].size(); ++i)  // row 0: the whole program, pinned
    values.push_back(amount_value(work["after"][i].get<std::string>()));
  for (size_t i = 1; i < values.size(); ++i)
    EXPECT_GE(values[i - 1], values[i]) << "work column not sorted: " << work["after"];
  // Then by site: A to Z, and a second click Z to A (the same rows reversed, the whole-program
  // row staying first); the header says which.
  const json& site = r["sort"]["site"];
  auto asc = site["after"].get<std::vector<std::string>>();
  auto desc = site["after_second"].get<std::vector<std::string>>();
  EXPECT_EQ(asc.size(), desc.size());
  if (asc.size() > 2 && asc.size() == desc.size()) {
    EXPECT_EQ(asc[0], desc[0]);
    std::vector<std::string> reversed(asc.begin() + 1, asc.end());
    std::reverse(reversed.begin(), reversed.end());
    EXPECT_EQ(std::vector<std::string>(desc.begin() + 1, desc.end()), reversed);
    EXPECT_NE(asc, desc) << "clicking 'site' again did not reorder the rows";
  }
  auto before = site["before"].get<std::vector<std::string>>();
  std::sort(before.begin(), before.end());
  std::sort(asc.begin(), asc.end());
  EXPECT_EQ(before, asc) << "sorting lost or added rows";
  auto header_state = [](const json& state) {
    for (const json& h : state)
      if (h[0] == "site") return h[1].get<std::string>();
    return std::string();
  };
  EXPECT_EQ(header_state(site["state"]), "ascending");
  EXPECT_EQ(header_state(site["state_second"]), "descending");

  // Expanding a hierarchy node by a click shows its children.
  const json& ex = r["expand"];
  EXPECT_GE(ex.value("collapsed_toggles", 0), 1);
  EXPECT_GT(ex.value("after", 0), ex.value("before", 0)) << ex;

  // A timeline slice's click highlights its construct group.
  const json& click = r["timeline_click"];
  EXPECT_EQ(click.value("highlighted_tree_rows", 0), 1) << click;
  EXPECT_EQ(click["highlighted_agg"], click["slice_agg"]) << click;

  // Dragging across the timeline zooms into that range; "Whole run" zooms back out.
  const json& zoom = r["timeline_zoom"];
  EXPECT_EQ(zoom.value("note", "").rfind("showing ", 0), 0u) << zoom;
  EXPECT_NE(zoom.value("axis_first", "0"), "0") << zoom;
  EXPECT_EQ(zoom.value("note_after_reset", "").rfind("drag across", 0), 0u) << zoom;

  for (const json& shot : r["screenshots"]) {
    const std::string file = artifacts() + "/" + shot.get<std::string>();
    EXPECT_TRUE(std::filesystem::exists(file)) << file;
    if (std::filesystem::exists(file)) {
      EXPECT_GT(std::filesystem::file_size(file), 1000u) << file;
    }
  }
  EXPECT_GE(r["screenshots"].size(), 1u);
  return in;
}

class View : public E2E {
 protected:
  std::string recorded(const std::string& exe, const std::vector<std::string>& args,
                       const std::string& name, const EnvOverrides& env = default_env(),
                       const std::vector<std::string>& flags = {}) {
    const std::string trace = path(name + ".tlens");
    RunResult rec = record(exe, args, trace, env, flags);
    EXPECT_TRUE(rec.exited(0)) << rec.describe();
    return trace;
  }
  std::string view(const std::vector<std::string>& args, const std::string& page) {
    std::vector<std::string> argv = {TASKLENS_BIN, "view"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"-o", page});
    RunResult r = run(argv);
    EXPECT_TRUE(r.exited(0)) << r.describe();
    EXPECT_NE(r.err.find("wrote " + page), std::string::npos) << r.describe();
    return page;
  }
};

TEST_F(View, OpenMPRegionsEveryViewDrawnSortedAndExpanded) {
  const std::string trace = recorded(example("regions", "clang"), {}, "regions");
  const std::string page = view({trace}, path("regions.html"));
  const json r = drive(page, "regions", {"region leaf", "regions.c"}, true);
  const json in = expect_page_works(r);
  if (r.is_null()) return;
  EXPECT_TRUE(r["texts"]["region leaf"].get<bool>());
  EXPECT_TRUE(r["texts"]["regions.c"].get<bool>());
  // Default what-if units: the 5 regions and the sites, plus "all".
  EXPECT_GE(in["views"]["view-whatif"]["curves"].get<int>(), 6);
}

// The page of recordings read in passes (--stream; view does so by itself when their DAGs do not
// fit): every view drawn, the default what-if units as with the DAG (the regions, the sites,
// "all"), the hierarchy without its groups' spans, the differential view of the two.
TEST_F(View, ReadInPassesEveryViewDrawn) {
  const std::string trace = recorded(example("regions", "clang"), {}, "regions_passes");
  const std::string page =
      view({"--stream", trace, "--compare", trace}, path("regions_passes.html"));
  const json r = drive(page, "regions_passes", {"region leaf", "regions.c"});
  const json in = expect_page_works(r, 2);
  if (r.is_null()) return;
  EXPECT_GE(in["views"]["view-whatif"]["curves"].get<int>(), 2 * 6);
  EXPECT_EQ(r["diff"].value("rendered", ""), "true") << r["diff"];
}

TEST_F(View, OneTbbEveryViewDrawn) {
  const std::string trace =
      recorded(std::string(TASKLENS_EXAMPLES_DIR) + "/tbb_fib", {}, "tbb_fib");
  const std::string page = view({trace}, path("tbb_fib.html"));
  expect_page_works(drive(page, "tbb_fib", {"tbb_fib.cpp"}));
}

TEST_F(View, CompareShowsTwoRunsSideBySide) {
  const std::string two = recorded(example("fib", "gcc"), {"10", "200"}, "fib2");
  const std::string one = recorded(example("fib", "gcc"), {"10", "200"}, "fib1", default_env(1));
  const std::string page = view({two, "--compare", one}, path("compare.html"));
  const json r = drive(page, "compare", {}, true);
  if (r.is_null()) return;
  EXPECT_EQ(r["screenshots"].size(), 1 + kViews.size() + 1);  // the page, each view, the diff
  // One worker in the second run: its breakdown has one worker row and the total.
  EXPECT_TRUE(r["driver_error"].is_null()) << r["driver_error"];
  EXPECT_EQ(console_errors(r), "");
  for (const std::string& v : kViews) {
    EXPECT_EQ(r["inspect"]["views"][v].value("columns", 0), 2) << v;
    EXPECT_EQ(r["inspect"]["views"][v].value("rendered", ""), "true") << v;
  }
  EXPECT_EQ(r["inspect"]["views"]["view-sched"]["bar_rows"].get<int>(), 3 + 2);
  EXPECT_EQ(r["inspect"]["views"]["view-overtime"]["running_paths"].get<int>(), 2);
  // The differential view, once for the pair; the first run is the base, and it ran on two
  // workers: the diff's note says it is no oracle.
  EXPECT_EQ(r["diff"].value("rendered", ""), "true") << r["diff"];
  EXPECT_EQ(r["diff"].value("columns", 0), 1);
  EXPECT_GE(r["diff"].value("site_rows", 0), 3) << r["diff"];  // the program, fib.c's 2 tasks
  EXPECT_NE(r["diff"].value("text", "").find("not a contention-free oracle"), std::string::npos)
      << r["diff"];
}

// The text of the page's JSON block `id` ("tl-0-diff"), parsed; null when there is none.
json embedded_json(const std::string& html, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  const size_t at = html.find(open);
  if (at == std::string::npos) return json();
  const size_t from = at + open.size();
  return json::parse(html.substr(from, html.find("</script>", from) - from));
}

// False sharing at 1 thread (the base) against 2, in two metrics: the differential table is
// `tasklens diff`'s JSON, every row, drawn with its rows and columns per metric; sorting its
// ratio column by clicks works.
TEST_F(View, CompareShowsTheDifferentialTableSortable) {
  const std::string exe = example("false_sharing", "clang");
  // Two metrics (task-clock is a software event: every machine has it): columns per metric.
  const std::vector<std::string> metrics = {"--metric", "tsc,task-clock"};
  const std::string one = recorded(exe, {"2000000", "1"}, "one", default_env(1), metrics);
  const std::string two = recorded(exe, {"2000000", "1"}, "two", default_env(2), metrics);
  const std::string page = view({one, "--compare", two}, path("diff.html"));
  RunResult diff = tasklens_command("diff", {one, two, "--format", "json"});
  ASSERT_TRUE(diff.exited(0)) << diff.describe();
  const json embedded = embedded_json(read_file(page), "tl-0-diff");
  EXPECT_EQ(embedded, json::parse(diff.out)) << "the page's diff is not diff's own JSON";
  EXPECT_TRUE(embedded_json(read_file(page), "tl-1-diff").is_null());

  const json r = drive(page, "diff", {"false_sharing.c", "shared_loop", "padded_loop"});
  if (r.is_null()) return;
  expect_page_works(r, 2);
  const json& d = r["diff"];
  EXPECT_EQ(d.value("rendered", ""), "true") << d;
  EXPECT_EQ(d.value("errors", -1), 0);
  EXPECT_TRUE(d["reason"].is_null()) << d;
  EXPECT_EQ(d.value("summary_rows", 0), 3);  // base, other, other / base
  EXPECT_EQ(embedded["metrics"], json::array({"tsc", "task-clock"}));
  const auto headers = d["headers"].get<std::vector<std::string>>();
  for (const char* h :
       {"unit", "kind", "function", "tsc base", "tsc other", "tsc ratio", "tsc cost", "tsc cost %",
        "task-clock base", "task-clock ratio", "task-clock cost %"})
    EXPECT_NE(std::find(headers.begin(), headers.end(), h), headers.end()) << h << ": " << d;
  // The program and the two loops (the false-sharing one and its padded control), whatever
  // their ratios on a loaded machine; the fragments' table too.
  EXPECT_EQ(d.value("site_rows", 0), 1 + static_cast<int>(embedded["sites"].size())) << d;
  EXPECT_GE(embedded["sites"].size() + embedded["small_sites"].size(), 2u);
  EXPECT_GE(d.value("fragment_rows", 0), 2) << d;
  int inflated = 0;  // the rows the page must highlight: their work grew by 10% or more
  for (const char* list : {"sites", "fragments"})
    for (const json& u : embedded[list]) {
      const json& ratio = u["metrics"]["tsc"]["ratio"];
      inflated += ratio.is_number() && ratio.get<double>() >= 1.1;
    }
  EXPECT_EQ(d.value("inflated_rows", -1), inflated) << d;
  for (const char* t : {"false_sharing.c", "shared_loop", "padded_loop"})
    EXPECT_TRUE(r["texts"][t].get<bool>()) << t;

  // Sorting by a click on "ratio": largest first below the pinned program row, then reversed.
  const json& sort = r["diff_sort"];
  ASSERT_TRUE(sort.is_object()) << "no ratio header in the differential table: " << d;
  auto ratios = [](const json& cells) {
    std::vector<double> v;
    for (size_t i = 1; i < cells.size(); ++i)  // row 0: the whole program
      v.push_back(cells[i] == "-" ? INFINITY : std::stod(cells[i].get<std::string>()));
    return v;
  };
  const std::vector<double> down = ratios(sort["after"]), up = ratios(sort["after_second"]);
  ASSERT_EQ(down.size(), up.size());
  for (size_t i = 1; i < down.size(); ++i) EXPECT_GE(down[i - 1], down[i]) << sort;
  for (size_t i = 1; i < up.size(); ++i) EXPECT_LE(up[i - 1], up[i]) << sort;
  EXPECT_EQ(sort["units_after"][0], "<whole program>");
  bool shot = false;
  for (const json& s : r["screenshots"]) shot |= s == "diff-view-diff.png";
  EXPECT_TRUE(shot) << "no screenshot of the differential view: " << r["screenshots"];
}

// Two different programs: diff refuses them, the page still shows both runs and says why.
TEST_F(View, CompareOfTwoProgramsShowsWhyThereIsNoDifferentialTable) {
  const std::string fib = recorded(example("fib", "gcc"), {"10", "200"}, "fib");
  const std::string barrier = recorded(example("sem_barrier", "gcc"), {}, "barrier");
  const std::string page = view({fib, "--compare", barrier}, path("two-programs.html"));
  const json r = drive(page, "two-programs", {"no construct site in common"});
  if (r.is_null()) return;
  EXPECT_TRUE(r["driver_error"].is_null()) << r["driver_error"];
  EXPECT_EQ(console_errors(r), "");
  for (const std::string& v : kViews) {
    EXPECT_EQ(r["inspect"]["views"][v].value("rendered", ""), "true") << v;
    EXPECT_EQ(r["inspect"]["views"][v].value("columns", 0), 2) << v;
  }
  const json& d = r["diff"];
  EXPECT_EQ(d.value("rendered", ""), "true") << d;
  EXPECT_EQ(d.value("site_rows", -1), 0) << d;
  ASSERT_TRUE(d["reason"].is_string()) << d;
  EXPECT_NE(d["reason"].get<std::string>().find("no construct site in common"), std::string::npos)
      << d;
  EXPECT_TRUE(r["texts"]["no construct site in common"].get<bool>());
}

TEST_F(View, ProgramNamesShowAsTextAndNeverRun) {
  const std::string exe = std::string(TASKLENS_FAKE_TBB_DIR) + "/xss_regions";
  const std::string trace = recorded(exe, {}, "xss");
  const std::string page = view({trace}, path("xss.html"));
  const std::string html = read_file(page);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  const json r = drive(page, "xss", {"<script>alert(1)</script>", "<img src=x onerror=alert(2)>"});
  if (r.is_null()) return;
  expect_page_works(r);
  EXPECT_TRUE(r["texts"]["<script>alert(1)</script>"].get<bool>()) << "the name must show as text";
  EXPECT_TRUE(r["texts"]["<img src=x onerror=alert(2)>"].get<bool>());
  EXPECT_EQ(r["dialogs"].size(), 0u) << "an alert ran: " << r["dialogs"];
  // Only the page's own scripts: the index, six sections and the code.
  EXPECT_EQ(r["inspect"].value("scripts", 0), 8);
}

// The same names in the text outputs: a region name that would clear the terminal is shown
// escaped, and a name holding '=' is selected whole, without a factor.
TEST_F(View, ProgramNamesArePrintableInTablesAndSelectableWithEquals) {
  const std::string exe = std::string(TASKLENS_FAKE_TBB_DIR) + "/xss_regions";
  const std::string trace = recorded(exe, {}, "xss-text");
  RunResult list = run({TASKLENS_BIN, "whatif", "--list", trace});
  ASSERT_TRUE(list.exited(0)) << list.describe();
  EXPECT_EQ(list.out.find('\x1b'), std::string::npos) << "a raw escape reached the terminal";
  EXPECT_EQ(list.out.find('\a'), std::string::npos);
  EXPECT_NE(list.out.find(R"(\x1b[2J\x07bad\xff)"), std::string::npos) << list.out;
  RunResult img = run({TASKLENS_BIN, "whatif", "--region", "<img src=x onerror=alert(2)>", trace});
  EXPECT_TRUE(img.exited(0)) << img.describe();
  RunResult img4 = run({TASKLENS_BIN, "whatif", "--format", "csv", "--region",
                        "<img src=x onerror=alert(2)>=4", trace});
  EXPECT_TRUE(img4.exited(0)) << img4.describe();
  RunResult term =
      run({TASKLENS_BIN, "whatif", "--format", "csv", "--region", R"(\x1b[2J\x07bad\xff)", trace});
  EXPECT_TRUE(term.exited(0)) << term.describe();
  EXPECT_EQ(term.out.find('\x1b'), std::string::npos) << term.out;
}

// A program without tasks (a parallel region and barriers): the task view says why it is empty,
// every other view is drawn.
TEST_F(View, WithoutTasksTheTaskViewSaysWhy) {
  const std::string trace = recorded(example("sem_barrier", "gcc"), {}, "barrier");
  const std::string page = view({trace}, path("barrier.html"));
  const json r = drive(page, "barrier", {"the trace has no tasks"});
  if (r.is_null()) return;
  EXPECT_TRUE(r["driver_error"].is_null()) << r["driver_error"];
  EXPECT_EQ(console_errors(r), "");
  EXPECT_TRUE(r["texts"]["the trace has no tasks"].get<bool>());
  for (const std::string& v : kViews)
    EXPECT_EQ(r["inspect"]["views"][v].value("rendered", ""), "true") << v;
  EXPECT_EQ(r["inspect"]["views"]["view-tasks"]["task_types"].get<int>(), 0);
  EXPECT_GE(r["inspect"]["views"]["view-whatif"]["curves"].get<int>(), 1);
  EXPECT_GE(r["inspect"]["views"]["view-timeline"]["slices"].get<int>(), 2);
}

TEST_F(View, BadInputIsOneLineAndNonZero) {
  expect_one_line(tasklens_command("view", {path("missing.tlens"), "-o", path("x.html")}), 4,
                  "missing.tlens");
  const std::string trace = recorded(example("fib", "gcc"), {"10", "200"}, "fib");
  expect_one_line(tasklens_command("view", {trace, "--mode", "fast"}), 2, "--mode fast");
  expect_one_line(tasklens_command("view", {trace, "--site", "nowhere.c:1"}), 2,
                  "--site nowhere.c:1");
  expect_one_line(tasklens_command("view", {trace, "--factors", "0.5"}), 2, "--factors");
  expect_one_line(tasklens_command("view", {trace, "-o", path("no/such/dir/x.html")}), 2,
                  "cannot write");
  EXPECT_FALSE(std::filesystem::exists(path("x.html")));
}

// `view --whatif UNIT`: a site given that way gives the page the same what-if JSON as
// `tasklens whatif --site`, and a unit not in the trace is one line.
TEST_F(View, WhatIfFlagTakesAnyUnit) {
  const std::string trace = recorded(example("fib", "clang"), {"10", "200"}, "fib");
  const json report = report_json(trace);
  std::string site;
  for (const json& row : report["sites"])
    if (row.value("kind", "") == "task") site = row.value("site", "");
  ASSERT_FALSE(site.empty()) << report.dump();
  const std::string page = path("whatif.html");
  RunResult r = tasklens_command("view", {trace, "--whatif", site + "=4", "-o", page});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  RunResult w = tasklens_command("whatif", {trace, "--site", site + "=4", "--format", "json"});
  ASSERT_TRUE(w.exited(0)) << w.describe();
  EXPECT_EQ(embedded_json(read_file(page), "tl-0-whatif"), json::parse(w.out))
      << "the page's what-if is not `whatif --site`'s own JSON";
  r = tasklens_command("view", {trace, "--whatif", "nowhere.c:1", "-o", path("x.html")});
  EXPECT_TRUE(r.exited(2)) << r.describe();
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("nowhere.c:1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tasklens::e2e
