// tasklens view: the condensed structure JSON (construct tree aggregated per level, per-worker
// timeline) against brute force on hand-made and random models, the page's escaping of program
// names, and the differential section of a compare page (tasklens diff's own JSON, embedded).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/diff.hpp"
#include "analysis/profile.hpp"
#include "cli/view_cmd.hpp"
#include "model_fixtures.hpp"
#include "report/diff_report.hpp"
#include "report/html_view.hpp"

namespace tasklens {
namespace {

using fixtures::ModelBuilder;
using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;
using nlohmann::json;

std::vector<report::SiteLabel> labels_for(const Model& m) {
  std::vector<report::SiteLabel> labels(m.sites.size());
  for (size_t s = 0; s < m.sites.size(); ++s) {
    labels[s].site = s == 0 ? "<program>" : "f.c:" + std::to_string(10 + s);
    labels[s].function = "fn" + std::to_string(s);
  }
  return labels;
}

json structure(const Model& m, report::StructureOptions opt = {}) {
  const analysis::Profile p = analysis::compute_profile(m);
  return json::parse(report::structure_json(m, p, labels_for(m), 1e9, opt).dump());
}

// ---- Brute force: a node's aggregate is identified by the (site, kind) path from the root.
using PathKey = std::vector<std::pair<uint32_t, int>>;
PathKey path_of(const Model& m, uint32_t v) {
  PathKey key;
  for (uint32_t u = v; u != kNone; u = m.nodes[u].parent)
    key.push_back({m.nodes[u].site, static_cast<int>(m.nodes[u].kind)});
  std::reverse(key.begin(), key.end());
  return key;
}
bool inside(const Model& m, uint32_t node, uint32_t ancestor) {
  for (uint32_t u = node; u != kNone; u = m.nodes[u].parent)
    if (u == ancestor) return true;
  return false;
}
// Longest path through the strands inside node v's subtree (edges between two of them only),
// by memoized recursion over predecessors: independent of the range arithmetic under test.
uint64_t brute_span(const Model& m, uint32_t v) {
  std::map<uint32_t, uint64_t> memo;
  auto dist = [&](auto&& self, uint32_t s) -> uint64_t {
    auto it = memo.find(s);
    if (it != memo.end()) return it->second;
    uint64_t best = 0;
    for (uint32_t p : m.preds_of(s))
      if (inside(m, m.strands[p].node, v)) best = std::max(best, self(self, p));
    return memo[s] = best + m.strands[s].work;
  };
  uint64_t best = 0;
  for (uint32_t s = 0; s < m.strands.size(); ++s)
    if (inside(m, m.strands[s].node, v)) best = std::max(best, dist(dist, s));
  return best;
}

struct BruteGroup {
  uint64_t count = 0, work = 0, own = 0, strands = 0, critical = 0, span = 0, span_sum = 0;
};
std::map<PathKey, BruteGroup> brute_groups(const Model& m) {
  const analysis::Profile p = analysis::compute_profile(m);
  std::vector<uint8_t> critical(m.strands.size(), 0);
  for (uint32_t s : p.critical_path) critical[s] = 1;
  std::map<PathKey, BruteGroup> groups;
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {
    BruteGroup& g = groups[path_of(m, v)];
    g.count += 1;
    for (uint32_t s = 0; s < m.strands.size(); ++s) {
      if (!inside(m, m.strands[s].node, v)) continue;
      g.work += m.strands[s].work;
      g.strands += 1;
      if (critical[s]) g.critical += m.strands[s].work;
      if (m.strands[s].node == v) g.own += m.strands[s].work;
    }
    const uint64_t span = brute_span(m, v);
    g.span = std::max(g.span, span);
    g.span_sum += span;
  }
  return groups;
}

// The aggregate's path key, from the JSON (its chain of parents).
PathKey json_path(const json& nodes, size_t id, const Model& m) {
  (void)m;
  PathKey key;
  for (json n = nodes[id];; n = nodes[n["parent"].get<size_t>()]) {
    const uint32_t site = n["site"].is_null() ? kNone : n["site"].get<uint32_t>();
    int kind = -1;
    for (int k = 0; k <= static_cast<int>(NodeKind::Masked); ++k)
      if (model::to_string(static_cast<NodeKind>(k)) == n["kind"].get<std::string>()) kind = k;
    key.push_back({site, kind});
    if (n["parent"].is_null()) break;
  }
  std::reverse(key.begin(), key.end());
  return key;
}

TEST(ViewStructure, ForkJoinIsOneGroupOfTasks) {
  const Model m = fixtures::fork_join_model({5, 9, 3, 7});
  const json s = structure(m);
  const json& nodes = s["tree"]["nodes"];
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0]["kind"], "program");
  EXPECT_EQ(nodes[0]["work"], 24u);
  EXPECT_EQ(nodes[0]["span"], 9u);  // fork -> the 9 task -> join
  EXPECT_EQ(nodes[1]["parent"], 0u);
  EXPECT_EQ(nodes[1]["kind"], "task");
  EXPECT_EQ(nodes[1]["count"], 4u);
  EXPECT_EQ(nodes[1]["work"], 24u);
  EXPECT_EQ(nodes[1]["own_work"], 24u);
  EXPECT_EQ(nodes[1]["span"], 9u);       // the longest task
  EXPECT_EQ(nodes[1]["span_sum"], 24u);  // each task is a single strand
  EXPECT_EQ(nodes[1]["critical"], 9u);
  EXPECT_EQ(nodes[0]["own_work"], 0u);  // fork and join have no work
  EXPECT_FALSE(nodes[1]["cut"].get<bool>());
  EXPECT_EQ(s["sites"][1]["site"], "f.c:11");
  EXPECT_EQ(s["sites"][1]["kind"], "task");
  EXPECT_EQ(s["timeline"]["timed_strands"], 0u);
  EXPECT_TRUE(s["timeline"].contains("unavailable"));
}

TEST(ViewStructure, FibGroupsEachRecursionLevel) {
  // fib(n): one site, so the calls at recursion depth d form one group at tree depth d + 1:
  // fib(n-d) ... the number of calls at depth d is the number of paths of length d.
  const uint32_t n = 9;
  const Model m = fixtures::fib_model(n);
  const json s = structure(m);
  const json& nodes = s["tree"]["nodes"];
  ASSERT_EQ(nodes.size(), n + 1u);  // root, then depths 0 .. n-1 of the recursion
  std::vector<uint64_t> calls(n, 0);
  // calls at depth d: count(k, d) with fib(k) calling fib(k-1), fib(k-2) for k >= 2.
  auto count = [&](auto&& self, uint32_t k, uint32_t d) -> void {
    calls[d] += 1;
    if (k >= 2) {
      self(self, k - 1, d + 1);
      self(self, k - 2, d + 1);
    }
  };
  count(count, n, 0);
  for (uint32_t d = 0; d < n; ++d) {
    EXPECT_EQ(nodes[d + 1]["count"], calls[d]) << "depth " << d;
    EXPECT_EQ(nodes[d + 1]["parent"], d);
  }
  // Work W(n) = 2 + W(n-1) + W(n-2), W(0) = W(1) = 1; span S(n) = 2 + S(n-1).
  std::vector<uint64_t> w(n + 1), sp(n + 1);
  w[0] = w[1] = sp[0] = sp[1] = 1;
  for (uint32_t k = 2; k <= n; ++k) {
    w[k] = 2 + w[k - 1] + w[k - 2];
    sp[k] = 2 + sp[k - 1];
  }
  EXPECT_EQ(nodes[1]["work"], w[n]);
  EXPECT_EQ(nodes[1]["span"], sp[n]);
  EXPECT_EQ(nodes[0]["work"], w[n] + 2);
  EXPECT_EQ(nodes[2]["span"], sp[n - 1]);  // the longest call at depth 1 is fib(n-1)
  EXPECT_EQ(nodes[0]["critical"], nodes[0]["span"]);
}

TEST(ViewStructure, RandomModelsMatchBruteForce) {
  std::mt19937_64 rng(6);
  for (int round = 0; round < 60; ++round) {
    fixtures::RandomModelOptions o;
    o.max_strands = 60;
    const Model m = fixtures::random_model(rng, o);
    ASSERT_EQ(fixtures::check_model(m), "");
    const std::map<PathKey, BruteGroup> want = brute_groups(m);
    const json s = structure(m);
    const json& nodes = s["tree"]["nodes"];
    ASSERT_EQ(nodes.size(), want.size()) << "round " << round;
    EXPECT_EQ(s["tree"]["cut"], 0u);
    for (size_t id = 0; id < nodes.size(); ++id) {
      const PathKey key = json_path(nodes, id, m);
      auto it = want.find(key);
      ASSERT_NE(it, want.end()) << "round " << round << " aggregate " << id;
      const BruteGroup& g = it->second;
      const json& n = nodes[id];
      EXPECT_EQ(n["count"], g.count) << "round " << round << " aggregate " << id;
      EXPECT_EQ(n["work"], g.work) << "round " << round << " aggregate " << id;
      EXPECT_EQ(n["own_work"], g.own) << "round " << round << " aggregate " << id;
      EXPECT_EQ(n["strands"], g.strands) << "round " << round << " aggregate " << id;
      EXPECT_EQ(n["critical"], g.critical) << "round " << round << " aggregate " << id;
      EXPECT_EQ(n["span"], g.span) << "round " << round << " aggregate " << id;
      EXPECT_EQ(n["span_sum"], g.span_sum) << "round " << round << " aggregate " << id;
      if (id > 0) {
        EXPECT_LT(n["parent"].get<size_t>(), id);  // breadth first: parents come first
        EXPECT_EQ(n["depth"], nodes[n["parent"].get<size_t>()]["depth"].get<int>() + 1);
      }
    }
  }
}

TEST(ViewStructure, BudgetCutsWholeLevelsAndKeepsTotals) {
  const Model m = fixtures::fib_model(12);
  report::StructureOptions opt;
  // Distinct sites per call so that levels fan out: rebuild fib with two sites alternating is
  // not needed: a budget below the number of levels cuts the chain.
  opt.max_nodes = 5;
  const json s = structure(m, opt);
  const json& nodes = s["tree"]["nodes"];
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(s["tree"]["cut"], 1u);
  EXPECT_TRUE(nodes[4]["cut"].get<bool>());
  for (size_t id = 0; id < 4; ++id) EXPECT_FALSE(nodes[id]["cut"].get<bool>());
  const json full = structure(m);
  for (size_t id = 0; id < 5; ++id) {
    EXPECT_EQ(nodes[id]["work"], full["tree"]["nodes"][id]["work"]);
    EXPECT_EQ(nodes[id]["span"], full["tree"]["nodes"][id]["span"]);
  }
  // A span budget too small for everything: spans become null, never wrong.
  opt.max_nodes = 100;
  opt.max_span_visits = 10;
  const json partial = structure(m, opt);
  EXPECT_FALSE(partial["tree"]["spans_complete"].get<bool>());
  for (const json& n : partial["tree"]["nodes"]) {
    if (n["span"].is_null()) continue;
    EXPECT_EQ(n["span"], full["tree"]["nodes"][n["id"].get<size_t>()]["span"]);
  }
}

// Two workers; worker 0 runs strands of site a then b, worker 1 of site b.
Model timed_model(size_t per_worker, uint64_t length) {
  ModelBuilder b;
  const uint32_t a = b.add_site(SiteKind::Task), c = b.add_site(SiteKind::Task);
  b.strand(1);
  for (size_t i = 0; i < per_worker; ++i) {
    b.open(NodeKind::Task, i < per_worker * 7 / 10 ? a : c);
    b.strand(length, {0}, 0);
    b.close();
    b.open(NodeKind::Task, c);
    b.strand(length, {0}, 1);
    b.close();
  }
  Model m = b.finish();
  m.strands[0].thread = 0;
  m.strands[0].start = 1000;
  m.strands[0].end = 1001;
  size_t k0 = 0, k1 = 0;
  for (uint32_t s = 1; s < m.strands.size(); ++s) {
    size_t& k = m.strands[s].thread == 0 ? k0 : k1;
    m.strands[s].start = 1001 + k * (length + 1);  // one tick of idle between strands
    m.strands[s].end = m.strands[s].start + length;
    ++k;
  }
  return m;
}

TEST(ViewStructure, TimelineExactWhenSmall) {
  const Model m = timed_model(10, 50);
  const json s = structure(m);
  const json& tl = s["timeline"];
  EXPECT_FALSE(tl["merged"].get<bool>());
  EXPECT_EQ(tl["timed_strands"], 21u);
  EXPECT_EQ(tl["first"], 1000u);
  ASSERT_EQ(tl["workers"].size(), 2u);
  EXPECT_EQ(tl["workers"][0]["slices"].size(), 11u);
  EXPECT_EQ(tl["workers"][1]["slices"].size(), 10u);
  const json& slice = tl["workers"][1]["slices"][0];  // [begin, end, busy, site, agg, strands]
  EXPECT_EQ(slice[0], 1u);
  EXPECT_EQ(slice[1], 51u);
  EXPECT_EQ(slice[2], 50u);
  EXPECT_EQ(slice[3], 2u);
  EXPECT_EQ(slice[5], 1u);
  // Its aggregate is the group of site-2 tasks under the root.
  const json& agg = s["tree"]["nodes"][slice[4].get<size_t>()];
  EXPECT_EQ(agg["site"], 2u);
  EXPECT_EQ(agg["kind"], "task");
}

TEST(ViewStructure, TimelineMergesIntoBucketsKeepingBusyTimeAndSites) {
  const size_t per_worker = 1000;
  const Model m = timed_model(per_worker, 97);
  report::StructureOptions opt;
  opt.max_slices = 200;  // 100 buckets per worker
  const json s = structure(m, opt);
  const json& tl = s["timeline"];
  ASSERT_TRUE(tl["merged"].get<bool>());
  uint64_t slices = 0;
  for (size_t w = 0; w < 2; ++w) {
    const json& worker = tl["workers"][w];
    uint64_t busy = 0, strands = 0;
    for (const json& x : worker["slices"]) {
      busy += x[2].get<uint64_t>();
      strands += x[5].get<uint64_t>();
      EXPECT_LE(x[0].get<uint64_t>(), x[1].get<uint64_t>());
      EXPECT_LE(x[2].get<uint64_t>(), x[1].get<uint64_t>() - x[0].get<uint64_t>());
      ++slices;
    }
    // Busy time is conserved: the strands' durations, exactly.
    EXPECT_EQ(busy, worker["busy"].get<uint64_t>());
    EXPECT_EQ(busy, (w == 0 ? 1 : 0) + per_worker * 97);
    EXPECT_GE(strands, worker["strands"].get<uint64_t>());  // a strand may span two buckets
  }
  EXPECT_LE(slices, 200u);
  // Worker 0 runs site 1 for its first 70% of tasks, then site 2: the first bucket is site 1,
  // the last is site 2; worker 1 only site 2.
  const json& w0 = tl["workers"][0]["slices"];
  EXPECT_EQ(w0[0][3], 1u);
  EXPECT_EQ(w0[w0.size() - 1][3], 2u);
  for (const json& x : tl["workers"][1]["slices"]) EXPECT_EQ(x[3], 2u);
}

// ---- Escaping --------------------------------------------------------------------------

const std::string kXss = "<script>alert(1)</script>";

TEST(ViewHtml, ScriptSafeJsonHasNoAngleBracketAndParsesBack) {
  const std::string text = json{{"site", kXss}, {"c", "<!-- </SCRIPT >"}}.dump();
  const std::string safe = report::script_safe_json(text);
  EXPECT_EQ(safe.find('<'), std::string::npos);
  const json back = json::parse(safe);
  EXPECT_EQ(back["site"], kXss);
  EXPECT_EQ(back["c"], "<!-- </SCRIPT >");
}

TEST(ViewHtml, HtmlEscape) {
  EXPECT_EQ(report::html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(report::html_escape("plain"), "plain");
}

// Counts non-overlapping occurrences of `what` in `text`, ignoring case.
size_t count_ci(std::string text, std::string what) {
  auto lower = [](std::string& s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  lower(text);
  lower(what);
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(ViewHtml, ProgramNamesCannotCloseOrOpenElements) {
  // A site, function and region named like a script, through the structure JSON and a profile.
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  b.strand(1);
  b.open(NodeKind::Task, site);
  b.strand(5, {0});
  b.close();
  Model m = b.finish();
  std::vector<report::SiteLabel> labels = labels_for(m);
  labels[site].site = kXss + ":3";
  labels[site].function = kXss;
  const analysis::Profile p = analysis::compute_profile(m);
  report::ViewRun run;
  run.label = kXss + ".tlens";
  run.sections.push_back({"structure", report::structure_json(m, p, labels, 0, {}).dump()});
  run.sections.push_back({"profile", json{{"region", kXss}}.dump()});
  run.sections.push_back({"tasks", report::unavailable_json("no tasks </script><script>x()")});
  const std::string page = report::render_html({run}, "tasklens: " + kXss);

  EXPECT_EQ(page.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(page.find("</script><script>x()"), std::string::npos);
  EXPECT_NE(page.find("<title>tasklens: &lt;script&gt;alert(1)&lt;/script&gt;</title>"),
            std::string::npos);
  // Every <script ...> opened by the page is closed by its own </script>: 1 index + 3 sections
  // + the page's code.
  EXPECT_EQ(count_ci(page, "<script"), 5u);
  EXPECT_EQ(count_ci(page, "</script"), 5u);
  // The blocks still parse back to the names as they were.
  const std::string open = "<script type=\"application/json\" id=\"tl-0-structure\">";
  const size_t at = page.find(open);
  ASSERT_NE(at, std::string::npos);
  const size_t from = at + open.size();
  const json back = json::parse(page.substr(from, page.find("</script>", from) - from));
  EXPECT_EQ(back["sites"][site]["function"], kXss);
  EXPECT_EQ(back["sites"][site]["site"], kXss + ":3");
  // The page's own code and style are inlined; nothing is loaded from elsewhere.
  EXPECT_NE(page.find("function renderTree"), std::string::npos);
  EXPECT_NE(page.find(".tree-row"), std::string::npos);
  EXPECT_EQ(count_ci(page, "src=\""), 0u);
  EXPECT_EQ(count_ci(page, "<link"), 0u);
  EXPECT_EQ(count_ci(page, "@import"), 0u);
  EXPECT_EQ(count_ci(page, "url("), 0u);
  EXPECT_EQ(count_ci(page, "fetch("), 0u);
  // The only address is SVG's namespace name (an identifier, never fetched).
  EXPECT_EQ(count_ci(page, "http://") + count_ci(page, "https://"),
            count_ci(page, "http://www.w3.org/2000/svg"));
}

// ---- The differential section of a compare page ---------------------------------------------

// fork -> a task at site 1 (work `a`) -> join: one recording of a one-task program.
Model one_task(uint64_t a, uint32_t threads) {
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t fork = b.strand(0);
  b.open(NodeKind::Task, site);
  const uint32_t t = b.strand(a, {fork});
  b.close();
  b.strand(0, {fork, t});
  Model m = b.finish();
  m.thread_count = threads;
  m.ticks_per_second = 1e9;
  m.fragments.resize(1);
  return m;
}

// The block of `section` of run `run` in the page, parsed.
json embedded(const std::string& page, size_t run, const std::string& section) {
  const std::string open =
      "<script type=\"application/json\" id=\"tl-" + std::to_string(run) + "-" + section + "\">";
  const size_t at = page.find(open);
  if (at == std::string::npos) return json();
  const size_t from = at + open.size();
  return json::parse(page.substr(from, page.find("</script>", from) - from));
}

TEST(ViewHtml, CompareEmbedsTheDiffJsonAsDiffRendersIt) {
  // The task's site and function named like a script: the base did 1000, the other 3000.
  Model base = one_task(1000, 1), other = one_task(3000, 2);
  std::vector<report::SiteLabel> labels = labels_for(base);
  labels[1].site = kXss + ":3";
  labels[1].function = kXss;
  const report::FragmentLabels fragments{{0}, {kXss + ":3-4"}, {kXss}, {"/src/x.c"}};
  analysis::DiffInput bi, oi;
  for (auto* in : {&bi, &oi}) {
    for (const report::SiteLabel& l : labels) in->site_names.push_back(l.site);
    in->fragment_group = fragments.group_of;
    in->fragment_names = fragments.label;
  }
  bi.model = &base;
  oi.model = &other;
  const analysis::Diff d = analysis::compute_diff(bi, oi);
  report::DiffRun b, o;
  for (auto [r, m] : {std::pair{&b, &base}, std::pair{&o, &other}}) {
    r->model = m;
    r->labels = &labels;
    r->fragments = &fragments;
    r->info.program = "/bin/" + kXss;
    r->tsc_hz = 1e9;
  }
  const std::string diff_text =
      report::render_diff(b, o, d, report::Format::Json, std::numeric_limits<size_t>::max());

  report::ViewRun first, second;
  first.label = "one.tlens";
  second.label = "two.tlens";
  first.sections.push_back({"profile", json{{"sites", json::array()}}.dump()});
  first.sections.push_back({"diff", diff_text});
  second.sections.push_back({"profile", json{{"sites", json::array()}}.dump()});
  const std::string page = report::render_html({first, second}, "one vs two");

  // The section is the diff's JSON as `tasklens diff --format json` writes it, names intact.
  const json back = embedded(page, 0, "diff");
  ASSERT_TRUE(back.is_object());
  EXPECT_EQ(back, json::parse(diff_text));
  ASSERT_EQ(back["sites"].size(), 1u);
  EXPECT_EQ(back["sites"][0]["unit"], kXss + ":3");
  EXPECT_EQ(back["sites"][0]["function"], kXss);
  EXPECT_DOUBLE_EQ(back["sites"][0]["metrics"]["tsc"]["ratio"].get<double>(), 3.0);
  // One task on the critical path grew by 2000: scaled back, the span shrinks by exactly that.
  EXPECT_EQ(back["sites"][0]["metrics"]["tsc"]["cost"], 2000);
  EXPECT_EQ(back["base"]["units_per_second"]["tsc"], 1e9);
  // Listed once, with the first run; the second run has no diff section.
  EXPECT_TRUE(embedded(page, 1, "diff").is_null());
  const size_t index_at = page.find("id=\"tl-index\">");
  ASSERT_NE(index_at, std::string::npos);
  const size_t index_from = page.find('>', index_at) + 1;
  const json index =
      json::parse(page.substr(index_from, page.find("</script>", index_from) - index_from));
  EXPECT_EQ(index[0]["sections"], json::array({"profile", "diff"}));
  EXPECT_EQ(index[1]["sections"], json::array({"profile"}));
  // Escaping holds: no name closes the element or opens one.
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(page.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(count_ci(page, "<script"), 5u);  // the index, 3 sections, the code
  EXPECT_EQ(count_ci(page, "</script"), 5u);
  // The page's code draws it (the differential view, only on a page of two runs).
  EXPECT_NE(page.find("function renderDiff"), std::string::npos);
  EXPECT_NE(page.find("compareOnly"), std::string::npos);
}

TEST(ViewHtml, ARefusedComparisonIsItsReasonAsText) {
  const std::string reason =
      "diff: a.tlens and b.tlens have no construct site in common (a.tlens: </script><script>x():"
      "1; b.tlens: none): not the same program?";
  report::ViewRun first, second;
  first.label = "a.tlens";
  second.label = "b.tlens";
  first.sections.push_back({"diff", report::unavailable_json(reason)});
  const std::string page = report::render_html({first, second}, "a vs b");
  EXPECT_EQ(page.find("</script><script>x()"), std::string::npos);
  EXPECT_EQ(embedded(page, 0, "diff"), json({{"unavailable", reason}}));
  EXPECT_EQ(count_ci(page, "</script"), 3u);  // the index, the section, the code
}

// `view --whatif UNIT`: the flag takes any unit and tells them apart by their form.
TEST(ViewOptions, WhatIfUnitsAreToldApartByTheirForm) {
  using cli::classify_whatif_unit;
  using K = cli::WhatIfUnitKind;
  const std::vector<std::tuple<std::string, K, std::string>> cases = {
      {"fib.c:12", K::Site, "fib.c:12"},
      {"fib.c:12=4", K::Site, "fib.c:12=4"},
      {"src/a.cpp:3-17", K::Fragment, "src/a.cpp:3-17"},
      {"src/a.cpp:3-17=inf", K::Fragment, "src/a.cpp:3-17=inf"},
      {"solve", K::Region, "solve"},
      {"solve=2", K::Region, "solve=2"},
      {"phase:one", K::Region, "phase:one"},  // not digits after the colon
      {"a:1-b", K::Region, "a:1-b"},
      {":12", K::Region, ":12"},
      {"region:fib.c:12", K::Region, "fib.c:12"},  // the prefix wins over the form
      {"site:fib.c:12=8", K::Site, "fib.c:12=8"},
      {"fragment:fib.c:3-5", K::Fragment, "fib.c:3-5"},
  };
  for (const auto& [text, kind, name] : cases) {
    const auto [k, n] = classify_whatif_unit(text);
    EXPECT_EQ(k, kind) << text;
    EXPECT_EQ(n, name) << text;
  }
}

}  // namespace
}  // namespace tasklens
