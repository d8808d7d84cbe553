// `tasklens export` on hand-made models: the flow classification and routing of
// report/export_flows.hpp (on a model with every edge kind, and against a brute force on random
// models) and the Perfetto events (slices, tracks, flows bound to the right slices as a trace
// viewer binds them, time order, microsecond timestamps). The dumps and the escaping of names
// from the program: export_dump_test.cpp.
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

#include "export_fixtures.hpp"
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

using fixtures::export_perfetto;
using fixtures::plain_labels;
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

}  // namespace
}  // namespace tasklens
