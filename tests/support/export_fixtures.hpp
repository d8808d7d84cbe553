// Hand-made models' site labels and their Perfetto export, for the export tests
// (export_test.cpp, export_dump_test.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "report/export_perfetto.hpp"
#include "report/export_timeline.hpp"
#include "report/profile_report.hpp"

namespace tasklens::fixtures {

// A label per site as the reports give them ("app.c:10" for site 1, ...), the root's first.
inline std::vector<report::SiteLabel> plain_labels(const model::Model& m) {
  std::vector<report::SiteLabel> labels(m.sites.size());
  for (size_t i = 0; i < m.sites.size(); ++i) {
    labels[i].site = i == 0 ? "<program>" : "app.c:" + std::to_string(10 * i);
    labels[i].file = i == 0 ? "" : "/src/app.c";
    labels[i].line = i == 0 ? 0 : static_cast<unsigned>(10 * i);
    labels[i].function = i == 0 ? "(outside any construct)" : "work";
  }
  return labels;
}

// The model's Perfetto events at 1 GHz (a tick a nanosecond), parsed; `raw` gets the text as
// written, `stats` what the writer counted; `preempt`: per thread, its off-CPU intervals.
inline nlohmann::json export_perfetto(
    const model::Model& m, const std::vector<report::SiteLabel>& labels,
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
  return nlohmann::json::parse(text);
}

}  // namespace tasklens::fixtures
