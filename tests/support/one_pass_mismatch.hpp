// How a recording read in one pass (model::build_streaming into each one-pass sink) differs
// from the analyses of its model built in memory: the checks every trace of the model tests goes
// through (trace_builder.hpp's build). Header-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analysis/diff.hpp"
#include "analysis/stream_advise.hpp"
#include "analysis/stream_diff.hpp"
#include "analysis/stream_predict.hpp"
#include "analysis/stream_sched.hpp"
#include "analysis/stream_structure.hpp"
#include "analysis/stream_tasks.hpp"
#include "analysis/stream_whatif.hpp"
#include "analyze_all.hpp"
#include "model/builder.hpp"
#include "model/tee_sink.hpp"
#include "report/export_stream.hpp"
#include "report/export_timeline.hpp"
#include "report/html_view.hpp"
#include "trace/reader.hpp"

namespace tasklens::fixtures {

// Reads `trace` in one pass into `sink` (the model it gives into `streamed`, if given): false
// when there is nothing to compare, with `failure` saying why if the reading failed (empty when
// the trace has what one pass does not read yet).
inline bool read_one_pass(const trace::TraceFile& trace, model::StrandSink& sink,
                          const model::BuildOptions& options, std::string& failure,
                          model::Model* streamed = nullptr) {
  try {
    model::Model m = model::build_streaming(trace, sink, options);
    if (streamed) *streamed = std::move(m);
    return true;
  } catch (const model::NotInOnePass&) {
    failure.clear();
  } catch (const model::ModelError& e) {
    failure = std::string("the streaming mode failed: ") + e.what();
  }
  return false;
}

// How the profile of `trace` read in one pass (model::build_streaming into StreamProfile)
// differs from compute_profile on `m`, its model built in memory: empty when it does not, or when
// the trace has what the streaming mode does not read yet (its error says so).
inline std::string streaming_mismatch(const trace::TraceFile& trace, const model::Model& m,
                                      const model::BuildOptions& options) {
  analysis::StreamProfile sink(analysis::StreamProfile::kSitesAsTheyCome, 3);
  model::Model streamed;
  std::string failure;
  if (!read_one_pass(trace, sink, options, failure, &streamed)) return failure;
  analysis::Profile memory = analysis::compute_profile(m);
  memory.critical_path.clear();
  const analysis::Profile one_pass = sink.finish(false);
  failure = profile_mismatch(one_pass, memory);
  if (failure.empty() && streamed.sites.size() != m.sites.size())
    failure = "sites " + std::to_string(streamed.sites.size()) + " against " +
              std::to_string(m.sites.size());
  if (failure.empty() && streamed.warnings != m.warnings)
    failure = "warnings: " + std::to_string(streamed.warnings.size()) + " against " +
              std::to_string(m.warnings.size()) +
              (streamed.warnings.empty() ? "" : ", first: " + streamed.warnings[0]);
  return failure.empty() ? "" : "the streaming mode's profile differs: " + failure;
}

// How `tasks` on `trace` read in one pass (StreamTasks) differs from compute_tasks on `m`: the
// exact figures must be equal, the percentiles within the sketch's bound below the exact ones.
inline std::string tasks_streaming_mismatch(const trace::TraceFile& trace, const model::Model& m,
                                            const model::BuildOptions& options) {
  const analysis::TaskOptions opt = analysis::default_task_options(m, trace.tsc_hz());
  analysis::StreamTasks sink(opt.tiny_size);
  model::Model streamed;
  std::string failure;
  if (!read_one_pass(trace, sink, options, failure, &streamed)) return failure;
  const analysis::TaskProfile a = analysis::compute_tasks(m, opt), b = sink.finish(streamed, opt);
  auto within = [&](uint64_t exact, uint64_t sketched) {
    return sketched <= exact && double(exact - sketched) <= b.sketch_error * double(exact);
  };
  auto stats = [&](const analysis::Stats& x, const analysis::Stats& y) {
    return x.samples == y.samples && x.total == y.total && x.min == y.min && x.max == y.max &&
           within(x.median, y.median) && within(x.p90, y.p90);
  };
  auto hist = [](const analysis::Histogram& x, const analysis::Histogram& y) {
    return x.counts == y.counts && (x.counts.empty() || (x.lo == y.lo && x.width == y.width));
  };
  if (a.tasks != b.tasks || a.task_work != b.task_work || a.work != b.work ||
      a.workers != b.workers || a.timestamps != b.timestamps || a.types.size() != b.types.size())
    failure = "tasks " + std::to_string(b.tasks) + " against " + std::to_string(a.tasks) +
              ", work " + std::to_string(b.work) + " against " + std::to_string(a.work) +
              ", workers " + std::to_string(b.workers) + " against " + std::to_string(a.workers) +
              ", types " + std::to_string(b.types.size()) + " against " +
              std::to_string(a.types.size());
  for (size_t i = 0; failure.empty() && i < a.types.size(); ++i) {
    const analysis::TaskType &x = a.types[i], &y = b.types[i];
    const std::string type = "type " + std::to_string(i) + " (site " + std::to_string(x.site) + ")";
    if (x.site != y.site || x.chunks != y.chunks || x.tiny != y.tiny ||
        x.size_octaves != y.size_octaves)
      failure = type + ": site, kind, tiny tasks or octaves";
    else if (!stats(x.size, y.size))
      failure = type + ": sizes";
    else if (!stats(x.wait, y.wait))
      failure = type + ": waits " + std::to_string(y.wait.samples) + " against " +
                std::to_string(x.wait.samples) + ", total " + std::to_string(y.wait.total) +
                " against " + std::to_string(x.wait.total);
    else if (!stats(x.idle, y.idle))
      failure = type + ": idle times " + std::to_string(y.idle.samples) + " against " +
                std::to_string(x.idle.samples) + ", total " + std::to_string(y.idle.total) +
                " against " + std::to_string(x.idle.total);
    else if (!hist(x.size_hist, y.size_hist) || !hist(x.wait_hist, y.wait_hist) ||
             !hist(x.idle_hist, y.idle_hist))
      failure = type + ": histograms";
    else if (y.long_waits > x.long_waits)
      failure = type + ": long waits";
  }
  if (failure.empty() && b.sketch_error == 0) failure = "no sketch error stated";
  return failure.empty() ? "" : "the one-pass task profile differs: " + failure;
}

// How `predict` on `trace` read in one pass (StreamPredict) differs from the DAG's: without
// collapsing (a budget above the strand count), the same T1 and Tinf, the same overheads, and
// the same simulated times on 1 to 4 workers; collapsed to a few nodes, the budget kept, the
// longest path no shorter, and each simulation without overheads within the greedy bounds of
// the graph it ran: max(T1 / P, Tinf) <= time <= T1 / P + the collapsed longest path (the upper
// one where no strand stands for loop iterations, which the simulation splits in P shares only).
inline std::string predict_streaming_mismatch(const trace::TraceFile& trace, const model::Model& m,
                                              const model::BuildOptions& options) {
  const std::vector<uint64_t> dur = analysis::strand_durations(m);
  uint64_t work = 0;
  for (uint64_t d : dur) work += d;
  const uint64_t span = analysis::longest_path(m, nullptr, dur.data());
  auto n = [](uint64_t x) { return std::to_string(x); };
  std::string failure;
  {
    analysis::StreamPredict sink(1u << 30, m.metric == "tsc", trace.stream_count());
    if (!read_one_pass(trace, sink, options, failure)) return failure;
    analysis::StreamPredict::Result r = sink.finish();
    if (r.work != work || r.span != span || r.grain != 0)
      return "the one-pass prediction's T1, Tinf " + n(r.work) + ", " + n(r.span) + " against " +
             n(work) + ", " + n(span);
    analysis::Overheads a = analysis::measure_overheads(m), b = r.overheads;
    analysis::finish_overheads(b, m, r.timed_strands, r.workers);
    const auto same = [](const analysis::OverheadCost& x, const analysis::OverheadCost& y) {
      return x.samples == y.samples && x.measured == y.measured && x.ticks == y.ticks;
    };
    if (!same(a.spawn, b.spawn) || !same(a.steal, b.steal) || !same(a.sync, b.sync) ||
        !same(a.cont, b.cont) || a.inside != b.inside || a.one_worker_task != b.one_worker_task)
      return "the one-pass prediction's overheads differ: spawn " + n(b.spawn.samples) + " " +
             std::to_string(b.spawn.ticks) + " against " + n(a.spawn.samples) + " " +
             std::to_string(a.spawn.ticks) + ", sync " + n(b.sync.samples) + " against " +
             n(a.sync.samples) + ", steal " + n(b.steal.samples) + " against " +
             n(a.steal.samples) + ", continue " + n(b.cont.samples) + " against " +
             n(a.cont.samples);
    const analysis::Simulator dag(m, dur), graph(r.graph);
    for (uint32_t p = 1; p <= 4; ++p) {
      const analysis::SimulationResult x = dag.run(p, a), y = graph.run(p, a);
      if (x.time != y.time || x.busy != y.busy || x.overhead != y.overhead)
        return "the one-pass simulation on " + n(p) + " workers: " + n(y.time) + " against " +
               n(x.time) + " (overhead " + n(y.overhead) + " against " + n(x.overhead) + ")";
    }
  }
  analysis::StreamPredict sink(16, m.metric == "tsc", trace.stream_count());
  if (!read_one_pass(trace, sink, options, failure)) return failure;
  analysis::StreamPredict::Result r = sink.finish();
  if (r.graph.nodes.size() > 16 || r.work != work || r.span != span || r.collapsed_span < span)
    return "collapsed: " + n(r.graph.nodes.size()) + " nodes, T1 " + n(r.work) + ", Tinf " +
           n(r.span) + ", its longest path " + n(r.collapsed_span);
  const analysis::Simulator graph(r.graph);
  for (uint32_t p = 1; p <= 4; ++p) {
    const analysis::SimulationResult y = graph.run(p, analysis::Overheads{});
    const double lower = std::max(double(r.work) / p, double(r.span));
    const double upper = r.divisible ? 1e300 : double(r.work) / p + double(r.collapsed_span);
    if (double(y.time) < lower - 1 || double(y.time) > upper + 1 || y.busy != r.work)
      return "collapsed, on " + n(p) + " workers: " + n(y.time) + " outside [" +
             std::to_string(lower) + ", " + std::to_string(upper) + "]";
  }
  return "";
}

// How `sched` on `trace` read in one pass (StreamSchedule, its sizes small enough that its log,
// its runs and their blocks go to disk) differs from compute_schedule on `m`: every figure must
// be equal, and the step function sampled in the pass equal to the steps downsampled.
inline std::string sched_streaming_mismatch(const trace::TraceFile& trace, const model::Model& m,
                                            const model::BuildOptions& options) {
  analysis::StreamSchedule sink(3, 5, 2);
  std::string failure;
  if (!read_one_pass(trace, sink, options, failure)) return failure;
  const std::vector<size_t> counts = {1, 7, 300};
  const analysis::StreamSchedule::Result r = sink.finish(counts);
  const analysis::Schedule a = analysis::compute_schedule(m), &b = r.schedule;
  auto n = [](uint64_t x) { return std::to_string(x); };
  auto components = [](const analysis::SchedComponents& x, const analysis::SchedComponents& y) {
    return x.work == y.work && x.delay == y.delay && x.no_work_sched == y.no_work_sched &&
           x.no_work_app == y.no_work_app;
  };
  const analysis::Profile p = analysis::compute_profile(m);
  if (r.profile.work != p.work || r.profile.span != p.span)
    failure = "work " + n(r.profile.work) + " against " + n(p.work) + ", span " +
              n(r.profile.span) + " against " + n(p.span);
  else if (a.timestamps != b.timestamps || a.workers != b.workers ||
           a.timed_strands != b.timed_strands || a.first != b.first || a.last != b.last ||
           a.elapsed != b.elapsed || a.cumulative != b.cumulative)
    failure = "timeline: workers " + n(b.workers) + " against " + n(a.workers) + ", strands " +
              n(b.timed_strands) + " against " + n(a.timed_strands) + ", [" + n(b.first) + ", " +
              n(b.last) + ") against [" + n(a.first) + ", " + n(a.last) + ")";
  else if (!components(a.total, b.total))
    failure = "total: delay " + n(b.total.delay) + " against " + n(a.total.delay) +
              ", no-work-sched " + n(b.total.no_work_sched) + " against " +
              n(a.total.no_work_sched) + ", no-work-app " + n(b.total.no_work_app) + " against " +
              n(a.total.no_work_app);
  else if (a.running_ticks != b.running_ticks || a.ready_ticks != b.ready_ticks ||
           a.max_running != b.max_running || a.max_ready != b.max_ready)
    failure = "integrals or maxima: ready " + n(b.ready_ticks) + " against " + n(a.ready_ticks);
  else if (a.path.length != b.path.length || a.path.work != b.path.work ||
           a.path.scheduler_delay != b.path.scheduler_delay ||
           a.path.busy_delay != b.path.busy_delay || a.path.before != b.path.before)
    failure = "ready path: " + n(b.path.length) + " strands against " + n(a.path.length) +
              ", work " + n(b.path.work) + " against " + n(a.path.work) + ", scheduler delay " +
              n(b.path.scheduler_delay) + " against " + n(a.path.scheduler_delay);
  for (size_t w = 0; failure.empty() && w < a.per_worker.size(); ++w)
    if (a.per_worker[w].thread != b.per_worker[w].thread ||
        a.per_worker[w].strands != b.per_worker[w].strands ||
        !components(a.per_worker[w].time, b.per_worker[w].time))
      failure = "worker " + n(w);
  for (size_t c = 0; failure.empty() && c < counts.size(); ++c) {
    const std::vector<analysis::SchedPoint> x = analysis::points(a, counts[c]),
                                            y = analysis::points(b, counts[c]);
    bool same = x.size() == y.size();
    for (size_t k = 0; same && k < x.size(); ++k)
      same = x[k].begin == y[k].begin && x[k].end == y[k].end &&
             x[k].running_ticks == y[k].running_ticks && x[k].ready_ticks == y[k].ready_ticks &&
             x[k].running_max == y[k].running_max && x[k].ready_max == y[k].ready_max;
    if (!same) failure = "the step function at " + n(counts[c]) + " points";
  }
  return failure.empty() ? "" : "the one-pass schedule differs: " + failure;
}

// How `view`'s structure of `trace` read in two passes (a TeeSink of StreamProfile and
// StreamTimelineBounds, then StreamStructure) differs from structure_json on `m`: the profile
// through the tee, the tree's groups (by their root paths of (kind, site): ids may differ where
// two groups tie) with every figure but the spans, and the timeline's slices, each as they are
// (`max_slices` 4000) and merged into buckets (7; a bucket's group is not compared there: a tie
// between two pieces goes to the smaller group id, and ids may differ).
inline std::string structure_streaming_mismatch(const trace::TraceFile& trace,
                                                const model::Model& m,
                                                const model::BuildOptions& options) {
  std::vector<report::SiteLabel> labels(m.sites.size());
  for (size_t s = 0; s < labels.size(); ++s) labels[s].site = "site " + std::to_string(s);
  const analysis::Profile memory_profile = analysis::compute_profile(m);
  for (const size_t max_slices : {size_t{4000}, size_t{7}}) {
    analysis::StreamProfile profile(analysis::StreamProfile::kSitesAsTheyCome, 3);
    analysis::StreamTimelineBounds bounds_sink;
    model::TeeSink tee({&profile, &bounds_sink});
    std::string failure;
    model::Model streamed;
    if (!read_one_pass(trace, tee, options, failure, &streamed)) return failure;
    std::vector<std::pair<uint64_t, uint64_t>> path;
    analysis::Profile p = profile.finish(false, nullptr, &path);
    analysis::Profile expected = memory_profile;
    expected.critical_path.clear();
    failure = profile_mismatch(p, expected);
    if (!failure.empty()) return "the profile through a TeeSink differs: " + failure;
    const analysis::TimelineBounds bounds = bounds_sink.finish();
    report::StructureOptions so;
    so.max_slices = max_slices;
    analysis::StreamStructure sink(bounds, max_slices, so.max_nodes, std::move(path));
    if (!read_one_pass(trace, sink, options, failure)) return failure;
    std::vector<uint32_t> listed_of;
    const std::vector<analysis::ConstructTrie::Aggregate> aggs =
        sink.trie().aggregates(so.max_nodes, listed_of);
    report::StructureInput in =
        report::one_pass_structure_input(m, labels, 0, p, sink, aggs, listed_of, bounds);
    const nlohmann::ordered_json one_pass = report::structure_json_of(in, so);
    const nlohmann::ordered_json dag = report::structure_json(m, memory_profile, labels, 0, so);
    // Each tree as its groups' root paths with their figures, and its slices by path.
    auto canonical = [max_slices](const nlohmann::ordered_json& j) {
      std::vector<std::string> path_of;
      std::map<std::string, std::string> groups;
      for (const auto& n : j["tree"]["nodes"]) {
        const std::string up = n["parent"].is_null() ? "" : path_of[n["parent"].get<size_t>()];
        path_of.push_back(up + "/" + n["kind"].get<std::string>() + " " + n["site"].dump());
        auto figures = n;
        for (const char* k : {"id", "parent", "span", "span_sum"}) figures.erase(k);
        groups[path_of.back()] = figures.dump();
      }
      std::vector<std::string> slices;
      for (const auto& w : j["timeline"].value("workers", nlohmann::ordered_json::array()))
        for (const auto& x : w["slices"])
          slices.push_back(w["thread"].dump() + " " + x[0].dump() + " " + x[1].dump() + " " +
                           x[2].dump() + " " + x[3].dump() + " " + x[5].dump() + " " +
                           (max_slices < 4000 ? "" : path_of.at(x[4].get<size_t>())));
      std::sort(slices.begin(), slices.end());
      auto meta = j["timeline"];
      meta.erase("workers");
      return std::make_tuple(groups, slices, meta.dump(), j["program"].dump(),
                             j["tree"]["model_nodes"].dump(), j["tree"]["cut"].dump());
    };
    const auto a = canonical(dag), b = canonical(one_pass);
    if (std::get<0>(a) != std::get<0>(b))
      return "the structure's tree differs: " + std::to_string(std::get<0>(b).size()) +
             " groups against " + std::to_string(std::get<0>(a).size());
    if (a != b)
      return "the structure's timeline or totals differ (" + std::to_string(max_slices) +
             " slices): " + std::get<2>(b) + " against " + std::get<2>(a);
  }
  return "";
}

// How the timeline of `trace` read in one pass (report::TimelineSink) differs from
// report::timeline_of on `m`: the same slices (the DAG's ids mapped to the order met, fragments
// by their code addresses) and flows, the whole run and its middle third. Empty when they do not,
// or when the trace has what the streaming mode does not read yet.
inline std::string timeline_streaming_mismatch(const trace::TraceFile& trace, const model::Model& m,
                                               const model::BuildOptions& options) {
  if (m.strand_order.size() != m.strands.size()) return "the model has no strand order";
  report::ExportClock clock;  // (origin 0, a tick per ns)
  uint64_t first = UINT64_MAX, last = 0;
  for (const model::Strand& s : m.strands)
    if (model::is_timed(s)) {
      first = std::min(first, s.start);
      last = std::max(last, s.end);
    }
  report::TimeWindow third;
  third.given = true;
  third.from = first == UINT64_MAX ? 0 : static_cast<int64_t>(first + (last - first) / 3);
  third.to = first == UINT64_MAX ? 0 : static_cast<int64_t>(first + 2 * (last - first) / 3);
  for (const report::TimeWindow& window : {report::TimeWindow{}, third}) {
    report::TimelineSink sink(clock, window, UINT64_MAX);
    std::string failure;
    model::Model streamed;
    if (!read_one_pass(trace, sink, options, failure, &streamed)) return failure;
    const report::Timeline one_pass = sink.take();
    const report::Timeline dag = report::timeline_of(m, clock, window);
    const std::string where = window.given ? " (middle third)" : "";
    if (one_pass.strands != dag.strands || one_pass.timed != dag.timed ||
        one_pass.first_start != dag.first_start ||
        one_pass.continuations_hidden != dag.continuations_hidden)
      return "the timeline's counts differ" + where + ": " + std::to_string(one_pass.strands) +
             " strands, " + std::to_string(one_pass.timed) + " timed, " +
             std::to_string(one_pass.continuations_hidden) + " hidden against " +
             std::to_string(dag.strands) + ", " + std::to_string(dag.timed) + ", " +
             std::to_string(dag.continuations_hidden);
    // Slices by the order met, with their fragments' code addresses.
    auto slice_text = [](const report::TimelineSlice& x, const model::Model& model) {
      const model::Fragment f =
          x.fragment < model.fragments.size() ? model.fragments[x.fragment] : model::Fragment{};
      std::ostringstream o;
      o << x.order << ' ' << x.start << ' ' << x.end << ' ' << x.work << ' ' << x.thread << ' '
        << x.site << ' ' << f.begin << '-' << f.end << ' ' << x.instance << ' ' << int(x.node_kind);
      return o.str();
    };
    std::vector<std::string> a, b;
    for (size_t i = 0; i < dag.size(); ++i) {
      const report::TimelineSlice x = dag.slice(i);
      if (m.strand_order[x.id] != x.order) return "a DAG slice's order is not its strand's";
      a.push_back(slice_text(x, m));
    }
    for (const report::TimelineSlice& x : one_pass.slices) {
      if (x.id != x.order) return "a one-pass slice's id is not the order met";
      b.push_back(slice_text(x, streamed));
    }
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b)
      return "the timeline's slices differ" + where + ": " + std::to_string(b.size()) +
             " against " + std::to_string(a.size());
    auto flow_texts = [](const report::Timeline& t) {
      std::vector<std::string> out;
      for (const report::TimelineFlow& f : t.flows)
        out.push_back(std::to_string(t.order(f.from)) + ">" + std::to_string(t.order(f.to)) + " " +
                      report::to_string(f.kind) + (f.routed ? " routed" : ""));
      std::sort(out.begin(), out.end());
      return out;
    };
    const std::vector<std::string> fa = flow_texts(dag), fb = flow_texts(one_pass);
    if (fa != fb) {
      std::vector<std::string> only;
      std::set_symmetric_difference(fa.begin(), fa.end(), fb.begin(), fb.end(),
                                    std::back_inserter(only));
      return "the timeline's flows differ" + where + ": " + std::to_string(fb.size()) +
             " against " + std::to_string(fa.size()) + ", first apart: " + only.front();
    }
  }
  return "";
}

// How the what-if of `trace` read in one pass (StreamWhatIf) differs from whatif_curves and the
// "after" profile on `m`: units are the first construct site, the fragment with the most work
// (at its own factor, so that the "all" curve is there too) and, in a recording with user
// regions, the region with the most work, in both modes; and how `whatif --list`'s figures in one
// pass (StreamUnitList) differ. Empty when they do not, or when the trace has what the streaming
// mode does not read yet.
inline std::string whatif_streaming_mismatch(const trace::TraceFile& trace, const model::Model& m,
                                             model::BuildOptions options) {
  uint32_t site = model::kNone;
  for (uint32_t x = 0; x < m.sites.size() && site == model::kNone; ++x)
    if (m.sites[x].kind != model::SiteKind::Program) site = x;
  std::vector<uint64_t> fragment_work(m.fragments.size(), 0);
  for (const model::Strand& st : m.strands)
    if (st.fragment < fragment_work.size()) fragment_work[st.fragment] += st.work;
  const uint32_t fragment = static_cast<uint32_t>(
      std::max_element(fragment_work.begin(), fragment_work.end()) - fragment_work.begin());
  if (site == model::kNone || fragment_work.empty()) return "";
  // One pass numbers the fragments as it meets them: a fragment is its two code addresses.
  std::vector<model::Fragment> met;
  options.place_fragment = [&met](const model::Fragment& f, uint32_t index, uint32_t) {
    if (met.size() <= index) met.resize(index + 1);
    met[index] = f;
  };
  const model::Fragment want = m.fragments[fragment];
  std::string failure;
  // Every fragment's work and work on the critical path (whatif --list), by its two addresses.
  {
    analysis::StreamUnitList list;
    if (!read_one_pass(trace, list, options, failure)) return failure;
    const analysis::StreamUnitList::Result r = list.finish();
    using Pair = std::pair<uint64_t, uint64_t>;
    std::map<Pair, std::pair<uint64_t, uint64_t>> memory, one_pass;
    const analysis::Profile p = analysis::compute_profile(m);
    std::vector<uint8_t> on_path(m.strands.size(), 0);
    for (uint32_t s : p.critical_path) on_path[s] = 1;
    // Every fragment of the model, as one pass numbers them (fragment 0, the empty pair, too,
    // whether a strand has it or not).
    for (const model::Fragment& f : m.fragments) memory[Pair{f.begin, f.end}];
    for (uint32_t s = 0; s < m.strands.size(); ++s) {
      const model::Fragment& f = m.fragments[m.strands[s].fragment];
      auto& [work, crit] = memory[Pair{f.begin, f.end}];
      work += m.strands[s].work;
      if (on_path[s]) crit += analysis::path_weight(m, s, m.strands[s].work);
    }
    for (size_t f = 0; f < r.fragments.work.size(); ++f) {
      if (f >= met.size()) return "fragment " + std::to_string(f) + " was not placed";
      auto& [work, crit] = one_pass[Pair{met[f].begin, met[f].end}];
      work += r.fragments.work[f];
      crit += r.fragments.critical[f];
    }
    if (one_pass != memory) {
      std::ostringstream d;  // the fragments (begin-end: work, critical work) either way
      for (const auto* side : {&one_pass, &memory}) {
        d << (side == &one_pass ? "; one pass" : "; memory");
        for (const auto& [f, w] : *side)
          d << " " << std::hex << f.first << "-" << f.second << std::dec << ":" << w.first << ","
            << w.second;
      }
      return "the one-pass fragments differ: " + std::to_string(one_pass.size()) + " against " +
             std::to_string(memory.size()) + d.str();
    }
    analysis::Profile q = p;
    q.critical_path.clear();
    failure = profile_mismatch(r.profile, q);
    if (!failure.empty()) return "the one-pass list's profile differs: " + failure;
    // The regions' work and work on the critical path, as whatif --list counts them in memory.
    std::vector<uint64_t> region_work, region_critical;
    for (uint32_t x = 0; x < m.region_names.size(); ++x) {
      const analysis::Unit u = analysis::unit_of_region(m, x, "");
      uint64_t work = 0, crit = 0;
      for (auto [s, w] : u.parts) {
        work += w;
        if (on_path[s]) crit += analysis::path_weight(m, s, w);
      }
      if (work == 0) continue;  // (one pass knows the regions it met)
      region_work.resize(x + 1, 0);
      region_critical.resize(x + 1, 0);
      region_work[x] = work;
      region_critical[x] = crit;
    }
    std::vector<uint64_t> one_pass_work = r.regions.work, one_pass_critical = r.regions.critical;
    while (!one_pass_work.empty() && one_pass_work.back() == 0) {
      one_pass_work.pop_back();
      one_pass_critical.pop_back();
    }
    if (one_pass_work != region_work || one_pass_critical != region_critical)
      return "the one-pass list's regions differ: " + std::to_string(one_pass_work.size()) +
             " against " + std::to_string(region_work.size());
  }
  // The region with the most work, if any.
  uint32_t region = model::kNone;
  {
    std::vector<uint64_t> work;
    for (const model::RegionWork& r : m.region_work) {
      if (work.size() <= r.region) work.resize(r.region + 1, 0);
      work[r.region] += r.work;
    }
    if (!work.empty())
      region = static_cast<uint32_t>(std::max_element(work.begin(), work.end()) - work.begin());
  }
  for (const analysis::WhatIfMode mode :
       {analysis::WhatIfMode::Parallelize, analysis::WhatIfMode::Speedup}) {
    const std::vector<double> factors = {4, analysis::kInfiniteFactor};
    std::vector<analysis::Unit> units = {analysis::unit_of_sites(m, {site}, "site"),
                                         analysis::unit_of_fragments(m, {fragment}, "fragment")};
    units[1].factor = 3;
    std::vector<analysis::StreamUnit> stream_units = {
        {"site", 0, false, [site](uint32_t x) { return x == site; }},
        {"fragment", 3, true, [&met, want](uint32_t f) {
           return f < met.size() && met[f].begin == want.begin && met[f].end == want.end;
         }}};
    if (region != model::kNone) {  // first: its parts go before the others' (their caps)
      units.insert(units.begin(), analysis::unit_of_region(m, region, "region"));
      stream_units.insert(stream_units.begin(), {"region", 0, false, {}, region});
    }
    analysis::StreamWhatIf sink(stream_units, factors, mode, 4);
    met.clear();
    if (!read_one_pass(trace, sink, options, failure)) return failure;
    const analysis::StreamWhatIf::Result one_pass = sink.finish();
    const std::vector<analysis::WhatIfCurve> curves =
        analysis::whatif_curves(m, units, factors, mode);
    std::vector<const analysis::Unit*> all;
    for (const analysis::Unit& u : units) all.push_back(&u);
    const analysis::Weights w = analysis::apply_units(m, all, 4, mode);
    analysis::Profile after = analysis::compute_profile(m, &w);
    after.critical_path.clear();
    analysis::Profile before = analysis::compute_profile(m);
    before.critical_path.clear();
    failure = profile_mismatch(one_pass.after, after);
    if (!failure.empty()) return "the one-pass what-if's after profile differs: " + failure;
    failure = profile_mismatch(one_pass.before, before);
    if (!failure.empty()) return "the one-pass what-if's profile differs: " + failure;
    if (one_pass.curves.size() != curves.size())
      return "the one-pass what-if has " + std::to_string(one_pass.curves.size()) +
             " curves against " + std::to_string(curves.size());
    for (size_t c = 0; c < curves.size(); ++c) {
      const analysis::WhatIfCurve &a = one_pass.curves[c], &b = curves[c];
      std::string say = "the one-pass what-if's curve " + b.unit + " differs: ";
      if (a.unit != b.unit) return say + "named " + a.unit;
      if (a.unit_work != b.unit_work)
        return say + "unit work " + std::to_string(a.unit_work) + " against " +
               std::to_string(b.unit_work);
      if (a.unit_critical != b.unit_critical)
        return say + "unit critical " + std::to_string(a.unit_critical) + " against " +
               std::to_string(b.unit_critical);
      for (size_t p = 0; p < b.points.size(); ++p)
        if (a.points[p].work != b.points[p].work || a.points[p].span != b.points[p].span)
          return say + "at factor " + std::to_string(b.points[p].factor) + ", work " +
                 std::to_string(a.points[p].work) + " span " + std::to_string(a.points[p].span) +
                 " against " + std::to_string(b.points[p].work) + " " +
                 std::to_string(b.points[p].span);
    }
  }
  return "";
}

// How advise on `trace` read in one pass per step (StreamAdvisePass) differs from advise on `m`:
// each fragment is a group of its own, ties going to the lower pair of code addresses in both,
// and both charge the overhead estimated on `m`. Up to 3 steps, parallelizing 4 ways and
// removing (speeding up infinitely).
inline std::string advise_streaming_mismatch(const trace::TraceFile& trace, const model::Model& m,
                                             model::BuildOptions options) {
  using Pair = std::pair<uint64_t, uint64_t>;
  auto pair_of = [](const model::Fragment& f) { return Pair{f.begin, f.end}; };
  std::vector<model::Fragment> met;  // one pass numbers fragments as met
  options.place_fragment = [&met](const model::Fragment& f, uint32_t index, uint32_t) {
    if (met.size() <= index) met.resize(index + 1);
    met[index] = f;
  };
  std::vector<uint32_t> identity(m.fragments.size());
  for (uint32_t f = 0; f < identity.size(); ++f) identity[f] = f;
  const analysis::Overhead overhead = analysis::estimate_task_overhead(m);
  for (const auto& [mode_of_run, factor_of_run] :
       {std::pair{analysis::WhatIfMode::Parallelize, 4.0},
        std::pair{analysis::WhatIfMode::Speedup, analysis::kInfiniteFactor}}) {
    // (Copied: clang 14 does not let a lambda capture a structured binding.)
    const analysis::WhatIfMode mode = mode_of_run;
    const double factor = factor_of_run;
    analysis::AdviseOptions opt;
    opt.target = 1e9;
    opt.max_steps = 3;
    opt.factor = factor;
    opt.mode = mode;
    const analysis::Advice a =
        analysis::advise(m, identity, static_cast<uint32_t>(identity.size()), opt,
                         [&m, &pair_of](uint32_t x, uint32_t y) {
                           return pair_of(m.fragments[x]) < pair_of(m.fragments[y]);
                         });
    std::string failure;
    analysis::StreamAdvisePass::Result last;
    analysis::AdviseEvaluator e;
    e.first_in_ties = [&](uint32_t x, uint32_t y) { return pair_of(met[x]) < pair_of(met[y]); };
    e.evaluate = [&](const std::vector<uint8_t>& chosen) {
      analysis::StreamAdvisePass sink(chosen, factor, mode, overhead.per_task);
      met.clear();
      if (!read_one_pass(trace, sink, options, failure))
        throw std::runtime_error(failure.empty() ? "not in one pass" : failure);
      last = sink.finish();
      return last.evaluation;
    };
    e.burdened = [&last] { return last.burdened; };
    analysis::Advice b;
    try {
      b = analysis::advise_steps(e, overhead, opt);
    } catch (const std::runtime_error&) {
      return failure.empty() ? "" : failure;  // nothing to compare, or the reading failed
    }
    // Each fragment a group: the pass's sums by fragment are the groups'.
    analysis::name_step_regions(b, last.fragment_regions, last.fragment_work);
    const std::string say =
        std::string("the one-pass advice (") + analysis::to_string(mode) + ") differs: ";
    auto group = [&](uint32_t g, bool one_pass) {
      if (g == model::kNone) return Pair{~uint64_t{0}, 0};
      return one_pass ? pair_of(met.at(g)) : pair_of(m.fragments.at(g));
    };
    auto same_burden = [](const analysis::Burdened& x, const analysis::Burdened& y) {
      return x.span == y.span && x.overhead_on_path == y.overhead_on_path;
    };
    if (a.work != b.work || a.span != b.span)
      return say + "work " + std::to_string(b.work) + " span " + std::to_string(b.span) +
             " against " + std::to_string(a.work) + " " + std::to_string(a.span);
    if (a.stop != b.stop) return say + "stop " + analysis::to_string(b.stop);
    if (a.steps.size() != b.steps.size())
      return say + std::to_string(b.steps.size()) + " steps against " +
             std::to_string(a.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i) {
      const analysis::AdviceStep &x = a.steps[i], &y = b.steps[i];
      if (group(x.group, false) != group(y.group, true) || x.critical_work != y.critical_work ||
          x.strands_on_path != y.strands_on_path || x.work != y.work || x.span != y.span ||
          x.region != y.region || x.region_work != y.region_work ||
          x.region_percent != y.region_percent)
        return say + "step " + std::to_string(i) + ": critical " + std::to_string(y.critical_work) +
               " on " + std::to_string(y.strands_on_path) + " strands, span " +
               std::to_string(y.span) + " against " + std::to_string(x.critical_work) + " on " +
               std::to_string(x.strands_on_path) + ", " + std::to_string(x.span);
    }
    if (group(a.stop_group, false) != group(b.stop_group, true) ||
        a.stop_group_work != b.stop_group_work)
      return say + "the candidate too small";
    if (!same_burden(a.burdened_before, b.burdened_before))
      return say + "burdened span before " + std::to_string(b.burdened_before.span) + " against " +
             std::to_string(a.burdened_before.span) + ", overhead on it " +
             std::to_string(b.burdened_before.overhead_on_path) + " against " +
             std::to_string(a.burdened_before.overhead_on_path);
    if (!same_burden(a.burdened_after, b.burdened_after))
      return say + "burdened span after " + std::to_string(b.burdened_after.span) + " against " +
             std::to_string(a.burdened_after.span);
  }
  return "";
}

// A diff as text, its units' ids aside (the readings number sites and fragments apart).
inline std::string diff_text(const analysis::Diff& d) {
  std::string out;
  auto side = [&](const analysis::DiffSide& s) {
    out += std::to_string(s.threads) + " " + std::to_string(s.workers) + " " +
           std::to_string(s.strands) + " " + std::to_string(s.tasks) + " " +
           std::to_string(s.elapsed) + " " + std::to_string(s.work[0]) + " " +
           std::to_string(s.span[0]) + "\n";
  };
  side(d.base);
  side(d.other);
  auto unit = [&](const analysis::UnitDiff& u) {
    out += std::string(analysis::to_string(u.kind)) + " " + u.name + " " +
           model::to_string(u.site_kind) + " " + std::to_string(u.base_strands) + " " +
           std::to_string(u.other_strands) + (u.small ? " small" : "");
    for (const analysis::MetricDiff& x : u.metrics)
      out += " " + std::to_string(x.base) + " " + std::to_string(x.other) + " " +
             std::to_string(x.critical) + " " + std::to_string(x.cost);
    out += "\n";
  };
  unit(d.program);
  for (const auto* list : {&d.sites, &d.fragments, &d.small_sites, &d.small_fragments})
    for (const analysis::UnitDiff& u : *list) unit(u);
  for (const auto* list : {&d.only_base, &d.only_other})
    for (const analysis::UnmatchedUnit& u : *list)
      out += "only " + u.name + " " + std::to_string(u.work) + "\n";
  return out;
}

// How diff's figures of `trace` read in passes (StreamUnitList, then StreamScaledSpans: one
// pass per recording and one for the costs) differ from the DAG's. Other is the recording; base
// is made from other's own figures, each unit's work times 3/4 or 5/4 (by its name's length), so
// that ratios go both ways and costs are computed, in both readings alike. Sites are named by
// index (the same in both readings), fragments by their two code addresses.
inline std::string diff_streaming_mismatch(const trace::TraceFile& trace, const model::Model& m,
                                           model::BuildOptions options) {
  if (!m.extra_metrics.empty()) return "";  // one pass reads one metric
  std::vector<model::Fragment> met;
  options.place_fragment = [&met](const model::Fragment& f, uint32_t index, uint32_t) {
    if (met.size() <= index) met.resize(index + 1);
    met[index] = f;
  };
  auto names = [](const std::vector<model::Fragment>& fragments, size_t sites) {
    analysis::DiffInput in;
    for (size_t x = 0; x < sites; ++x) in.site_names.push_back(std::to_string(x));
    for (uint32_t f = 0; f < fragments.size(); ++f) {
      in.fragment_group.push_back(f);
      in.fragment_names.push_back(std::to_string(fragments[f].begin) + "-" +
                                  std::to_string(fragments[f].end));
    }
    return in;
  };
  analysis::DiffInput memory_in = names(m.fragments, m.sites.size());
  memory_in.model = &m;
  const std::vector<std::string> metrics = {m.metric};
  analysis::StreamUnitList list;
  model::Model streamed;
  std::string failure;
  if (!read_one_pass(trace, list, options, failure, &streamed)) return failure;
  const analysis::DiffInput one_in = names(met, streamed.sites.size());
  const analysis::DiffFigures other_memory = analysis::dag_diff_figures(memory_in, metrics);
  const analysis::DiffFigures other_one = analysis::diff_figures(list.finish(), streamed, one_in);
  auto base_of = [](analysis::DiffFigures f) {
    f.side.work[0] = f.side.work[0] * 3 / 4;
    for (auto* units : {&f.sites, &f.fragments})
      for (analysis::DiffUnitFigures& u : *units)
        u.work[0] = u.name.size() % 2 ? u.work[0] * 5 / 4 : u.work[0] * 3 / 4;
    return f;
  };
  const analysis::Diff memory =
      analysis::diff_of(base_of(other_memory), other_memory, metrics, 0, {},
                        analysis::dag_scaled_spans(memory_in, metrics));
  const analysis::Diff one_pass =
      analysis::diff_of(base_of(other_one), other_one, metrics, 0, {},
                        [&](const std::vector<analysis::ScaledSpan>& requests) {
                          analysis::StreamScaledSpans sink(
                              analysis::rescaled_paths(requests, other_one, one_in.fragment_group));
                          if (!read_one_pass(trace, sink, options, failure))
                            return std::vector<uint64_t>{};
                          return sink.finish();
                        });
  const std::string a = diff_text(memory), b = diff_text(one_pass);
  return a == b ? "" : "the one-pass diff differs:\n" + b + "against\n" + a;
}

}  // namespace tasklens::fixtures
