// The dumps of `tasklens export` (the DAG as JSON, a CSV row per strand) read back, the writer
// that streams them, and the escaping of names from the program (a hostile model's sites,
// fragments and trace path) in JSON, CSV and the Perfetto events.
#include "report/export_dump.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "export_fixtures.hpp"
#include "model_fixtures.hpp"
#include "report/export_perfetto.hpp"
#include "report/export_timeline.hpp"

namespace tasklens {
namespace {

using fixtures::export_perfetto;
using fixtures::ModelBuilder;
using fixtures::plain_labels;
using fixtures::set_time;
using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;
using nlohmann::json;

const std::string kScript = "<script>alert(1)</script>";
const std::string kNasty = std::string("we\"ird\\na,me\n\r\t\x01\x1f end");

TEST(ExportEscaping, JsonStringsReadBackAndAreSafeInHtml) {
  for (const std::string& s : {kScript, kNasty, std::string("caf\xc3\xa9 \xe2\x80\xa8 x")}) {
    const std::string quoted = report::json_string(s);
    EXPECT_EQ(json::parse(quoted).get<std::string>(), s);
    EXPECT_EQ(quoted.find('<'), std::string::npos) << quoted;
    EXPECT_EQ(quoted.find('>'), std::string::npos) << quoted;
    for (char c : quoted) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << quoted;
    EXPECT_EQ(quoted.find("\xe2\x80\xa8"), std::string::npos) << "U+2028 breaks JavaScript";
  }
  EXPECT_EQ(report::json_string(kScript), "\"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e\"");
  // Bytes that are not UTF-8 become U+FFFD (a JSON parser refuses them).
  const std::string bad = std::string("a\xff") + "b\xc3" + "\xe0\x80\x80" + "\xed\xa0\x80";
  const std::string quoted = report::json_string(bad);
  EXPECT_EQ(json::parse(quoted).get<std::string>(),
            "a\xef\xbf\xbd"
            "b\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
            "\xef\xbf\xbd\xef\xbf\xbd");
}

// RFC 4180 reader for the tests.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false, in_quotes = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field += c;
      }
    } else if (c == '"' && field.empty() && !quoted) {
      in_quotes = quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field);
      field.clear();
      quoted = false;
    } else if (c == '\n') {
      rows.back().push_back(field);
      field.clear();
      quoted = false;
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

TEST(ExportEscaping, CsvFieldsReadBack) {
  for (const std::string& s : {kScript, kNasty, std::string("plain"), std::string("")}) {
    const auto rows = parse_csv(report::csv_field_of(s) + ",x\n");
    ASSERT_EQ(rows.size(), 1u) << s;
    EXPECT_EQ(rows[0], (std::vector<std::string>{s, "x"}));
  }
  EXPECT_EQ(report::csv_field_of("a\rb"), "\"a\rb\"");
}

// A model whose site and function names come from a hostile program, in every format.
struct HostileModel {
  Model m;
  std::vector<report::SiteLabel> labels;
  report::FragmentLabels fragments;
};
HostileModel hostile_model() {
  HostileModel h;
  ModelBuilder b;
  const uint32_t task = b.add_site(SiteKind::Task);
  const uint32_t a = b.strand(10);
  b.open(NodeKind::Task, task);
  const uint32_t t = b.strand(20, {a});
  b.close();
  const uint32_t c = b.strand(30, {a, t});
  h.m = b.finish();
  set_time(h.m, a, 0, 100, 110);
  set_time(h.m, t, 1, 110, 130);
  set_time(h.m, c, 0, 130, 160);
  h.m.strands[t].fragment = 1;
  h.m.fragments = {{0, 0}, {0x10, 0x20}};
  h.m.thread_count = 2;
  h.labels = plain_labels(h.m);
  h.labels[task].site = kNasty + ".c:3";
  h.labels[task].file = kNasty + ".c";
  h.labels[task].function = kScript;
  h.fragments.group_of = {0, 1};
  h.fragments.label = {"<unknown>", kNasty + ".c:3-4"};
  h.fragments.function = {"", kScript};
  return h;
}

report::ExportRun hostile_run(const HostileModel& h) {
  report::ExportRun run;
  run.model = &h.m;
  run.labels = &h.labels;
  run.fragments = &h.fragments;
  run.info.program = "/bin/" + kScript;
  run.info.trace_path = kNasty;
  run.tsc_hz = 1e9;
  return run;
}

TEST(ExportEscaping, PerfettoNamesFromTheProgram) {
  const HostileModel h = hostile_model();
  std::string raw;
  const json j = export_perfetto(h.m, h.labels, nullptr, &raw);
  EXPECT_EQ(raw.find("<script>"), std::string::npos);
  bool found = false;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] != "X" || e["args"]["strand"] != 1) continue;
    found = true;
    EXPECT_EQ(e["name"], kNasty + ".c:3 task");
    EXPECT_EQ(e["args"]["function"], kScript);
  }
  EXPECT_TRUE(found);
  // With fragment labels: the function is the fragment's.
  report::ExportRun run = hostile_run(h);
  report::ExportWriter w;
  report::write_perfetto(run, w);
  const std::string text = w.take();
  EXPECT_EQ(text.find("<script>"), std::string::npos);
  const json k = json::parse(text);
  EXPECT_EQ(k["otherData"]["trace"], kNasty);
  for (const json& e : k["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      EXPECT_EQ(e["args"]["name"], "tasklens: script>") << "the base name of /bin/" << kScript;
    }
    if (e["ph"] == "X" && e["args"]["strand"] == 1) {
      EXPECT_EQ(e["args"]["fragment"], kNasty + ".c:3-4");
      EXPECT_EQ(e["args"]["function"], kScript);
    }
  }
}

TEST(ExportDump, JsonReadsBackAsTheModel) {
  const HostileModel h = hostile_model();
  report::ExportRun run = hostile_run(h);
  run.thread_types = {1, 2};
  run.os_tids = {100, 101};
  report::ExportWriter w;
  report::write_dag_json(run, w);
  const std::string text = w.take();
  EXPECT_EQ(text.find("<script>"), std::string::npos);
  const json j = json::parse(text);
  EXPECT_EQ(j["format"], "tasklens-dag");
  EXPECT_EQ(j["metric"], "tsc");
  EXPECT_EQ(j["trace"], kNasty);
  ASSERT_EQ(j["threads"].size(), 2u);
  EXPECT_EQ(j["threads"][0]["type"], "initial");
  EXPECT_EQ(j["threads"][1]["os_tid"], 101);
  ASSERT_EQ(j["sites"].size(), h.m.sites.size());
  EXPECT_EQ(j["sites"][1]["label"], kNasty + ".c:3");
  EXPECT_EQ(j["sites"][1]["function"], kScript);
  EXPECT_EQ(j["sites"][1]["kind"], "task");
  ASSERT_EQ(j["fragments"].size(), 2u);
  EXPECT_EQ(j["fragments"][1]["label"], kNasty + ".c:3-4");
  EXPECT_EQ(j["fragments"][1]["begin"], "0x10");
  ASSERT_EQ(j["nodes"].size(), h.m.nodes.size());
  for (uint32_t v = 0; v < h.m.nodes.size(); ++v) {
    const json& n = j["nodes"][v];
    const model::Node& x = h.m.nodes[v];
    EXPECT_EQ(n["id"], v);
    EXPECT_EQ(n["kind"], model::to_string(x.kind));
    if (x.parent == kNone)
      EXPECT_TRUE(n["parent"].is_null());
    else
      EXPECT_EQ(n["parent"], x.parent);
    EXPECT_EQ(n["strand_begin"], x.strand_begin);
    EXPECT_EQ(n["strand_end"], x.strand_end);
    EXPECT_EQ(n["subtree_size"], x.subtree_size);
  }
  ASSERT_EQ(j["strands"].size(), h.m.strands.size());
  for (uint32_t s = 0; s < h.m.strands.size(); ++s) {
    const json& x = j["strands"][s];
    const model::Strand& st = h.m.strands[s];
    EXPECT_EQ(x["work"], st.work);
    EXPECT_EQ(x["start"], st.start);
    EXPECT_EQ(x["end"], st.end);
    EXPECT_EQ(x["thread"], st.thread);
    EXPECT_EQ(x["node"], st.node);
    EXPECT_EQ(x["site"], st.site);
    EXPECT_EQ(x["fragment"], st.fragment);
    std::vector<uint32_t> preds(h.m.preds_of(s).begin(), h.m.preds_of(s).end());
    EXPECT_EQ(x["preds"].get<std::vector<uint32_t>>(), preds);
  }
}

TEST(ExportDump, CsvOneRowPerStrand) {
  HostileModel h = hostile_model();
  h.m.strands[2].thread = kNone;  // a synthetic strand: empty thread
  h.m.extra_metrics = {"instructions"};
  h.m.extra_work = {1, 2, 3};
  report::ExportRun run = hostile_run(h);
  report::ExportWriter w;
  report::write_strands_csv(run, w);
  const auto rows = parse_csv(w.take());
  ASSERT_EQ(rows.size(), 1 + h.m.strands.size());
  const std::vector<std::string> header = {"strand",     "work",           "start",
                                           "end",        "thread",         "node",
                                           "node_kind",  "instance",       "site",
                                           "site_label", "site_kind",      "function",
                                           "fragment",   "fragment_label", "work_instructions",
                                           "preds"};
  EXPECT_EQ(rows[0], header);
  for (size_t r = 1; r < rows.size(); ++r) ASSERT_EQ(rows[r].size(), header.size()) << r;
  EXPECT_EQ(rows[2][0], "1");
  EXPECT_EQ(rows[2][1], "20");
  EXPECT_EQ(rows[2][6], "task");
  EXPECT_EQ(rows[2][9], kNasty + ".c:3");
  EXPECT_EQ(rows[2][10], "task");
  EXPECT_EQ(rows[2][11], kScript);
  EXPECT_EQ(rows[2][13], kNasty + ".c:3-4");
  EXPECT_EQ(rows[2][14], "2");
  EXPECT_EQ(rows[3][4], "") << "no thread";
  EXPECT_EQ(rows[3][15], "0 1");
  EXPECT_EQ(rows[1][15], "");
  EXPECT_EQ(rows[1][7], "") << "the root has no instance";
}

TEST(ExportWriter, StreamsToAFileAndReportsFailures) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  report::ExportWriter w(f);
  const std::string line(1000, 'x');
  for (int i = 0; i < 10000; ++i) {  // 10 MB: several flushes
    w.put(line);
    w.maybe_flush();
  }
  EXPECT_LT(w.buf().size(), size_t{5} << 20) << "the buffer was handed to the file";
  EXPECT_TRUE(w.finish());
  EXPECT_EQ(w.bytes(), 10000u * 1000u);
  EXPECT_EQ(std::ftell(f), 10000L * 1000L);
  std::fclose(f);
  std::FILE* full = std::fopen("/dev/full", "w");
  if (full) {
    report::ExportWriter v(full);
    v.put(line);
    EXPECT_FALSE(v.finish());
    std::fclose(full);
  }
}

}  // namespace
}  // namespace tasklens
