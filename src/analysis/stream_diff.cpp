// The differential analysis in passes (stream_diff.hpp).
#include "analysis/stream_diff.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/algebra.hpp"

namespace tasklens::analysis {

namespace {

// Adds index `x`'s figures (each vector by index) into `unit`.
void add_index(DiffUnitFigures& unit, const StreamUnitList::Units& u, uint32_t x) {
  if (x >= u.work.size()) return;
  unit.strands += u.strands[x];
  unit.work[0] += u.work[x];
  unit.critical[0] += u.critical[x];
  unit.on_path[0] += u.on_path[x];
}

// The unit of `key` in `units` (made, named and kinded, if new).
DiffUnitFigures& unit_of(std::vector<DiffUnitFigures>& units, std::map<std::string, uint32_t>& by,
                         const std::string& key, const std::string& name, model::SiteKind kind) {
  const auto [it, inserted] = by.try_emplace(key, static_cast<uint32_t>(units.size()));
  if (inserted) {
    DiffUnitFigures& u = units.emplace_back();
    u.name = name;
    u.site_kind = kind;
    u.work.assign(1, 0);
    u.critical.assign(1, 0);
    u.on_path.assign(1, 0);
  }
  return units[it->second];
}

}  // namespace

DiffFigures diff_figures(const StreamUnitList::Result& r, const model::Model& m,
                         const DiffInput& names) {
  DiffFigures f;
  DiffSide& side = f.side;
  side.threads = m.thread_count;
  side.workers = static_cast<uint32_t>(std::count(m.one_pass.threads_with_strands.begin(),
                                                  m.one_pass.threads_with_strands.end(), 1));
  side.strands = m.one_pass.strands;
  side.tasks = m.task_count;
  const uint64_t first = m.one_pass.first_start, last = m.one_pass.last_end;
  side.elapsed = first != 0 && last > first ? last - first : 0;
  side.work = {r.profile.work};
  side.span = {r.profile.span};
  side.metric_index = {0};
  // Sites by name and kind, fragment groups by name (as compute_diff's units).
  std::map<std::string, uint32_t> by;
  for (uint32_t x = 0; x < m.sites.size(); ++x) {
    const std::string name = x < names.site_names.size() ? names.site_names[x] : "";
    const model::SiteKind kind = m.sites[x].kind;
    DiffUnitFigures& u = unit_of(f.sites, by, site_key(name, kind), name, kind);
    u.ids.push_back(x);
    add_index(u, r.sites, x);
  }
  by.clear();
  std::vector<uint32_t> unit_of_group(names.fragment_names.size());
  for (uint32_t g = 0; g < names.fragment_names.size(); ++g) {
    const std::string& name = names.fragment_names[g];
    DiffUnitFigures& u = unit_of(f.fragments, by, name, name, model::SiteKind::Program);
    u.ids.push_back(g);
    unit_of_group[g] = by[name];
  }
  for (uint32_t x = 0; x < names.fragment_group.size(); ++x) {
    const uint32_t g = names.fragment_group[x];
    if (g < unit_of_group.size()) add_index(f.fragments[unit_of_group[g]], r.fragments, x);
  }
  return f;
}

StreamScaledSpans::StreamScaledSpans(std::vector<Rescaled> paths)
    : paths_(std::move(paths)), best_(paths_.size(), 0), scratch_(paths_.size(), 0) {
  for (uint32_t p = 0; p < paths_.size(); ++p)
    if (paths_[p].every_strand) all_.push_back(p);
}

const std::vector<uint32_t>& StreamScaledSpans::members(uint32_t index, bool fragments) {
  std::vector<std::vector<uint32_t>>& table = fragments ? fragment_members_ : site_members_;
  std::vector<uint8_t>& known = fragments ? fragment_known_ : site_known_;
  if (index >= known.size()) {
    known.resize(size_t{index} + 1, 0);
    table.resize(size_t{index} + 1);
  }
  if (!known[index]) {
    for (uint32_t p = 0; p < paths_.size(); ++p)
      if (!paths_[p].every_strand && paths_[p].by_fragment == fragments && paths_[p].has(index))
        table[index].push_back(p);
    known[index] = 1;
  }
  return table[index];
}

StreamScaledSpans::Strand StreamScaledSpans::slot() {
  if (!free_.empty()) {
    const Strand s = free_.back();
    free_.pop_back();
    return s;
  }
  live_.resize((size_t{slots_} + 1) * paths_.size(), 0);
  return slots_++;
}

StreamScaledSpans::Strand StreamScaledSpans::strand(uint64_t, uint64_t span_weight, uint32_t site,
                                                    const Strand* preds, uint32_t pred_count,
                                                    const Instance*, uint32_t, uint64_t iterations,
                                                    uint32_t fragment, uint64_t) {
  std::fill(scratch_.begin(), scratch_.end(), 0);
  for (uint32_t k = 0; k < pred_count; ++k) {
    const uint64_t* d = distances(preds[k]);
    for (size_t p = 0; p < scratch_.size(); ++p) scratch_[p] = std::max(scratch_[p], d[p]);
  }
  const Strand s = slot();
  uint64_t* me = distances(s);
  const uint64_t plain = iteration_span(span_weight, iterations);
  for (size_t p = 0; p < scratch_.size(); ++p) me[p] = scratch_[p] + plain;
  auto rescale = [&](const std::vector<uint32_t>& which) {
    for (uint32_t p : which)
      me[p] =
          scratch_[p] +
          iteration_span(scale_amount(span_weight, paths_[p].base, paths_[p].other), iterations);
  };
  rescale(all_);
  rescale(members(site, false));
  rescale(members(fragment, true));
  for (size_t p = 0; p < scratch_.size(); ++p) best_[p] = std::max(best_[p], me[p]);
  return s;
}

StreamScaledSpans::Strand StreamScaledSpans::open_join() {
  const Strand j = slot();
  std::fill_n(distances(j), paths_.size(), 0);
  return j;
}

void StreamScaledSpans::fold(Strand join, Strand pred) {
  uint64_t* into = distances(join);
  const uint64_t* from = distances(pred);
  for (size_t p = 0; p < paths_.size(); ++p) into[p] = std::max(into[p], from[p]);
}

void StreamScaledSpans::release(Strand s) { free_.push_back(s); }

std::vector<StreamScaledSpans::Rescaled> rescaled_paths(
    const std::vector<ScaledSpan>& requests, const DiffFigures& other,
    const std::vector<uint32_t>& fragment_group) {
  std::vector<StreamScaledSpans::Rescaled> paths;
  for (const ScaledSpan& r : requests) {
    StreamScaledSpans::Rescaled p;
    p.every_strand = r.kind == DiffUnitKind::Program;
    p.by_fragment = r.kind == DiffUnitKind::Fragment;
    p.base = r.base;
    p.other = r.other;
    if (!p.every_strand) {
      const std::vector<uint32_t>& ids =
          p.by_fragment ? other.fragments[r.unit].ids : other.sites[r.unit].ids;
      const std::vector<uint32_t>* group = p.by_fragment ? &fragment_group : nullptr;
      p.has = [ids, group](uint32_t x) {
        if (group) x = x < group->size() ? (*group)[x] : model::kNone;
        return std::find(ids.begin(), ids.end(), x) != ids.end();
      };
    }
    paths.push_back(std::move(p));
  }
  return paths;
}

}  // namespace tasklens::analysis
