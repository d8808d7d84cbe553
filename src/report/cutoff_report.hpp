// The cut-off adviser's answer (analysis/cutoff.hpp) for people: a table of the depths around
// the recommended one for `advise`, its JSON (docs/report-json.md, advise's "cutoffs"), and the
// one sentence the report's diagnosis gives instead of a general "raise the cut-off".
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/cutoff.hpp"
#include "report/profile_report.hpp"

namespace tasklens::report {

// "fib.c:19, fib.c:21 (fib)": the recursion's task sites and their function.
std::string recursion_name(const analysis::Recursion& r, const std::vector<SiteLabel>& labels);

// What to write, with its effect: "create the tasks at ... only in calls nested fewer than D
// tasks deep ...". The diagnosis's advice and the last line of advise's table.
std::string cutoff_sentence(const model::Model& m, const analysis::CutoffAdvice& a,
                            const std::vector<SiteLabel>& labels);

// advise's section: per recursion, its depths around the recommended one, then the sentence.
std::string cutoff_table(const model::Model& m, const std::vector<analysis::CutoffAdvice>& advice,
                         const std::vector<SiteLabel>& labels);
nlohmann::ordered_json cutoff_json(const model::Model& m,
                                   const std::vector<analysis::CutoffAdvice>& advice,
                                   const std::vector<SiteLabel>& labels);

}  // namespace tasklens::report
