// The verdict that opens `report` and `view` in words: each finding of analysis/diagnosis.hpp
// (which decides them, their figures and their order) as a sentence, its evidence, the code
// location and what to do; the table's lines and the JSON's "diagnosis" list
// (docs/report-json.md); and advise's notes on steps that run a region entered too often.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/diagnosis.hpp"
#include "analysis/diff.hpp"
#include "analysis/whatif.hpp"
#include "model/model.hpp"
#include "report/profile_report.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::report {

struct DiagnosisItem {
  std::string kind;      // analysis::to_string(DiagnosisKind): serial-code, tiny-tasks, ...
  std::string finding;   // what is wrong, in a sentence
  std::string evidence;  // the figures behind it
  std::string location;  // file:line or file:first-last; empty when the finding has none
  std::string advice;    // what to do
};

// What the findings' sites, fragment groups and units are called.
struct DiagnosisNames {
  const std::vector<SiteLabel>* sites = nullptr;  // per site
  const FragmentLabels* fragments = nullptr;      // serial-code's groups
  const SpanAccount* account = nullptr;  // untrustworthy's clipped strands' fragments; may be null
  const analysis::Diff* base = nullptr;  // work-inflation's unit (Diff::sites)
};

// One finding in words; the sentences of `findings`, in their order.
DiagnosisItem diagnosis_item(const model::Model& model, const analysis::DiagnosisFinding& finding,
                             const DiagnosisNames& names);
std::vector<DiagnosisItem> diagnosis_items(const model::Model& model,
                                           const std::vector<analysis::DiagnosisFinding>& findings,
                                           const DiagnosisNames& names);

// The table's lines ("Diagnosis, most important first:" then one numbered line per finding;
// "" when there is none) and the JSON list ([{kind, finding, evidence, location, advice}]).
std::string diagnosis_table(const std::vector<DiagnosisItem>& items);
nlohmann::ordered_json diagnosis_json(const std::vector<DiagnosisItem>& items);

// How analysis::parallelism_target chose the target, for the user ("8 x the 2 cores of this
// machine").
std::string parallelism_target_origin(const model::Model& model);

// The serial code's fragment groups (analysis::serial_groups, at most `limit`) with their labels,
// for the Program site's row.
std::vector<SerialFragment> serial_fragments(const model::Model& model,
                                             const analysis::Profile& profile,
                                             const FragmentLabels& fragments, size_t limit = 8);

// advise's notes, one per region (analysis::region_entry_steps): its steps run the region's own
// code, which entering the team once parallelizes.
std::vector<std::string> region_entry_notes(const std::vector<analysis::RegionEntrySteps>& regions,
                                            const analysis::Advice& advice,
                                            const FragmentLabels& fragments,
                                            const std::vector<SiteLabel>& sites);

// advise's note on the steps through a creator too slow for its tasks
// (analysis::creation_steps): their fragments are mostly the time between two creations, which
// fewer, larger tasks shorten; empty without such steps.
std::vector<std::string> creation_step_notes(const std::vector<analysis::StepShare>& steps,
                                             const analysis::CreationBound& creator,
                                             const analysis::Advice& advice,
                                             const FragmentLabels& fragments,
                                             const std::vector<SiteLabel>& sites,
                                             const model::Model& model);

}  // namespace tasklens::report
