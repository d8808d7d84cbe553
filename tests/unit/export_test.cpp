// `tasklens export` on hand-made models: the flow classification and routing of
// report/export_flows.hpp (on a model with every edge kind, and against a brute force on random
// models), the Perfetto events (slices, tracks, flows bound to the right slices as a trace viewer
// binds them, time order, microsecond timestamps), the JSON and CSV dumps read back, and the
// escaping of names from the program in JSON and CSV.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "model_fixtures.hpp"
#include "report/export_dump.hpp"
#include "report/export_flows.hpp"
#include "report/export_perfetto.hpp"
#include "report/export_timeline.hpp"

namespace tasklens {
namespace {

using fixtures::ModelBuilder;
using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;
using nlohmann::json;
using report::FlowKind;

using fixtures::set_time;

// Every edge kind: a parallel region of two implicit tasks (threads 0 and 1), explicit tasks
// spawned, a dependence between two of them, a task that moves to thread 1 after its wait,
// a barrier (a synthetic join strand) releasing a second phase, and the join after the region.
struct KindsModel {
  Model m;
  uint32_t s0, s1, s2, s3, s4, s5, s6, s7, j, s9, s10, s11;
};
KindsModel kinds_model() {
  KindsModel k;
  ModelBuilder b;
  const uint32_t par = b.add_site(SiteKind::Parallel), task = b.add_site(SiteKind::Task);
  k.s0 = b.strand(100);
  b.open(NodeKind::Parallel, par);
  b.open(NodeKind::Phase);
  b.open(NodeKind::ImplicitTask);
  k.s1 = b.strand(100, {k.s0});
  b.open(NodeKind::Task, task);
  k.s2 = b.strand(80, {k.s1});
  b.close();
  k.s3 = b.strand(100, {k.s1});
  b.open(NodeKind::Task, task);
  k.s4 = b.strand(50, {k.s3});
  b.close();
  b.open(NodeKind::Task, task);
  k.s5 = b.strand(50, {k.s3, k.s4});
  b.close();
  k.s6 = b.strand(20, {k.s3, k.s2, k.s4, k.s5});
  b.close();
  b.open(NodeKind::ImplicitTask);
  k.s7 = b.strand(60, {k.s0});
  b.close();
  k.j = b.strand(0, {k.s6, k.s7});  // the barrier's join strand: no thread, no time
  b.close();
  b.open(NodeKind::Phase);
  b.open(NodeKind::ImplicitTask);
  k.s9 = b.strand(10, {k.j});
  b.close();
  b.open(NodeKind::ImplicitTask);
  k.s10 = b.strand(20, {k.j});
  b.close();
  b.close();
  b.close();
  k.s11 = b.strand(100, {k.s9, k.s10});
  k.m = b.finish();
  Model& m = k.m;
  set_time(m, k.s0, 0, 1100, 1200);
  set_time(m, k.s1, 0, 1200, 1300);
  set_time(m, k.s3, 0, 1300, 1400);
  set_time(m, k.s4, 0, 1400, 1450);
  set_time(m, k.s7, 1, 1200, 1260);
  set_time(m, k.s2, 1, 1300, 1380);
  set_time(m, k.s5, 1, 1450, 1500);
  set_time(m, k.s6, 1, 1500, 1520);
  m.strands[k.j].thread = kNone;
  set_time(m, k.s9, 0, 1600, 1610);
  set_time(m, k.s10, 1, 1600, 1620);
  set_time(m, k.s11, 0, 1700, 1800);
  m.thread_count = 2;
  m.metric = "tsc";
  m.task_count = 3;
  return k;
}

using FlowSet = std::set<std::tuple<uint32_t, uint32_t, FlowKind>>;

FlowSet flow_set(const report::Flows& f) {
  FlowSet out;
  for (const report::Flow& x : f.flows) out.emplace(x.from, x.to, x.kind);
  return out;
}

TEST(ExportFlows, EveryKindOnAHandMadeModel) {
  const KindsModel k = kinds_model();
  ASSERT_EQ(fixtures::check_model(k.m), "");
  const report::Flows f = report::compute_flows(k.m);
  const FlowSet want = {
      {k.s0, k.s1, FlowKind::Spawn},      {k.s1, k.s2, FlowKind::Spawn},
      {k.s3, k.s4, FlowKind::Spawn},      {k.s3, k.s5, FlowKind::Spawn},
      {k.s4, k.s5, FlowKind::Dependence}, {k.s3, k.s6, FlowKind::Continuation},
      {k.s2, k.s6, FlowKind::Join},       {k.s4, k.s6, FlowKind::Join},
      {k.s5, k.s6, FlowKind::Join},       {k.s0, k.s7, FlowKind::Spawn},
      {k.s6, k.s9, FlowKind::Barrier},    {k.s7, k.s9, FlowKind::Barrier},
      {k.s6, k.s10, FlowKind::Barrier},   {k.s7, k.s10, FlowKind::Barrier},
      {k.s9, k.s11, FlowKind::Join},      {k.s10, k.s11, FlowKind::Join},
  };
  EXPECT_EQ(flow_set(f), want);
  EXPECT_EQ(f.flows.size(), want.size()) << "a pair appears once";
  EXPECT_EQ(f.continuations_hidden, 1u) << "s1 -> s3 stays on thread 0";
  EXPECT_EQ(f.routed, 4u);
  for (uint32_t i = 0; i < f.flows.size(); ++i) {
    const report::Flow& x = f.flows[i];
    EXPECT_EQ(x.via, x.kind == FlowKind::Barrier ? k.j : kNone);
    EXPECT_GE(i, f.begin[x.to]) << "grouped by destination";
    EXPECT_LT(i, f.begin[x.to + 1]) << "grouped by destination";
  }
}

TEST(ExportFlows, JoinThroughASyntheticStrandIntoTheWaitingTask) {
  // An implicit task's last strand -> the barrier's join strand -> the encountering task's next
  // strand: a join (the second leg is a continuation of the waiting task).
  ModelBuilder b;
  const uint32_t par = b.add_site(SiteKind::Parallel);
  const uint32_t a = b.strand(1);
  b.open(NodeKind::Parallel, par);
  b.open(NodeKind::Phase);
  b.open(NodeKind::ImplicitTask);
  const uint32_t t0 = b.strand(1, {a});
  b.close();
  b.open(NodeKind::ImplicitTask);
  const uint32_t t1 = b.strand(1, {a});
  b.close();
  const uint32_t j = b.strand(0, {t0, t1});
  b.close();
  b.close();
  const uint32_t after = b.strand(1, {j});
  Model m = b.finish();
  set_time(m, a, 0, 10, 20);
  set_time(m, t0, 0, 20, 30);
  set_time(m, t1, 1, 20, 40);
  m.strands[j].thread = kNone;
  set_time(m, after, 0, 40, 50);
  const report::Flows f = report::compute_flows(m);
  const FlowSet want = {{a, t0, FlowKind::Spawn},
                        {a, t1, FlowKind::Spawn},
                        {t0, after, FlowKind::Join},
                        {t1, after, FlowKind::Join}};
  EXPECT_EQ(flow_set(f), want);
}

// Brute force: owners by walking parent pointers, sources of untimed strands by a search back.
TEST(ExportFlows, MatchesABruteForceOnRandomModels) {
  std::mt19937_64 rng(7);
  const NodeKind kinds[] = {NodeKind::Task,      NodeKind::ImplicitTask, NodeKind::Chunk,
                            NodeKind::Taskgroup, NodeKind::Single,       NodeKind::Loop};
  for (int round = 0; round < 200; ++round) {
    Model m = fixtures::random_model(rng);
    for (size_t v = 1; v < m.nodes.size(); ++v) m.nodes[v].kind = kinds[rng() % 6];
    for (uint32_t s = 0; s < m.strands.size(); ++s) {
      if (rng() % 5 == 0)
        m.strands[s].thread = kNone;
      else
        set_time(m, s, static_cast<uint32_t>(rng() % 3), 100 + 10 * s, 105 + 10 * s);
    }
    auto owner = [&](uint32_t s) {
      uint32_t v = m.strands[s].node;
      while (v != 0 && m.nodes[v].kind != NodeKind::Task &&
             m.nodes[v].kind != NodeKind::ImplicitTask && m.nodes[v].kind != NodeKind::Chunk)
        v = m.nodes[v].parent;
      return v;
    };
    auto is_ancestor = [&](uint32_t a, uint32_t v) {  // proper
      for (v = m.nodes[v].parent; v != kNone; v = m.nodes[v].parent)
        if (v == a) return true;
      return false;
    };
    auto kind = [&](uint32_t p, uint32_t s) {
      const uint32_t op = owner(p), os = owner(s);
      if (op == os) return FlowKind::Continuation;
      if (is_ancestor(op, os)) return FlowKind::Spawn;
      if (is_ancestor(os, op)) return FlowKind::Join;
      return FlowKind::Dependence;
    };
    auto timed = [&](uint32_t s) { return m.strands[s].thread != kNone; };
    FlowSet want;
    uint64_t hidden = 0;
    for (uint32_t s = 0; s < m.strands.size(); ++s) {
      if (!timed(s)) continue;
      std::map<uint32_t, FlowKind> from;  // an edge's flow first, then the lowest routed kind
      std::map<uint32_t, FlowKind> routed;
      for (uint32_t p : m.preds_of(s)) {
        if (timed(p)) {
          const FlowKind k = kind(p, s);
          if (k == FlowKind::Continuation && m.strands[p].thread == m.strands[s].thread)
            ++hidden;
          else
            from.emplace(p, k);
          continue;
        }
        // Every timed source behind the untimed p, by a search.
        std::set<uint32_t> seen, sources;
        std::vector<uint32_t> stack = {p};
        while (!stack.empty()) {
          const uint32_t u = stack.back();
          stack.pop_back();
          for (uint32_t q : m.preds_of(u)) {
            if (timed(q))
              sources.insert(q);
            else if (seen.insert(q).second)
              stack.push_back(q);
          }
        }
        const FlowKind leg2 = kind(p, s);
        for (uint32_t q : sources) {
          const FlowKind leg1 = kind(q, p);
          FlowKind k = leg2 == FlowKind::Continuation                      ? leg1
                       : leg1 == FlowKind::Join && leg2 == FlowKind::Spawn ? FlowKind::Barrier
                                                                           : leg2;
          if (k == FlowKind::Continuation && m.strands[q].thread == m.strands[s].thread) continue;
          auto [it, added] = routed.emplace(q, k);
          if (!added) it->second = std::min(it->second, k);
        }
      }
      for (auto [q, k] : routed) from.emplace(q, k);
      for (auto [q, k] : from) want.emplace(q, s, k);
    }
    const report::Flows f = report::compute_flows(m);
    ASSERT_EQ(flow_set(f), want) << "round " << round;
    ASSERT_EQ(f.flows.size(), want.size()) << "round " << round;
    ASSERT_EQ(f.continuations_hidden, hidden) << "round " << round;
  }
}

// ---------------------------------------------------------------------------------------------
// Perfetto

std::vector<report::SiteLabel> plain_labels(const Model& m) {
  std::vector<report::SiteLabel> labels(m.sites.size());
  for (size_t i = 0; i < m.sites.size(); ++i) {
    labels[i].site = i == 0 ? "<program>" : "app.c:" + std::to_string(10 * i);
    labels[i].file = i == 0 ? "" : "/src/app.c";
    labels[i].line = i == 0 ? 0 : static_cast<unsigned>(10 * i);
    labels[i].function = i == 0 ? "(outside any construct)" : "work";
  }
  return labels;
}

json export_perfetto(const Model& m, const std::vector<report::SiteLabel>& labels,
                     report::PerfettoStats* stats = nullptr, std::string* raw = nullptr,
                     std::vector<std::vector<std::pair<uint64_t, uint64_t>>> preempt = {}) {
  report::ExportRun run;
  run.model = &m;
  run.labels = &labels;
  run.info.pid = 4242;
  run.info.program = "/bin/app";
  run.tsc_hz = 1e9;  // 1 tick = 1 ns
  run.thread_types = {1, 2, 2};
  run.preemptions = std::move(preempt);
  report::ExportWriter w;
  report::PerfettoStats st = report::write_perfetto(run, w);
  if (stats) *stats = st;
  std::string text = w.take();
  if (raw) *raw = text;
  return json::parse(text);
}

// Binds flow events as a trace viewer does: "s" (and "f" with "bp": "e") to the innermost slice
// of its thread that encloses its ts among the slices written before it; a slice is open on
// [ts, ts + dur), so an event at a slice's end binds to the next one.
struct Bound {
  std::map<uint64_t, uint64_t> s_strand, f_strand;  // flow id -> strand of the bound slice
  std::map<uint64_t, std::string> s_name, f_name;
};
Bound bind_flows(const json& events) {
  Bound b;
  std::map<uint64_t, std::vector<json>> open;  // tid -> slices so far
  for (const json& e : events) {
    const std::string ph = e["ph"];
    if (ph == "X") {
      open[e["tid"].get<uint64_t>()].push_back(e);
      continue;
    }
    if (ph != "s" && ph != "f") continue;
    const double ts = e["ts"];
    const auto& list = open[e["tid"].get<uint64_t>()];
    uint64_t strand = kNone;
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      const double a = (*it)["ts"], d = (*it)["dur"];
      // [ts, ts + dur): a slice has ended at its end (a zero-length one holds its instant).
      if (a <= ts + 1e-9 && (ts < a + d - 1e-9 || (d == 0 && ts <= a + 1e-9))) {
        strand = (*it)["args"]["strand"];
        break;
      }
    }
    const uint64_t id = e["id"];
    (ph == "s" ? b.s_strand : b.f_strand)[id] = strand;
    (ph == "s" ? b.s_name : b.f_name)[id] = e["name"];
  }
  return b;
}

// Flows as (source, destination, kind name): from the events bound to their slices, and from
// compute_flows.
using NamedFlows = std::set<std::tuple<uint64_t, uint64_t, std::string>>;
NamedFlows bound_flow_set(const Bound& b) {
  NamedFlows out;
  for (const auto& [id, from] : b.s_strand) {
    EXPECT_EQ(b.s_name.at(id), b.f_name.at(id)) << "flow " << id;
    out.emplace(from, b.f_strand.at(id), b.s_name.at(id));
  }
  return out;
}
NamedFlows flow_names(const report::Flows& flows) {
  NamedFlows out;
  for (const report::Flow& f : flows.flows) out.emplace(f.from, f.to, report::to_string(f.kind));
  return out;
}

TEST(ExportPerfetto, SlicesTracksAndFlowsBoundToTheRightSlices) {
  const KindsModel k = kinds_model();
  const auto labels = plain_labels(k.m);
  report::PerfettoStats st;
  const json j = export_perfetto(k.m, labels, &st);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["displayTimeUnit"], "ns");
  const json& ev = j["traceEvents"];
  ASSERT_TRUE(ev.is_array());

  std::map<uint64_t, json> slice_of;  // strand -> X event
  std::map<uint64_t, std::string> thread_names;
  std::string process;
  double last_ts = -1e300;
  for (const json& e : ev) {
    EXPECT_EQ(e["pid"], 4242);
    if (e["ph"] == "M") {
      EXPECT_FALSE(e.contains("ts"));
      if (e["name"] == "thread_name") thread_names[e["tid"].get<uint64_t>()] = e["args"]["name"];
      if (e["name"] == "process_name") process = e["args"]["name"];
      continue;
    }
    const double ts = e["ts"];
    EXPECT_GE(ts, last_ts) << "events sorted by ts: " << e.dump();
    last_ts = ts;
    if (e["ph"] == "X") slice_of[e["args"]["strand"].get<uint64_t>()] = e;
  }
  EXPECT_EQ(process, "tasklens: app");
  EXPECT_EQ(thread_names, (std::map<uint64_t, std::string>{{0, "main thread"}, {1, "worker 1"}}));
  EXPECT_EQ(st.tracks, 2u);
  // Every strand but the synthetic join is a slice, on its thread, at its time (origin: the
  // first start, 1100 ns).
  EXPECT_EQ(slice_of.size(), k.m.strands.size() - 1);
  EXPECT_EQ(st.slices, slice_of.size());
  EXPECT_FALSE(slice_of.count(k.j));
  for (const auto& [s, e] : slice_of) {
    const model::Strand& x = k.m.strands[s];
    EXPECT_EQ(e["tid"], x.thread);
    EXPECT_DOUBLE_EQ(e["ts"].get<double>(), (x.start - 1100) / 1000.0) << s;
    EXPECT_DOUBLE_EQ(e["dur"].get<double>(), (x.end - x.start) / 1000.0) << s;
    EXPECT_EQ(e["args"]["work_tsc"], x.work);
  }
  EXPECT_EQ(slice_of[k.s2]["name"], "app.c:20 task");
  EXPECT_EQ(slice_of[k.s2]["cat"], "task");
  EXPECT_EQ(slice_of[k.s2]["args"]["node"], "task");
  EXPECT_EQ(slice_of[k.s2]["args"]["instance"], k.m.nodes[k.m.strands[k.s2].node].instance);
  EXPECT_EQ(slice_of[k.s2]["args"]["function"], "work");
  EXPECT_EQ(slice_of[k.s0]["name"], "<program>");
  EXPECT_FALSE(slice_of[k.s0]["args"].contains("instance")) << "the root has no instance";
  EXPECT_EQ(slice_of[k.s1]["name"], "app.c:10 parallel");
  EXPECT_EQ(slice_of[k.s1]["args"]["node"], "implicit-task");

  // Each flow: an "s" on its source slice and an "f" on its destination, with one id.
  const report::Flows flows = report::compute_flows(k.m);
  const Bound b = bind_flows(ev);
  ASSERT_EQ(b.s_strand.size(), flows.flows.size());
  ASSERT_EQ(b.f_strand.size(), flows.flows.size());
  EXPECT_EQ(st.flows, flows.flows.size());
  EXPECT_EQ(bound_flow_set(b), flow_names(flows));
  uint64_t next_id = 0;  // ids are the ranks of the "s" events
  for (const json& e : ev) {
    if (e["ph"] == "s") EXPECT_EQ(e["id"], next_id++);
    if (e["ph"] == "f") EXPECT_EQ(e["bp"], "e");
  }
  const json& other = j["otherData"];
  EXPECT_EQ(other["flows"]["spawn"], 5);
  EXPECT_EQ(other["flows"]["join"], 5);
  EXPECT_EQ(other["flows"]["dependence"], 1);
  EXPECT_EQ(other["flows"]["barrier"], 4);
  EXPECT_EQ(other["flows"]["continuation"], 1);
  EXPECT_EQ(other["untimed_strands"], 1);
  EXPECT_EQ(other["slices"], 11);
}

// A random model on 3 threads: each thread's strands back to back in id order, often of zero
// length and often starting where the previous one ended (the ties a binder must get right),
// one strand in 7 untimed.
Model random_timed_model(std::mt19937_64& rng) {
  Model m = fixtures::random_model(rng);
  uint64_t clock[3] = {1000, 1000, 1000};
  std::vector<uint64_t> done(m.strands.size(), 1000);  // end, or an untimed strand's readiness
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    uint64_t ready = 1000;
    for (uint32_t p : m.preds_of(s)) ready = std::max(ready, done[p]);
    if (rng() % 7 == 0) {
      m.strands[s].thread = kNone;
      done[s] = ready;
      continue;
    }
    const uint32_t t = static_cast<uint32_t>(rng() % 3);
    const uint64_t start = std::max(clock[t], ready) + (rng() % 2 ? 0 : rng() % 5);
    const uint64_t len = rng() % 3 == 0 ? 0 : 1 + rng() % 4;
    set_time(m, s, t, start, start + len);
    clock[t] = done[s] = start + len;
  }
  m.thread_count = 3;
  return m;
}

TEST(ExportPerfetto, BindsFlowsOnRandomModelsWithTiesAndZeroLengthSlices) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 60; ++round) {
    Model m = random_timed_model(rng);
    const auto labels = plain_labels(m);
    const json j = export_perfetto(m, labels);
    const report::Flows flows = report::compute_flows(m);
    const Bound b = bind_flows(j["traceEvents"]);
    ASSERT_EQ(b.s_strand.size(), flows.flows.size()) << "round " << round;
    double last = -1e300;
    for (const json& e : j["traceEvents"]) {
      if (!e.contains("ts")) continue;
      EXPECT_GE(e["ts"].get<double>(), last) << "round " << round << ": " << e.dump();
      last = e["ts"];
    }
    EXPECT_EQ(bound_flow_set(b), flow_names(flows)) << "round " << round;
  }
}

// --window: the slices that start before its end and end at or after its start (whole), the
// flows between two of them, the hidden continuations between two of them, the window in
// otherData; the events' times stay the run's.
TEST(ExportPerfetto, AWindowHoldsTheSlicesAcrossItAndTheFlowsBetweenThem) {
  std::mt19937_64 rng(23);
  for (int round = 0; round < 60; ++round) {
    Model m = random_timed_model(rng);
    const auto labels = plain_labels(m);
    report::ExportClock clock;  // (1 tick = 1 ns; origin 0: the tick is the ns)
    report::TimeWindow window;
    window.given = true;
    window.from = 1000 + static_cast<int64_t>(rng() % 40);
    window.to = window.from + 1 + static_cast<int64_t>(rng() % 40);
    if (round % 5 == 0) window.to = std::numeric_limits<int64_t>::max();  // "FROM:"
    const report::Timeline t = report::timeline_of(m, clock, window);
    std::set<uint32_t> want;
    for (uint32_t s = 0; s < m.strands.size(); ++s) {
      const model::Strand& x = m.strands[s];
      if (model::is_timed(x) && int64_t(x.start) < window.to && int64_t(x.end) >= window.from)
        want.insert(s);
    }
    std::set<uint32_t> got;
    for (size_t i = 0; i < t.size(); ++i) got.insert(static_cast<uint32_t>(t.slice(i).id));
    ASSERT_EQ(got, want) << "round " << round;
    NamedFlows want_flows, got_flows;
    for (const report::Flow& f : report::compute_flows(m).flows)
      if (want.count(f.from) && want.count(f.to))
        want_flows.emplace(f.from, f.to, report::to_string(f.kind));
    for (const report::TimelineFlow& f : t.flows)
      got_flows.emplace(t.slice(f.from).id, t.slice(f.to).id, report::to_string(f.kind));
    EXPECT_EQ(got_flows, want_flows) << "round " << round;
    const std::vector<uint32_t> owner = report::owner_nodes(m);
    uint64_t hidden = 0;
    for (uint32_t s : want)
      for (uint32_t p : m.preds_of(s))
        hidden += want.count(p) && m.strands[p].thread == m.strands[s].thread &&
                  report::classify_edge(m, owner, p, s) == FlowKind::Continuation;
    EXPECT_EQ(t.continuations_hidden, hidden) << "round " << round;

    report::ExportRun run;
    run.model = &m;
    run.labels = &labels;
    run.origin = 1;  // ts = (tick - 1) / 1000 us
    run.tsc_hz = 1e9;
    report::ExportWriter w;
    const report::PerfettoStats st = report::write_perfetto(run, t, w);
    const json j = json::parse(w.take());
    EXPECT_EQ(st.slices, want.size());
    const json& other = j["otherData"];
    EXPECT_EQ(other["slices"], want.size());
    EXPECT_EQ(other["strands"], m.strands.size());
    EXPECT_EQ(other["continuations_not_drawn"], hidden);
    EXPECT_EQ(other["strand_ids"], "serial");
    EXPECT_DOUBLE_EQ(other["window"]["from_us"].get<double>(), window.from / 1000.0);
    if (round % 5 == 0)
      EXPECT_TRUE(other["window"]["to_us"].is_null());
    else
      EXPECT_DOUBLE_EQ(other["window"]["to_us"].get<double>(), window.to / 1000.0);
    for (const json& e : j["traceEvents"])
      if (e["ph"] == "X") {
        const model::Strand& x = m.strands[e["args"]["strand"].get<uint32_t>()];
        EXPECT_DOUBLE_EQ(e["ts"].get<double>(), (x.start - 1) / 1000.0);
      }
  }
}

TEST(ExportPerfetto, PreemptionTracksAndMicrosecondDecimals) {
  fixtures::ModelBuilder b;
  const uint32_t a = b.strand(3);
  const uint32_t c = b.strand(5, {a});
  Model m = b.finish();
  set_time(m, a, 0, 1000, 1003);  // a 3 ns strand: 0.003 us
  set_time(m, c, 0, 2500, 3999);
  m.thread_count = 1;
  const auto labels = plain_labels(m);
  report::PerfettoStats st;
  const json j = export_perfetto(m, labels, &st, nullptr, {{{2600, 2700}}});
  EXPECT_EQ(st.preemption_slices, 1u);
  bool seen_short = false, seen_preempt = false, named = false;
  for (const json& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "preempted") {
      seen_preempt = true;
      EXPECT_EQ(e["tid"], report::kPreemptionTidBase);
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1.6);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 0.1);
    } else if (e["ph"] == "X" && e["args"]["strand"] == a) {
      seen_short = true;
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 0.003);
    } else if (e["ph"] == "M" && e["tid"] == report::kPreemptionTidBase) {
      named |= e["name"] == "thread_name" && e["args"]["name"] == "main thread: preempted";
    }
  }
  EXPECT_TRUE(seen_short);
  EXPECT_TRUE(seen_preempt);
  EXPECT_TRUE(named);
}

// A damaged trace can put a strand's timestamps anywhere in 64 bits: times stay within int64_t
// (the fuzzer found a negation of INT64_MIN) and the output stays JSON.
TEST(ExportPerfetto, TimestampsAtTheEndsOfTheClockStayNumbers) {
  fixtures::ModelBuilder b;
  const uint32_t a = b.strand(3);
  const uint32_t c = b.strand(5, {a});
  Model m = b.finish();
  set_time(m, a, 0, 1000, 1003);
  set_time(m, c, 0, UINT64_MAX - 10, UINT64_MAX);
  m.thread_count = 1;
  m.ticks_per_second = 1e6;  // 1000 ns per tick: far beyond int64_t nanoseconds
  m.tsc_per_second = 1e6;
  const auto labels = plain_labels(m);
  const json j = export_perfetto(m, labels, nullptr, nullptr, {});
  ASSERT_TRUE(j.contains("traceEvents"));
  for (const json& e : j["traceEvents"])
    if (e["ph"] == "X") {
      EXPECT_TRUE(e["ts"].is_number()) << e.dump();
    }
}

TEST(ExportPerfetto, EveryThreadWithASliceGetsATrack) {
  // A model whose thread_count undercounts (a cut trace): the slices' threads still get names.
  fixtures::ModelBuilder b;
  const uint32_t a = b.strand(1);
  const uint32_t c = b.strand(1, {a});
  Model m = b.finish();
  set_time(m, a, 0, 10, 20);
  set_time(m, c, 2, 20, 30);
  m.thread_count = 1;
  const auto labels = plain_labels(m);
  report::PerfettoStats st;
  const json j = export_perfetto(m, labels, &st);
  std::set<uint64_t> named;
  for (const json& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") named.insert(e["tid"].get<uint64_t>());
  EXPECT_EQ(named, (std::set<uint64_t>{0, 2}));
  EXPECT_EQ(st.tracks, 2u);
}

// ---------------------------------------------------------------------------------------------
// Escaping

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
