// Everything tasklens does with a model after reading it, for the tests and the fuzzer that feed
// it damaged traces (tests/unit/damaged_trace_test.cpp, fuzz/trace_fuzzer.cpp): the model's
// invariants, every analysis, the reports and the exports. Header-only and without GoogleTest,
// so that the fuzzer (built with clang's libFuzzer, not linked with gtest) shares it. Each
// function returns what went wrong, or an empty string.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/diff.hpp"
#include "analysis/predict.hpp"
#include "analysis/profile.hpp"
#include "analysis/robust.hpp"
#include "analysis/sched.hpp"
#include "analysis/stream_profile.hpp"
#include "analysis/tasks.hpp"
#include "analysis/whatif.hpp"
#include "model/model.hpp"
#include "report/export_dump.hpp"
#include "report/export_perfetto.hpp"
#include "report/profile_report.hpp"

namespace tasklens::fixtures {

// The invariants every analysis relies on; they hold for damaged traces too.
inline std::string structure_failure(const model::Model& m) {
  if (m.nodes.empty()) return "no root node";
  if (m.nodes[0].strand_begin != 0 || m.nodes[0].strand_end != m.strands.size())
    return "the root does not span every strand";
  for (uint32_t s = 0; s < m.strands.size(); ++s)
    for (uint32_t p : m.preds_of(s))
      if (p >= s) return "strand " + std::to_string(s) + " has a later predecessor";
  for (uint32_t v = 1; v < m.nodes.size(); ++v) {
    const model::Node& n = m.nodes[v];
    if (n.parent >= v) return "node " + std::to_string(v) + " has a later parent";
    const model::Node& p = m.nodes[n.parent];
    if (p.strand_begin > n.strand_begin || p.strand_end < n.strand_end)
      return "node " + std::to_string(v) + "'s strands are outside its parent's";
    if (v + n.subtree_size > n.parent + p.subtree_size)
      return "node " + std::to_string(v) + "'s subtree is outside its parent's";
  }
  return "";
}

// How two profiles differ (the first difference found), or an empty string: the one-pass profile
// (analysis/stream_profile.hpp) must give compute_profile's exactly.
inline std::string profile_mismatch(const analysis::Profile& a, const analysis::Profile& b) {
  auto say = [](const char* what, auto x, auto y) {
    return std::string(what) + " " + std::to_string(x) + " against " + std::to_string(y);
  };
  if (a.work != b.work) return say("work", a.work, b.work);
  if (a.span != b.span) return say("span", a.span, b.span);
  if (a.parallelism != b.parallelism) return say("parallelism", a.parallelism, b.parallelism);
  if (a.critical_path != b.critical_path)
    return say("critical path of strands", a.critical_path.size(), b.critical_path.size());
  if (a.sites.size() != b.sites.size()) return say("rows", a.sites.size(), b.sites.size());
  for (size_t i = 0; i < a.sites.size(); ++i) {
    const analysis::SiteRow &x = a.sites[i], &y = b.sites[i];
    const std::string row = "row " + std::to_string(i) + " (site " + std::to_string(x.site) + ") ";
    if (x.site != y.site) return row + say("site", x.site, y.site);
    if (x.count != y.count) return row + say("count", x.count, y.count);
    if (x.work != y.work) return row + say("work", x.work, y.work);
    if (x.span != y.span) return row + say("span", x.span, y.span);
    if (x.critical_work != y.critical_work)
      return row + say("critical work", x.critical_work, y.critical_work);
    if (x.parallelism != y.parallelism || x.critical_path_percent != y.critical_path_percent)
      return row + "parallelism or share";
  }
  return "";
}

// compute_profile against the one-pass profile of the same model, in memory and with its path
// log spilled in blocks of 3 strands (read back across blocks).
inline std::string stream_mismatch(const model::Model& m) {
  const analysis::Profile p = analysis::compute_profile(m);
  std::string failure = profile_mismatch(analysis::stream_profile_of(m), p);
  if (failure.empty()) failure = profile_mismatch(analysis::stream_profile_of(m, nullptr, 3), p);
  return failure.empty() ? "" : "the one-pass profile differs: " + failure;
}

// Runs every analysis, report and export on `m` (a copy is clipped for the robust span).
inline std::string analyze_all(const model::Model& m) {
  analysis::Profile p = analysis::compute_profile(m);
  if (p.span > p.work) return "a span larger than the work";
  if (std::string failure = stream_mismatch(m); !failure.empty()) return failure;
  analysis::compute_schedule(m);
  analysis::compute_tasks(m, analysis::default_task_options(m, m.tsc_per_second));
  const analysis::Simulator simulator(m, analysis::strand_durations(m));
  simulator.run(2, analysis::measure_overheads(m));
  if (m.sites.size() > 1) {
    std::vector<analysis::Unit> units{analysis::unit_of_sites(m, {1}, "site")};
    analysis::whatif_curves(m, units, {2, analysis::kInfiniteFactor},
                            analysis::WhatIfMode::Parallelize);
  }
  std::vector<uint32_t> group_of(m.fragments.size());
  for (uint32_t f = 0; f < group_of.size(); ++f) group_of[f] = f;
  analysis::advise(m, group_of, static_cast<uint32_t>(group_of.size()), {});
  // The robust span, on a copy (it changes the strands' work).
  model::Model robust = m;
  const analysis::Clipping clipping = analysis::clip_outliers(robust);
  const analysis::Profile rp = analysis::compute_profile(robust);
  if (rp.span > p.span) return "a robust span larger than the measured one";
  // The reports: the profile as a table and as JSON (which must stay JSON whatever the model
  // holds), and a diff of the run with itself.
  const std::vector<report::SiteLabel> labels(m.sites.size());
  report::RunInfo info;
  report::SpanAccount account;
  account.clipping = &clipping;
  account.measured = analysis::measured_figures(robust, clipping, rp.work, rp.span);
  account.fragments.assign(clipping.strands.size(), "fragment");
  report::render_profile(robust, rp, labels, info, report::Format::Table, 20, &account);
  report::render_profile(robust, rp, labels, info, report::Format::Csv, 20, &account);
  if (!nlohmann::json::accept(
          report::render_profile(robust, rp, labels, info, report::Format::Json, 20, &account)))
    return "the profile's JSON is not JSON";
  analysis::DiffInput side;
  side.model = &m;
  side.site_names.assign(m.sites.size(), "site");
  side.fragment_group = group_of;
  side.fragment_names.assign(group_of.size(), "fragment");
  analysis::compute_diff(side, side);
  // The exports (the timeline's JSON must stay JSON whatever the model holds).
  report::ExportRun run;
  run.model = &m;
  run.labels = &labels;
  run.tsc_hz = m.tsc_per_second;
  run.thread_types.assign(m.thread_count, 2);
  run.os_tids.assign(m.thread_count, 0);
  report::ExportWriter perfetto, dag, csv;
  report::write_perfetto(run, perfetto);
  report::write_dag_json(run, dag);
  report::write_strands_csv(run, csv);
  if (!nlohmann::json::accept(perfetto.take())) return "the perfetto export is not JSON";
  if (!nlohmann::json::accept(dag.take())) return "the DAG export is not JSON";
  return "";
}

}  // namespace tasklens::fixtures
