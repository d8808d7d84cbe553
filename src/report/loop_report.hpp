// What the report says about loops (analysis/loops.hpp): a mark on the kind of loops whose
// iterations were modelled from shares seen together and of team-bound regions, their JSON keys
// on the site rows, and the notes above the table (uneven static shares, team-bound regions).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/loops.hpp"
#include "analysis/profile.hpp"
#include "report/profile_report.hpp"

namespace tasklens::report {

// `facts`: analysis::loop_facts_by_site's; the thresholds are analysis/loops.hpp's.

// The kind column: "loop*" for a loop with iterations seen together, "parallel#" for a
// team-bound region; the plain kind otherwise.
std::string kind_label(const model::Model& model, const analysis::SiteRow& row,
                       const analysis::LoopFacts& facts);
// The row's "loop" / "team_bound" keys (docs/report-json.md), when it has something to say.
void add_loop_keys(nlohmann::ordered_json& row, const model::Model& model,
                   const analysis::SiteRow& site_row, const analysis::LoopFacts& facts);
// One line per finding (without "note: "), most important first: uneven static shares, then
// team-bound regions. `rows` limits the sites looked at to those shown.
std::vector<std::string> loop_notes(const model::Model& model, const analysis::Profile& profile,
                                    const std::vector<SiteLabel>& labels,
                                    const std::vector<analysis::LoopFacts>& facts);
// The legend lines of the marks used in the first `rows` rows (empty when none is used).
std::string loop_legend(const model::Model& model, const analysis::Profile& profile,
                        const std::vector<analysis::LoopFacts>& facts, size_t rows);

}  // namespace tasklens::report
