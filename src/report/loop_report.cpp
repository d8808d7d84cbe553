#include "report/loop_report.hpp"

#include <fmt/format.h>

#include <cmath>

namespace tasklens::report {
namespace {

bool together(const analysis::LoopFacts& f) { return f.strands_together > 0; }

bool team_bound(const analysis::SiteRow& row, const analysis::LoopFacts& f) {
  return analysis::team_bound(f, row.work);
}

}  // namespace

std::string kind_label(const model::Model& m, const analysis::SiteRow& row,
                       const analysis::LoopFacts& f) {
  std::string kind = model::to_string(m.sites[row.site].kind);
  if (together(f)) return kind + "*";
  if (team_bound(row, f)) return kind + "#";
  return kind;
}

void add_loop_keys(nlohmann::ordered_json& j, const model::Model& m, const analysis::SiteRow& row,
                   const analysis::LoopFacts& f) {
  (void)m;
  if (together(f) || f.static_instances > 0) {
    nlohmann::ordered_json loop;
    loop["iterations_seen_one_by_one"] = !together(f);
    loop["strands_seen_together"] = f.strands_together;
    loop["iterations_seen_together"] = f.iterations_together;
    loop["static_instances"] = f.static_instances;
    loop["share_imbalance_percent"] = 100.0 * f.share_imbalance;
    j["loop"] = loop;
  }
  if (team_bound(row, f))
    j["team_bound"] = {
        {"work", f.team_bound_work},
        {"work_percent", row.work ? 100.0 * double(f.team_bound_work) / row.work : 0.0},
        {"team", f.team}};
}

std::vector<std::string> loop_notes(const model::Model& m, const analysis::Profile& p,
                                    const std::vector<SiteLabel>& labels,
                                    const std::vector<analysis::LoopFacts>& facts) {
  std::vector<std::string> imbalance, bound;
  for (const analysis::SiteRow& row : p.sites) {
    if (row.site >= facts.size() || row.site >= labels.size()) continue;
    const analysis::LoopFacts& f = facts[row.site];
    const SiteLabel& l = labels[row.site];
    const std::string where =
        l.function.empty() ? l.site : fmt::format("{} ({})", l.site, l.function);
    if (f.static_instances > 0 && f.share_imbalance >= analysis::kImbalanceNote)
      imbalance.push_back(fmt::format(
          "the threads' static shares of loop {} differ: the slowest took {:.0f}% longer than "
          "the average share, and the rest of the team waited for it; schedule(dynamic) or "
          "schedule(guided) would even them out (the loop's parallelism counts its iterations, "
          "not this schedule)",
          where, 100.0 * f.share_imbalance));
    if (team_bound(row, f))
      bound.push_back(fmt::format(
          "parallel region {} ran {:.0f}% of its work as one stretch per thread, with no loop, "
          "task or other construct the OpenMP runtime reports: code every thread runs, or work "
          "the threads split themselves (with omp_get_thread_num(), or a loop gcc compiled "
          "with a static schedule: gcc computes the shares without calling the runtime), so "
          "that part's parallelism is bounded by the {} thread{} it was recorded with (the "
          "region: {:.2f}); record a clang build, or with more threads than cores (say "
          "OMP_NUM_THREADS=16), to see how far it scales",
          where, row.work ? 100.0 * double(f.team_bound_work) / row.work : 0.0, f.team,
          f.team == 1 ? "" : "s", row.parallelism));
  }
  imbalance.insert(imbalance.end(), bound.begin(), bound.end());
  (void)m;
  return imbalance;
}

std::string loop_legend(const model::Model& m, const analysis::Profile& p,
                        const std::vector<analysis::LoopFacts>& facts, size_t rows) {
  bool star = false, hash = false;
  for (size_t i = 0; i < std::min(rows, p.sites.size()); ++i) {
    const analysis::SiteRow& row = p.sites[i];
    if (row.site >= facts.size()) continue;
    const std::string kind = kind_label(m, row, facts[row.site]);
    star = star || kind.back() == '*';
    hash = hash || kind.back() == '#';
  }
  std::string out;
  if (star)
    out +=
        "* iterations seen only together (a thread's share of a static loop, a chunk, a taskloop "
        "task): taken as independent iterations of equal work, so the loop's span is one "
        "iteration's share, whatever the team it was recorded with.\n";
  if (hash)
    out +=
        "# part of the region's work ran as one stretch per thread, without a construct the "
        "runtime reports: its parallelism is bounded by the team it was recorded with (see the "
        "note above).\n";
  return out;
}

}  // namespace tasklens::report
