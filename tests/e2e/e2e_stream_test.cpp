// `report --stream`: a recording read in one pass (model::build_streaming into
// analysis::StreamProfile, docs/design-scale.md) gives the profile the DAG in memory gives, to
// the tick, with memory that follows what the run had live rather than its task count; `report`
// reads that way by itself a recording whose DAG does not fit in the memory. (What those
// readings hold in memory: e2e_stream_memory_test.cpp.)
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

class Stream : public E2E {};

// Per site (its label and kind): count, work, span, critical work, blocked time.
using Rows = std::map<std::string, std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, uint64_t>>;
Rows rows_of(const json& report) {
  Rows rows;
  for (const json& r : report["sites"])
    rows[r["site"].get<std::string>() + " " + r["kind"].get<std::string>()] = {
        r["count"].get<uint64_t>(), r["work"].get<uint64_t>(), r["span"].get<uint64_t>(),
        r["critical_work"].get<uint64_t>(), r["blocked"].get<uint64_t>()};
  return rows;
}

// A refusal: exit `code`, one line on stderr holding `says`, nothing on stdout.
// whatif --list's fragments, each line without its function (one pass does not name them):
// the label, the work and the share of the critical path. Sorted, since equal rows may come in
// another order.
std::vector<std::string> listed_fragments(const std::string& list) {
  std::vector<std::string> rows;
  bool in = false;
  for (const std::string& line : lines_of(list)) {
    if (line.rfind("fragments", 0) == 0) in = true;
    const size_t crit = line.find("crit.% ");
    if (in && crit != std::string::npos) rows.push_back(line.substr(0, crit + 12));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// whatif --list's regions: each line whole (name, work, share of the critical path).
std::vector<std::string> listed_regions(const std::string& list) {
  std::vector<std::string> rows;
  bool in = false;
  for (const std::string& line : lines_of(list)) {
    if (line.rfind("regions (", 0) == 0) {
      in = true;
      continue;
    }
    if (in && (line.empty() || line[0] != ' ')) break;
    if (in) rows.push_back(line);
  }
  return rows;
}

// `whatif --stream` against `whatif` on the same recording, with --raw-span (one pass) and
// without (the robust span's passes): the same JSON, warnings apart (the curves, the recorded
// profile and the profile after the units). The units are the recording's first user region
// with work, if it has regions, its first construct site in `report`'s order and the fragment
// `whatif --list` shows first, at its own factor (so that the curve of all together is there
// too), in both modes. Its list read in passes has the same regions and fragments, with the same
// work and critical path shares.
void expect_same_whatif(const std::string& trace, const json& report, const std::string& name) {
  for (const bool robust : {false, true}) {
    std::vector<std::string> argv = {TASKLENS_BIN, "whatif", "--list", "--top", "100000", trace};
    if (!robust) argv.insert(argv.begin() + 2, "--raw-span");
    std::vector<std::string> stream = argv;
    stream.insert(stream.begin() + 2, "--stream");
    const RunResult list = run(argv), list_in_passes = run(stream);
    ASSERT_TRUE(list.exited(0) && list_in_passes.exited(0))
        << list.describe() << list_in_passes.describe();
    EXPECT_EQ(listed_fragments(list_in_passes.out), listed_fragments(list.out)) << name << robust;
    EXPECT_EQ(listed_regions(list_in_passes.out), listed_regions(list.out)) << name << robust;
  }
  const RunResult list =
      run({TASKLENS_BIN, "whatif", "--raw-span", "--list", "--top", "100000", trace});
  ASSERT_TRUE(list.exited(0)) << list.describe();
  const std::vector<std::string> regions = listed_regions(list.out);
  std::vector<std::string> units;
  for (const std::string& row : regions) {
    const size_t work = row.find(" work ");
    if (work == std::string::npos || row.find(" 0 ns ") != std::string::npos) continue;
    std::string region = row.substr(2, work - 2);
    region.erase(region.find_last_not_of(' ') + 1);
    units = {"--region", region};
    break;
  }
  for (const json& r : report["sites"])
    if (r["kind"] != "program") {
      units.insert(units.end(), {"--site", r["site"]});
      break;
    }
  // The first fragment listed (the most work on the critical path).
  const std::vector<std::string> lines = lines_of(list.out);
  const auto header = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.rfind("fragments", 0) == 0;
  });
  if (header != lines.end() && header + 1 != lines.end()) {
    std::istringstream row(*(header + 1));
    std::string label;
    row >> label;
    units.insert(units.end(), {"--fragment", label + "=3"});
  }
  if (units.empty()) return;
  for (const char* mode : {"parallelize", "speedup"}) {
    const bool robust = mode == std::string("speedup");  // (one mode each: the suite's time)
    std::vector<std::string> argv = {TASKLENS_BIN, "whatif", "--format", "json", "--mode", mode};
    argv.insert(argv.end(), units.begin(), units.end());
    argv.push_back(trace);
    std::vector<std::string> raw = argv, stream = argv;
    if (!robust) {
      raw.insert(raw.begin() + 2, "--raw-span");
      stream.insert(stream.begin() + 2, "--raw-span");
    }
    stream.insert(stream.begin() + 2, "--stream");
    json memory = json_of_run(raw), one_pass = json_of_run(stream);
    ASSERT_FALSE(memory.is_null() || one_pass.is_null()) << name;
    const std::string said = one_pass["warnings"].dump();
    EXPECT_NE(said.find(robust && memory["span_mode"] == "robust" ? "read in passes"
                                                                  : "read in one pass"),
              std::string::npos)
        << name << ": " << said;
    memory.erase("warnings");
    one_pass.erase("warnings");
    // The loops' facts (a loop's rows "loop" and "team_bound") come from the DAG: one pass has
    // none, in whatif as in report.
    for (json* j : {&memory, &one_pass})
      for (json& row : (*j)["after"]["sites"]) {
        row.erase("loop");
        row.erase("team_bound");
      }
    EXPECT_FALSE(one_pass.dump().find("team_bound") != std::string::npos) << name;
    EXPECT_EQ(one_pass, memory) << name << " whatif --mode " << mode << " " << units.back();
  }
}

// `tasks --stream` against `tasks` on the same recording: the same JSON, but for the one-pass
// note and the medians and 90th percentiles, which may be below the exact ones by at most the
// stated relative error, and what follows from them: the long waits' threshold (above the exact
// one by at most that much) and count (never above the exact one), the findings' words.
void expect_same_tasks(const std::string& trace, const std::string& name) {
  const RunResult a = run({TASKLENS_BIN, "tasks", "--format", "json", trace});
  const RunResult b = run({TASKLENS_BIN, "tasks", "--stream", "--format", "json", trace});
  if (!a.exited(0)) {  // a program without tasks: the same refusal
    EXPECT_TRUE(a.exited(2) && b.exited(2)) << a.describe() << b.describe();
    EXPECT_EQ(b.err, a.err) << name;
    return;
  }
  ASSERT_TRUE(b.exited(0)) << b.describe();
  json memory = json::parse(a.out, nullptr, false), one_pass = json::parse(b.out, nullptr, false);
  ASSERT_FALSE(memory.is_null() || one_pass.is_null()) << name;
  const double error = one_pass["percentile_relative_error"].get<double>();
  EXPECT_GT(error, 0) << name;
  EXPECT_LE(error, 0.01) << name;
  EXPECT_NE(one_pass["warnings"].dump().find("read in one pass"), std::string::npos) << name;
  one_pass.erase("percentile_relative_error");
  ASSERT_EQ(one_pass["types"].size(), memory["types"].size()) << name;
  for (size_t i = 0; i < memory["types"].size(); ++i) {
    json &x = memory["types"][i], &y = one_pass["types"][i];
    for (const char* figure : {"size", "wait", "idle"})
      for (const char* p : {"median", "p90"}) {
        const double exact = x[figure][p].get<double>(), sketched = y[figure][p].get<double>();
        EXPECT_LE(sketched, exact) << name << " " << x["site"] << " " << figure << " " << p;
        EXPECT_GE(sketched, exact * (1 - error))
            << name << " " << x["site"] << " " << figure << " " << p;
        y[figure][p] = x[figure][p];
      }
    EXPECT_LE(y["long_waits"].get<uint64_t>(), x["long_waits"].get<uint64_t>()) << name;
    const double threshold = x["long_wait_threshold"].get<double>();
    EXPECT_GE(y["long_wait_threshold"].get<double>(), threshold) << name;
    EXPECT_LE(y["long_wait_threshold"].get<double>(), threshold * (1 + error) + 1) << name;
    for (const char* set_apart : {"long_waits", "long_wait_threshold"}) y[set_apart] = x[set_apart];
  }
  // The findings: the same kinds for the same types, their words aside (they quote the
  // percentiles). A rare-long-waits may come or go with a long wait at its threshold, and the
  // findings that compare a type's median wait or idle time with its median size with them,
  // when the two medians are within the error of each other.
  std::set<std::string> close_medians;
  for (const json& t : memory["types"]) {
    const double size = t["size"]["median"].get<double>();
    for (const char* time : {"wait", "idle"}) {
      const double m = t[time]["median"].get<double>();
      if (std::fabs(m - size) <= error * std::max(m, size))
        close_medians.insert(t["site"].get<std::string>());
    }
  }
  auto kinds = [&](const json& j) {
    std::vector<std::string> k;
    for (const json& f : j["findings"]) {
      const std::string kind = f["kind"].get<std::string>(), site = f["site"].get<std::string>();
      const bool medians =
          kind == "idle-longer-than-running" || kind == "queued-longer-than-running";
      if (kind != "rare-long-waits" && !(medians && close_medians.count(site)))
        k.push_back(kind + " " + site);
    }
    return k;
  };
  EXPECT_EQ(kinds(one_pass), kinds(memory)) << name;
  for (json* j : {&memory, &one_pass}) {
    j->erase("warnings");
    j->erase("findings");
  }
  EXPECT_EQ(one_pass, memory) << name << " tasks";
}

// The cut-off advice read in passes (analysis/stream_cutoff.hpp) against the DAG's: each
// recursion's levels, verdict and depths for the recorded threads alike (the leaves' median from a
// sketch, at most 1/128 below), and its advice where the DAG's needs no size cut-off or grouped
// form (which passes do not evaluate); a recursion left out must be said to need the DAG.
void expect_same_cutoffs(json memory, json one_pass, const std::string& warnings,
                         const std::string& name) {
  auto medians_within = [](json& passes, const json& exact) {
    for (const char* key : {"leaf_median_work", "leaf_median_seconds"}) {
      if (!passes.contains(key) || !exact.contains(key) || !exact[key].is_number()) continue;
      const double x = exact[key].get<double>(), y = passes[key].get<double>();
      if (y <= x && x - y <= x / 128 + 1e-15) passes[key] = exact[key];
    }
  };
  size_t next = 0;
  for (json& m : memory) {
    if (next == one_pass.size() || one_pass[next]["sites"] != m["sites"]) {
      EXPECT_NE(warnings.find("cut-off advice needs its DAG"), std::string::npos)
          << name << ": " << m["sites"] << " left out unsaid";
      continue;
    }
    json& p = one_pass[next++];
    EXPECT_FALSE(p["coarser_forms_evaluated"].get<bool>()) << name;
    const bool same_sentence =
        m["size_cutoff"].is_null() && m["group_cutoff"].is_null() &&
        p["advice"].get<std::string>().find("not evaluated") == std::string::npos;
    for (json* j : {&m, &p}) {
      for (const char* set_apart : {"size_cutoff", "group_cutoff", "coarser_forms_evaluated"})
        j->erase(set_apart);
      if (!same_sentence) j->erase("advice");
    }
    for (const char* level : {"recommended", "recorded"}) medians_within(p[level], m[level]);
    for (size_t i = 0; i < p["levels"].size() && i < m["levels"].size(); ++i)
      medians_within(p["levels"][i], m["levels"][i]);
    if (p["for_recorded_threads"].is_object())
      medians_within(p["for_recorded_threads"]["fastest"], m["for_recorded_threads"]["fastest"]);
    EXPECT_EQ(p, m) << name << " cut-off of " << m["sites"];
  }
  EXPECT_EQ(next, one_pass.size()) << name;
  // Recursions that wait for their children, with no other construct inside: exact in passes.
  for (const char* shape : {"fib", "nqueens", "uts", "health", "knapsack"})
    if (name.find(shape) != std::string::npos && !memory.empty()) {
      EXPECT_FALSE(one_pass.empty()) << name << ": " << warnings;
    }
}

// `advise --stream` (one pass per step) against `advise` on the same recording, with --raw-span
// (parallelize mode) and without (speedup mode: the robust span's pass first): the same JSON,
// but for the warnings, the notes on regions entered again and again (they need the DAG), and
// the cut-off advice's forms that passes do not evaluate (expect_same_cutoffs). A target no
// program reaches, so that the steps go on until nothing is left, a candidate is too small or 3
// steps were taken.
void expect_same_advise(const std::string& trace, const std::string& name) {
  for (const char* mode : {"parallelize", "speedup"}) {
    const std::vector<std::string> argv = {TASKLENS_BIN,  "advise", "--format", "json",
                                           "--mode",      mode,     "--target", "1e9",
                                           "--max-steps", "3",      trace};
    std::vector<std::string> raw = argv, stream = argv;
    if (mode == std::string("parallelize")) {
      raw.insert(raw.begin() + 2, "--raw-span");
      stream.insert(stream.begin() + 2, "--raw-span");
    }
    stream.insert(stream.begin() + 2, "--stream");
    json memory = json_of_run(raw), one_pass = json_of_run(stream);
    ASSERT_FALSE(memory.is_null() || one_pass.is_null()) << name;
    const std::string warnings = one_pass["warnings"].dump();
    EXPECT_NE(warnings.find("read in one pass"), std::string::npos) << name;
    EXPECT_TRUE(one_pass["notes"].empty()) << name;
    expect_same_cutoffs(memory["cutoffs"], one_pass["cutoffs"], warnings, name);
    for (json* j : {&memory, &one_pass})
      for (const char* set_apart : {"warnings", "cutoffs", "notes"}) j->erase(set_apart);
    EXPECT_EQ(one_pass, memory) << name << " advise --mode " << mode;
  }
}

// `diff --stream` against `diff` on two recordings of one program, with --raw-span (three
// passes) and without (the robust span's passes too, each recording's units and other's costs
// with the same strands clipped): the same JSON, but for the warnings.
void expect_same_diff(const std::string& base, const std::string& other, const std::string& name) {
  for (const bool raw_span : {true, false}) {
    std::vector<std::string> memory_argv = {TASKLENS_BIN, "diff", "--format", "json", base, other};
    if (raw_span) memory_argv.insert(memory_argv.begin() + 2, "--raw-span");
    std::vector<std::string> stream_argv = memory_argv;
    stream_argv.insert(stream_argv.begin() + 2, "--stream");
    const RunResult a = run(memory_argv), b = run(stream_argv);
    const std::string mode = raw_span ? " (--raw-span)" : " (robust)";
    if (!a.exited(0)) {  // not comparable (no construct site in common): the same refusal
      EXPECT_EQ(b.exit_code, a.exit_code) << a.describe() << b.describe();
      EXPECT_EQ(b.err, a.err) << name << mode;
      return;
    }
    ASSERT_TRUE(b.exited(0)) << b.describe();
    json memory = json::parse(a.out, nullptr, false), one_pass = json::parse(b.out, nullptr, false);
    ASSERT_FALSE(memory.is_null() || one_pass.is_null()) << name << mode;
    EXPECT_NE(one_pass["other"]["warnings"].dump().find("read in passes"), std::string::npos)
        << name << mode;
    for (json* j : {&memory, &one_pass})
      for (const char* side : {"base", "other"}) (*j)[side].erase("warnings");
    EXPECT_EQ(one_pass, memory) << name << " diff" << mode;
  }
}

// `sched --stream` against `sched` on the same recording: the same JSON (the time series at 57
// points too), but for the warnings.
void expect_same_sched(const std::string& trace, const std::string& name) {
  const std::vector<std::string> argv = {TASKLENS_BIN, "sched", "--format", "json",
                                         "--points",   "57",    trace};
  std::vector<std::string> stream = argv;
  stream.insert(stream.begin() + 2, "--stream");
  json memory = json_of_run(argv), one_pass = json_of_run(stream);
  ASSERT_FALSE(memory.is_null() || one_pass.is_null()) << name;
  EXPECT_NE(one_pass["warnings"].dump().find("read in one pass"), std::string::npos) << name;
  for (json* j : {&memory, &one_pass}) j->erase("warnings");
  EXPECT_EQ(one_pass, memory) << name << " sched";
}

// The robust span's warning in a JSON output (the strands clipped, their work), or null.
json clipping_warning_of(const json& j) {
  for (const json& w : j.value("warnings", json::array()))
    if (w.get<std::string>().find("held far more work") != std::string::npos) return w;
  return json();
}

// `predict --stream` against `predict`, with --raw-span (one pass) and without (the robust
// span's passes first, then the simulating pass with the same strands clipped): without
// collapsing (the default budget is above these recordings' strands), the same JSON but for what
// was simulated and the notes.
void expect_same_predict(const std::string& trace, const std::string& name) {
  for (const bool raw_span : {true, false}) {
    std::vector<std::string> argv = {TASKLENS_BIN, "predict", "--format", "json", trace};
    if (raw_span) argv.insert(argv.begin() + 2, "--raw-span");
    json memory = json_of_run(argv);
    argv.insert(argv.begin() + 2, "--stream");
    json one_pass = json_of_run(argv);
    const std::string mode = raw_span ? " (--raw-span)" : " (robust)";
    ASSERT_FALSE(memory.is_null() || one_pass.is_null()) << name << mode;
    EXPECT_EQ(one_pass["simulated_graph"]["read"], "one pass") << name;
    EXPECT_EQ(one_pass["simulated_graph"]["grain"], 0) << name;
    EXPECT_EQ(one_pass["simulated_graph"]["strands"], memory["simulated_graph"]["strands"])
        << name << mode;
    EXPECT_NE(one_pass["notes"].dump().find(raw_span ? "read in one pass" : "read in passes"),
              std::string::npos)
        << name << mode;
    EXPECT_EQ(clipping_warning_of(one_pass), clipping_warning_of(memory)) << name << mode;
    for (json* j : {&memory, &one_pass})
      for (const char* k : {"simulated_graph", "notes", "warnings"}) j->erase(k);
    EXPECT_EQ(one_pass, memory) << name << " predict" << mode;
  }
}

// The page of `view` (-o -) and its structure section: the construct tree as its groups' root
// paths of (kind, site label), each with its figures, and per worker its slices with their
// site's label and group's path (the ids of one reading are not the other's).
struct Structure {
  json program, tree_meta, timeline_meta;
  json tasks;  // the task sizes section, its warnings left out
  std::map<std::string, json> groups;
  std::vector<std::string> slices;
  bool spans_complete = true;
};
Structure structure_of(const std::vector<std::string>& argv, const std::string& name) {
  Structure s;
  const RunResult r = run(argv);
  EXPECT_TRUE(r.exited(0)) << name << ": " << r.describe();
  const std::string open = "<script type=\"application/json\" id=\"tl-0-structure\">";
  const size_t at = r.out.find(open), end = r.out.find("</script>", at);
  if (at == std::string::npos || end == std::string::npos) {
    ADD_FAILURE() << name << ": no structure section";
    return s;
  }
  const json j = json::parse(r.out.substr(at + open.size(), end - at - open.size()));
  const std::string tasks_open = "<script type=\"application/json\" id=\"tl-0-tasks\">";
  if (const size_t t = r.out.find(tasks_open); t != std::string::npos) {
    const size_t t_end = r.out.find("</script>", t);
    s.tasks = json::parse(r.out.substr(t + tasks_open.size(), t_end - t - tasks_open.size()));
    s.tasks.erase("warnings");
  }
  auto site = [&j](const json& id) {
    return id.is_null() ? std::string("-")
                        : j["sites"][id.get<size_t>()]["site"].get<std::string>() + " " +
                              j["sites"][id.get<size_t>()]["kind"].get<std::string>();
  };
  std::vector<std::string> path_of;
  for (const json& n : j["tree"]["nodes"]) {
    const std::string up = n["parent"].is_null() ? "" : path_of[n["parent"].get<size_t>()];
    path_of.push_back(up + "/" + n["kind"].get<std::string>() + " " + site(n["site"]));
    json figures = n;
    for (const char* k : {"id", "parent", "site", "span", "span_sum"}) figures.erase(k);
    s.groups[path_of.back()] = figures;
  }
  s.spans_complete = j["tree"]["spans_complete"].get<bool>();
  s.tree_meta = j["tree"];
  for (const char* k : {"nodes", "spans_complete", "note"}) s.tree_meta.erase(k);
  s.program = j["program"];
  s.timeline_meta = j["timeline"];
  s.timeline_meta.erase("workers");
  for (const json& w : j["timeline"].value("workers", json::array()))
    for (const json& x : w["slices"])
      s.slices.push_back(fmt::format(
          "{} {} {} {} {} {} {} {}", w["thread"].get<uint64_t>(), x[0].get<uint64_t>(),
          x[1].get<uint64_t>(), x[2].get<uint64_t>(), site(x[3]), path_of.at(x[4].get<size_t>()),
          x[5].get<uint64_t>(), w["busy"].get<uint64_t>()));
  std::sort(s.slices.begin(), s.slices.end());
  return s;
}

// `view --stream` (the recording read in passes) against `view` on the same recording: the
// same structure (tree groups with their counts, work, strands, critical-path work and cuts; the
// timeline's slices), but for the groups' spans, which one pass leaves out. With --raw-span, also
// with small budgets, so that the tree is cut and the timeline merged into buckets; and with the
// robust span (its clipping decided in passes first, every pass through it).
void expect_same_view_structure(const std::string& trace, const std::string& name) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--raw-span"},
        {"--raw-span", "--tree-nodes", "40", "--slices", "64"},
        {}}) {
    std::vector<std::string> argv = {TASKLENS_BIN, "view", "-o", "-", trace};
    argv.insert(argv.end(), options.begin(), options.end());
    std::vector<std::string> stream = argv;
    stream.push_back("--stream");
    const Structure memory = structure_of(argv, name), passes = structure_of(stream, name);
    const std::string what = name + (options.size() > 1 ? " (small budgets)"
                                     : options.empty()  ? " (robust)"
                                                        : "");
    EXPECT_EQ(passes.program, memory.program) << what;
    EXPECT_EQ(passes.tree_meta, memory.tree_meta) << what;
    EXPECT_EQ(passes.groups, memory.groups) << what;
    EXPECT_FALSE(passes.spans_complete) << what;
    EXPECT_EQ(passes.timeline_meta, memory.timeline_meta) << what;
    EXPECT_EQ(passes.slices, memory.slices) << what;
    if (options.empty() && !memory.tasks.is_null() && !memory.tasks.contains("unavailable")) {
      // The task sizes as measured, as `tasks` gives them, though the page's other sections
      // are robust (its clipped strands' works put back for this one).
      const RunResult t = run({TASKLENS_BIN, "tasks", "--format", "json", trace});
      ASSERT_TRUE(t.exited(0)) << t.describe();
      json measured = json::parse(t.out);
      measured.erase("warnings");
      EXPECT_EQ(memory.tasks, measured) << what;
    }
  }
}

// `export --stream` (the timeline in one pass) against the export from the DAG: the same events
// in the same order, each slice's strand id aside (the order met, `strand_ids` "met"), and the
// same facts; so with --window on the run's middle third.
void expect_same_timeline(const std::string& trace, const std::string& name) {
  const json whole = json_of_run({TASKLENS_BIN, "export", trace});
  ASSERT_FALSE(whole.is_null()) << name;
  double end_us = 0;
  for (const json& e : whole["traceEvents"])
    if (e["ph"] == "X") end_us = std::max(end_us, e["ts"].get<double>() + e["dur"].get<double>());
  const std::string third =
      fmt::format("{:.3f}us:{:.3f}us", end_us / 3, 2 * end_us / 3);  // (origin: the start)
  for (const std::vector<std::string>& window :
       {std::vector<std::string>{}, std::vector<std::string>{"--window", third}}) {
    std::vector<std::string> argv = {TASKLENS_BIN, "export", trace};
    argv.insert(argv.end(), window.begin(), window.end());
    std::vector<std::string> stream = argv;
    stream.push_back("--stream");
    json memory = window.empty() ? whole : json_of_run(argv), one_pass = json_of_run(stream);
    const std::string what = name + (window.empty() ? "" : " " + third);
    ASSERT_FALSE(memory.is_null() || one_pass.is_null()) << what;
    EXPECT_EQ(memory["otherData"]["strand_ids"], "serial") << what;
    EXPECT_EQ(one_pass["otherData"]["strand_ids"], "met") << what;
    for (json* j : {&memory, &one_pass}) {
      (*j)["otherData"].erase("strand_ids");
      for (json& e : (*j)["traceEvents"])
        if (e.contains("args")) e["args"].erase("strand");
    }
    EXPECT_EQ(one_pass["otherData"], memory["otherData"]) << what;
    EXPECT_EQ(one_pass["traceEvents"].size(), memory["traceEvents"].size()) << what;
    EXPECT_TRUE(one_pass["traceEvents"] == memory["traceEvents"]) << what;
  }
}

// `report --stream` (the robust span in passes: analysis/stream_robust.hpp) against `report` on
// the same recording: the same figures robust and as measured, the same rows and the same
// clipped strands (named by their order in the pass, not the DAG's strand id). Its clipping
// decided by itself (no kept one): when strands are clipped, the pass with them clipped plays the
// first pass's calls back (load/sink_spool.hpp), and gives the same figures.
void expect_same_robust_report(const std::string& trace, const std::string& name) {
  const json memory = json_of_run({TASKLENS_BIN, "report", "--format", "json", trace});
  EnvOverrides deciding = default_env();
  deciding["TASKLENS_CACHE"] = "off";
  deciding["TASKLENS_TIMINGS"] = "1";
  const RunResult reading =
      run({TASKLENS_BIN, "report", "--stream", "--format", "json", trace}, deciding);
  ASSERT_TRUE(reading.exited(0)) << name << ": " << reading.describe();
  const json passes = json::parse(reading.out, nullptr, false);
  ASSERT_FALSE(memory.is_null() || passes.is_null()) << name;
  if (memory["clipped_count"].get<uint64_t>() > 0) {
    EXPECT_NE(reading.err.find("robust (replayed)"), std::string::npos) << name << reading.err;
  }
  EXPECT_EQ(passes["span_mode"], memory["span_mode"]) << name;
  EXPECT_EQ(passes["program"], memory["program"]) << name;
  EXPECT_EQ(rows_of(passes), rows_of(memory)) << name;
  EXPECT_EQ(passes["clipped_count"], memory["clipped_count"]) << name;
  EXPECT_EQ(passes["clipped_work"], memory["clipped_work"]) << name;
  EXPECT_EQ(clipping_warning_of(passes), clipping_warning_of(memory)) << name;
  json a = passes["clipped_strands"], b = memory["clipped_strands"];
  for (json* list : {&a, &b})
    for (json& c : *list) c.erase("strand");
  EXPECT_EQ(a, b) << name;
  const std::string said = passes["warnings"].dump();
  EXPECT_NE(said.find(memory["span_mode"] == "robust" ? "read in passes" : "read in one pass"),
            std::string::npos)
      << name << ": " << said;
}

// Every reader that reads in one pass or in passes gives what it gives from the DAG in memory on
// `trace`: report (work, span, strands, tasks, rows with their critical path shares: the span
// as measured with --raw-span, the robust one without), whatif, tasks, advise, sched and predict.
void expect_one_pass_reads_it_as_the_dag(const std::string& trace, const std::string& name) {
  const json memory =
      json_of_run({TASKLENS_BIN, "report", "--raw-span", "--format", "json", trace});
  const json one_pass =
      json_of_run({TASKLENS_BIN, "report", "--stream", "--raw-span", "--format", "json", trace});
  ASSERT_FALSE(memory.is_null() || one_pass.is_null()) << name;
  EXPECT_EQ(one_pass["program"]["work"], memory["program"]["work"]) << name;
  EXPECT_EQ(one_pass["program"]["span"], memory["program"]["span"]) << name;
  EXPECT_EQ(one_pass["strands"], memory["strands"]) << name;
  EXPECT_EQ(one_pass["tasks"], memory["tasks"]) << name;
  EXPECT_EQ(rows_of(one_pass), rows_of(memory)) << name;
  EXPECT_EQ(one_pass["span_mode"], "raw") << name;
  EXPECT_TRUE(one_pass["diagnosis"].empty()) << name;
  const std::string said = one_pass["warnings"].dump();
  EXPECT_NE(said.find("read in one pass"), std::string::npos) << name << ": " << said;
  expect_same_robust_report(trace, name);
  expect_same_whatif(trace, memory, name);
  expect_same_tasks(trace, name);
  expect_same_advise(trace, name);
  expect_same_sched(trace, name);
  expect_same_predict(trace, name);
  expect_same_timeline(trace, name);
}

// One program (an example's build, its arguments, OMP_NUM_THREADS when not the default): each
// is a test of its own, so that ctest times and reports it alone.
struct Case {
  const char* example;
  std::vector<std::string> args;
  const char* threads = nullptr;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.example;
  for (const std::string& a : c.args) *os << ' ' << a;
  if (c.threads) *os << " (OMP_NUM_THREADS=" << c.threads << ")";
}
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.example;
  for (const std::string& a : info.param.args) name += "_" + a;
  if (info.param.threads) name += std::string("_t") + info.param.threads;
  for (char& ch : name)  // a test's name is letters, digits and underscores
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

// The same recording read both ways: the same work, span, strands and tasks, and the same rows,
// critical path shares included (the span as measured: one pass has no robust span). The
// recordings are the task shapes a one-pass reading takes: recursions (fib, n-queens, merge
// sort), an unbalanced tree (UTS), a list-based simulation (health), a branch-and-bound search
// (knapsack), tiled linear algebra (sparse LU joined by taskwaits and by `depend`, Cholesky),
// worksharing loops (static, static with a chunk size: partly seen, dynamic, guided, ordered; a
// stencil, Jacobi's tasks in loops) and sections, taskgroups, grandchildren a taskwait does not
// join, untied tasks, nested regions, barriers, sleeping tasks, taskloops (with and without
// dispatch events), user regions; both compilers.
std::vector<Case> openmp_cases() {
  return {
      {"suite_fib", {"18"}},
      {"suite_nqueens", {"7"}},
      {"suite_uts", {}},
      {"suite_health", {}},
      {"mergesort", {}},
      {"suite_knapsack", {}},
      {"sem_depend", {}},
      {"suite_sparselu", {}},
      {"suite_sparselu", {"16", "8", "2"}},  // its `depend` form (KaStORS sparselu_task_dep)
      {"suite_cholesky", {}},
      {"primes", {}},
      {"stencil", {}},
      {"suite_jacobi", {}},
      {"sem_single_masked_sections", {}},
      {"loop_forms", {"dynamic", "20000", "4"}},
      {"loop_forms", {"static_chunk", "20000", "4"}},
      {"loop_forms", {"ordered"}},
      {"sem_taskgroup", {}},
      {"sem_taskwait_grandchild", {}},
      {"sem_untied", {}},
      {"sem_nested", {}},
      {"sem_barrier", {}},
      {"sleep_in_task", {}},
      {"treesum", {}},
      // Taskloops: dispatch events give each task's iterations (clang's splits its range in
      // tasks of its own); a one-thread team has none, and shares the trip count.
      {"sem_taskloop", {}},
      {"loop_forms", {"taskloop_grainsize", "20000", "4"}},
      {"loop_forms", {"taskloop_num_tasks", "20000", "4"}, "1"},
      // User regions (TASKLENS_REGION_BEGIN/END, and the C++ scope guards): nested, inside
      // tasks, named at run time.
      {"regions", {}},
      {"regions_cpp", {}},
      // Threads the program starts itself (pthread_create), each running a parallel region,
      // joined by pthread_join.
      {"sem_user_threads", {}},
  };
}

class OnePassOfOpenMp : public Stream, public ::testing::WithParamInterface<Case> {};

TEST_P(OnePassOfOpenMp, GivesTheProfileOfTheDagInMemory) {
  const Case& c = GetParam();
  std::string clang_trace;  // then diffed against gcc's
  for (const char* compiler : {"clang", "gcc"}) {
    std::string name = std::string(c.example) + "_" + compiler;
    for (const std::string& a : c.args) name += "_" + a;
    EnvOverrides env = default_env();
    if (c.threads) {
      env["OMP_NUM_THREADS"] = c.threads;
      name += std::string("_t") + c.threads;
    }
    const std::string trace = path(name + ".tlens");
    ASSERT_TRUE(record(example(c.example, compiler), c.args, trace, env).exited(0)) << name;
    expect_one_pass_reads_it_as_the_dag(trace, name);
    if (clang_trace.empty()) {
      expect_same_view_structure(trace, name);  // (one compiler: the suite's time)
      clang_trace = trace;
    } else {
      expect_same_diff(clang_trace, trace, name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stream, OnePassOfOpenMp, ::testing::ValuesIn(openmp_cases()), case_name);

// oneTBB programs read both ways, as the OpenMP ones above: task_group recursions (fib, merge
// sort), algorithms (parallel_for, parallel_reduce in both forms, parallel_invoke), tasks run
// into a group from inside it, nested groups, a waiter running other tasks, isolate and arenas,
// a flow graph of unlimited nodes; each unmodified and built with the wrappers (their sites and
// chunks), with g++ and clang++.
std::vector<Case> tbb_cases() {
  return {
      {"tbb_fib", {"14", "1"}},
      {"tbb_mergesort", {}},
      {"tbb_parallel_for", {}},
      {"tbb_parallel_reduce", {"both"}},
      {"tbb_primes", {"tasks"}},
      {"tbb_semantics", {"group-from-inside"}},
      {"tbb_semantics", {"nested-groups"}},
      {"tbb_semantics", {"waiter-runs-others"}},
      {"tbb_semantics", {"isolate"}},
      {"tbb_semantics", {"arena"}},
      {"tbb_flow", {"unlimited"}},
  };
}

class OnePassOfOneTbb : public Stream, public ::testing::WithParamInterface<Case> {};

TEST_P(OnePassOfOneTbb, ReadsItAsTheDagInMemory) {
  const Case& c = GetParam();
  std::string plain_trace;  // then diffed against the wrapped builds'
  for (const char* way : {"", "_wrapped", "_wrapped_clang"}) {
    std::string name = std::string(c.example) + way;
    for (const std::string& a : c.args) name += "_" + a;
    const std::string trace = path(name + ".tlens");
    ASSERT_TRUE(
        record(std::string(TASKLENS_EXAMPLES_DIR) + "/" + c.example + way, c.args, trace).exited(0))
        << name;
    expect_one_pass_reads_it_as_the_dag(trace, name);
    if (plain_trace.empty()) {
      expect_same_view_structure(trace, name);
      plain_trace = trace;
    } else {
      expect_same_diff(plain_trace, trace, name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stream, OnePassOfOneTbb, ::testing::ValuesIn(tbb_cases()), case_name);

}  // namespace
}  // namespace tasklens::e2e
