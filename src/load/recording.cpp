#include "load/recording.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "analysis/algebra.hpp"
#include "analysis/profile.hpp"
#include "analysis/stream_profile.hpp"
#include "analysis/stream_robust.hpp"
#include "errors.hpp"
#include "load/clipping_cache.hpp"
#include "load/progress.hpp"
#include "load/sink_spool.hpp"
#include "load/timings.hpp"
#include "model/builder.hpp"
#include "model/tee_sink.hpp"
#include "platform/platform.hpp"
#include "report/printable.hpp"

namespace tasklens::load {
namespace {

// The least a reader holds per task and per event byte, below what bench/run.sh measures on the
// shapes of docs/benchmarks.md, so that the check refuses only what cannot fit.
constexpr uint64_t kBytesPerTask = 360;
constexpr uint64_t kBytesPerEventByte = 12;

// Without the wrappers a oneTBB algorithm's subranges are invisible (no chunk events).
bool is_tbb_algorithm(model::SiteKind k) {
  return k == model::SiteKind::ParallelFor || k == model::SiteKind::ParallelReduce ||
         k == model::SiteKind::ParallelSort || k == model::SiteKind::TbbAlgorithm;
}
constexpr const char* kTbbWithoutWrappers =
    "oneTBB algorithms were recorded without include/tasklens/tbb.h: the subranges one task ran "
    "count as one strand, so a loop's parallelism is at most its number of tasks (the wrappers "
    "give the logical one)";

std::string gib(uint64_t bytes) {
  // (A tenth under 10 MiB: a need of 1.6 MiB against a limit of 2 read as "2 MiB and 2 MiB".)
  if (bytes < (10ull << 20)) return fmt::format("{:.1f} MiB", double(bytes) / (1ull << 20));
  if (bytes < (1ull << 30)) return fmt::format("{:.0f} MiB", double(bytes) / (1ull << 20));
  return fmt::format("{:.1f} GiB", double(bytes) / (1ull << 30));
}

// The least a reader's model of a trace needs (a lower bound from its task count, or from its
// event bytes when the recording did not finish): a trace below it may still not fit.
uint64_t model_bytes_at_least(uint64_t tasks, uint64_t event_bytes) {
  return std::max(tasks * kBytesPerTask, event_bytes * kBytesPerEventByte);
}

// The build's options of every reader command (model_settings), with a progress line that counts
// the events, then says `then`.
model::BuildOptions build_options(const std::string& then) {
  model::BuildOptions options;
  options.blocked_as_work = model_settings().blocked_as_work;
  options.keep_slow_faults = model_settings().keep_slow_faults;
  options.keep_runtime_cost = model_settings().keep_runtime_cost;
  options.progress = [then](uint64_t done, uint64_t total) {
    if (done < total)
      Progress::global().amount(done, total, "events");
    else
      Progress::global().phase(then);
  };
  return options;
}

}  // namespace

void check_model_fits(const trace::TraceFile& trace, const std::string& path) {
  uint64_t event_bytes = 0;
  for (uint32_t i = 0; i < trace.stream_count(); ++i) event_bytes += trace.stream_bytes(i);
  check_model_fits(trace.has_finish() ? trace.finish().tasks_created : 0, event_bytes, path);
}

void check_model_fits(uint64_t tasks, uint64_t event_bytes, const std::string& path) {
  const std::optional<platform::MemoryBudget> budget = platform::memory_budget();
  if (!budget) return;
  const uint64_t need = model_bytes_at_least(tasks, event_bytes);
  if (need <= budget->bytes) return;
  throw OutOfMemoryError(fmt::format(
      "{}: reading this trace needs at least {}{} and {} is {}; read it on a machine with more "
      "memory, or record a shorter run (a smaller input, or a cut-off: fewer tasks); every "
      "command but `tasklens export --format json|csv` reads such a recording in one pass or in "
      "passes by itself (report, whatif, advise, tasks, sched, predict, diff, view, export's "
      "timeline with --window)",
      path, gib(need),
      tasks ? fmt::format(" ({} tasks, about {} bytes each)", tasks, kBytesPerTask) : "",
      budget->source, gib(budget->bytes)));
}

void check_models_fit_together(const std::vector<std::string>& paths) {
  const std::optional<platform::MemoryBudget> budget = platform::memory_budget();
  if (!budget || paths.size() < 2) return;
  uint64_t need = 0;
  std::vector<std::string> each, names;
  for (const std::string& path : paths) {
    std::error_code not_regular;
    if (!std::filesystem::is_regular_file(path, not_regular)) continue;
    const trace::TraceFile::Scan scan = trace::TraceFile::scan(path);
    const uint64_t one =
        model_bytes_at_least(scan.has_finish ? scan.tasks_created : 0, scan.event_bytes);
    need += one;
    each.push_back(gib(one));
    names.push_back(path);
  }
  if (need <= budget->bytes || names.size() < 2) return;
  std::string who, parts;
  for (size_t i = 0; i < names.size(); ++i) {
    who += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    parts += (i == 0 ? "" : " + ") + each[i];
  }
  throw OutOfMemoryError(fmt::format(
      "{}: reading them together needs at least {} ({}) and {} is {}; compare them on a machine "
      "with more memory, or record shorter runs (a smaller input, or a cut-off: fewer tasks)",
      who, gib(need), parts, budget->source, gib(budget->bytes)));
}

ModelSettings& model_settings() {
  static ModelSettings settings;
  return settings;
}

SpanMode span_mode(bool raw_span) { return raw_span ? SpanMode::Raw : SpanMode::Robust; }

report::RunInfo run_info_of(const Loaded& l) {
  report::RunInfo info = report::run_info(*l.trace);
  info.span_mode = l.robust ? "robust" : "raw";
  return info;
}

void add_clipping_warning(model::Model& model, const analysis::Clipping& clipping) {
  const size_t n = clipping.strands.size();
  if (n == 0) return;
  model.warnings.push_back(fmt::format(
      "{} strand{} held far more work than the rest of {} code fragment (over 20 times "
      "the fragment's 99th percentile, or 5 times while another thread's strand was "
      "stretched too: a paused machine, page faults, interrupts): counted at the "
      "fragment's median, {} of work in all, so that one disturbance does not decide the "
      "critical path (--raw-span counts {} as measured)",
      n, n == 1 ? "" : "s", n == 1 ? "its" : "their",
      report::format_work(model, clipping.clipped_work), n == 1 ? "it" : "them"));
}

Loaded load(const std::string& path, SpanMode mode) {
  Loaded l;
  Timings& timings = Timings::global();
  Progress& progress = Progress::global();
  const std::string name = std::filesystem::path(path).filename().string();
  progress.phase("opening " + name);
  // From the record headers first: a trace too large for the memory is refused before it is read.
  // (A regular file only: a pipe cannot be scanned, and opening a FIFO would wait for a writer.)
  std::error_code not_regular;
  const bool scannable = std::filesystem::is_regular_file(path, not_regular);
  if (scannable) {
    const trace::TraceFile::Scan scan = trace::TraceFile::scan(path);
    check_model_fits(scan.has_finish ? scan.tasks_created : 0, scan.event_bytes, path);
  }
  l.trace = std::make_unique<trace::TraceFile>(trace::TraceFile::open(path));
  if (!scannable) check_model_fits(*l.trace, path);  // before the out-of-memory killer would
  timings.lap("open");
  progress.phase("reading " + name);
  model::BuildOptions options = build_options("building the DAG of " + name);
  options.huge_pages = platform::big_blocks_in_huge_pages();
  l.model = model::build_model(*l.trace, options);
  timings.lap("model");
  progress.phase("naming the code of " + name);
  l.labels = report::label_sites(l.model, l.trace->modules());
  report::merge_sites_by_location(l.model, l.labels);
  // (The nodes are walked only when a site is such an algorithm's: there are millions.)
  auto tbb_algorithm = is_tbb_algorithm;
  bool tbb_algorithms = false, tbb_chunks = false;
  const bool any_tbb_algorithm =
      std::any_of(l.model.sites.begin(), l.model.sites.end(),
                  [&](const model::Site& s) { return tbb_algorithm(s.kind); });
  const size_t walked = any_tbb_algorithm ? l.model.nodes.size() : 0;
  for (size_t v = 0; v < walked; ++v) {
    const model::Node& n = l.model.nodes[v];
    if (n.kind == model::NodeKind::Chunk && n.parent != model::kNone &&
        l.model.nodes[n.parent].kind == model::NodeKind::Task)
      tbb_chunks = true;
    if (n.site == model::kNone || n.site >= l.model.sites.size()) continue;
    tbb_algorithms |= tbb_algorithm(l.model.sites[n.site].kind);
  }
  if (tbb_algorithms && !tbb_chunks) l.model.warnings.push_back(kTbbWithoutWrappers);
  if (size_t n = report::attribute_library_sites(l.model, l.labels))
    l.model.warnings.push_back(report::library_sites_warning(n));
  // Region names are the program's text: shown (and selected with --region) as printable.
  for (std::string& name : l.model.region_names) name = report::printable(name);
  timings.lap("symbols");
  if (mode == SpanMode::Robust) {
    progress.phase("looking for disturbed strands in " + name);
    l.clipping = analysis::clip_outliers(l.model);
    l.robust = l.clipping.tested;
    add_clipping_warning(l.model, l.clipping);
    timings.lap("robust");
  }
  progress.phase("analysing " + name);
  return l;
}

Streamed read_in_one_pass(const std::string& path, const std::string& reading,
                          const SinkMaker& make_sink, uint64_t sink_bytes,
                          uint64_t sink_bytes_per_strand, uint64_t sink_strands_cap,
                          model::ChunkTap* sink_tap) {
  // What the passes before this one freed goes back to the system first, so that a reading in
  // passes peaks at its largest pass, not at their sum (platform.hpp).
  platform::give_back_freed_memory();
  Streamed st;
  Timings& timings = Timings::global();
  Progress& progress = Progress::global();
  const std::string name = std::filesystem::path(path).filename().string();
  progress.phase("opening " + name);
  // The trace's events stay in the file (read block by block as they are decoded; the rest of
  // the file is parsed through a window of 8 MB), and the critical path's log keeps a block of
  // up to a million strands (16 bytes each; about 3 strands per task): that much must fit,
  // whatever the rest.
  std::error_code not_regular;
  if (std::filesystem::is_regular_file(path, not_regular)) {
    const std::optional<platform::MemoryBudget> budget = platform::memory_budget();
    const trace::TraceFile::Scan scan = trace::TraceFile::scan(path);
    const uint64_t strands = scan.has_finish ? 3 * scan.tasks_created : uint64_t{1} << 20;
    const uint64_t need =
        std::min<uint64_t>(std::filesystem::file_size(path, not_regular), uint64_t{8} << 20) +
        16 * std::min<uint64_t>(strands, uint64_t{1} << 20) + sink_bytes +
        sink_bytes_per_strand * std::min(strands, sink_strands_cap);
    if (budget && need > budget->bytes)
      throw OutOfMemoryError(fmt::format(
          "{}: reading this trace even in one pass needs at least {} and {} is {}; read it on a "
          "machine with more memory, or record a shorter run",
          path, gib(need), budget->source, gib(budget->bytes)));
  }
  st.trace =
      std::make_unique<trace::TraceFile>(trace::TraceFile::open(path, /*events_in_memory=*/false));
  timings.lap("open");
  progress.phase("reading " + name + " in one pass");
  report::SitesAsTheyCome sites(*st.trace);
  model::StrandSink& sink = make_sink(sites, *st.trace);
  model::BuildOptions options = build_options(reading + " " + name);
  options.sink_tap = sink_tap;
  options.place_site = [&sites](const model::Site& site, uint32_t index, uint32_t enclosing) {
    return sites.place(site, index, enclosing);
  };
  options.place_fragment = [&sites](const model::Fragment& fragment, uint32_t index,
                                    uint32_t site) { sites.place_fragment(fragment, index, site); };
  options.folds_into_enclosing = [&sites](uint32_t site, bool outer_is_program) {
    return sites.folds_into_enclosing(site, outer_is_program);
  };
  try {
    st.model = model::build_streaming(*st.trace, sink, options);
  } catch (const analysis::ClippingSink::NotReadAlike& e) {
    // (a pass through the robust span's clipping met other strands than the census's pass; a
    // kept decision goes too, so that reading it again decides again)
    forget_clipping(path);
    throw UsageError(fmt::format("{}: {}; read it again", path, e.what()));
  }
  if (!st.model.one_pass.tbb_chunks &&
      std::any_of(st.model.sites.begin(), st.model.sites.end(),
                  [](const model::Site& s) { return is_tbb_algorithm(s.kind); }))
    st.model.warnings.push_back(kTbbWithoutWrappers);
  if (size_t n = sites.folded_sites())
    st.model.warnings.push_back(report::library_sites_warning(n));
  timings.lap("model");
  st.labels = sites.labels();
  st.labels.resize(st.model.sites.size());
  st.fragment_labels = sites.fragment_labels();
  st.fragment_labels.resize(st.model.fragments.size());
  st.fragment_functions = sites.fragment_functions();
  st.fragment_functions.resize(st.model.fragments.size());
  for (std::string& n : st.model.region_names) n = report::printable(n);
  return st;
}

void check_read_alike(const Streamed& first, const Streamed& again) {
  const bool same_sites = first.labels.size() == again.labels.size() &&
                          std::equal(first.labels.begin(), first.labels.end(), again.labels.begin(),
                                     [](const report::SiteLabel& a, const report::SiteLabel& b) {
                                       return a.site == b.site;
                                     });
  if (!same_sites || first.fragment_labels != again.fragment_labels)
    throw UsageError((again.trace ? again.trace->path() : std::string("the recording")) +
                     ": the recording changed between two of its passes (other sites or code "
                     "fragments); read it again once nothing writes to the file");
}

namespace {

// The robust rule's floor from the trace alone, before its model is built: the metric's facts
// as model::build_streaming gives them. (Were it not the model's, the census could not decide
// by itself and decide_clipping would take the refining pass: still exact.)
uint64_t outlier_floor_of(const trace::TraceFile& trace) {
  model::Model facts;
  facts.metric = model::metric_of(trace);
  facts.metric_is_time = trace::is_time(trace.metric());
  facts.tsc_per_second = trace.tsc_hz();
  facts.ticks_per_second = trace.metric() == trace::Metric::Tsc         ? trace.tsc_hz()
                           : trace.metric() == trace::Metric::TaskClock ? 1e9
                                                                        : 0;
  return analysis::outlier_floor(facts, analysis::OutlierRule{}.floor_seconds);
}

// The census's decision on `st` (the reading it was taken beside): st's clipping, its clipped
// strands' fragments and `robust` set, after one more pass when the census cannot decide.
void decide_clipping(const std::string& path, const analysis::OutlierCensus& census, Streamed& st) {
  const analysis::OutlierRule rule;
  const uint64_t floor = analysis::outlier_floor(st.model, rule.floor_seconds);
  if (floor == 0) return;  // a metric the rule does not judge
  st.robust = true;
  st.clipping.tested = true;
  st.clipping.floor = floor;
  std::vector<analysis::FragmentMeasure> plan = census.plan(floor, rule);
  if (plan.empty()) return;  // no strand above the floor: nothing to clip
  std::optional<analysis::OutlierDecision> decided = census.decide(floor, rule);
  if (!decided) {
    analysis::OutlierRefine refine(std::move(plan), floor, rule);
    {  // (its trace and model gone before the next pass)
      const Streamed again = read_in_one_pass(
          path, "looking for disturbed strands in",
          [&refine](const report::SitesAsTheyCome&, const trace::TraceFile&) -> model::StrandSink& {
            return refine;
          });
      check_read_alike(st, again);
    }
    decided = refine.decide();
  }
  st.clipping = std::move(decided->clipping);
  st.clipped_fragments = std::move(decided->fragments);
  Timings::global().lap("robust");
}

// `make_sink`'s pass with `clipping`'s strands clipped (through a ClippingSink; a plain pass when
// none is). With `matched`: set to false, and the result not to be used, when the clipped strands
// were not this recording's (a kept decision that does not match it).
Streamed read_clipped(const std::string& path, const std::string& reading,
                      const SinkMaker& make_sink, const analysis::Clipping& clipping,
                      const std::vector<uint32_t>& fragments, bool* matched = nullptr) {
  std::optional<analysis::ClippingSink> clipped;
  const SinkMaker through = [&](const report::SitesAsTheyCome& sites,
                                const trace::TraceFile& trace) -> model::StrandSink& {
    model::StrandSink& sink = make_sink(sites, trace);
    if (clipping.strands.empty()) return sink;
    return clipped.emplace(sink, clipping, fragments);
  };
  if (!matched) return read_in_one_pass(path, reading, through);
  try {
    Streamed st = read_in_one_pass(path, reading, through);
    *matched = !clipped || clipped->met_every_clipped_strand();
    return st;
  } catch (const UsageError&) {
    if (!clipped || !clipped->met_another_strand()) throw;
    *matched = false;
    return {};
  }
}

// The decision kept for `path`, when there is one (and it has the figures as measured if
// `need_measured`).
std::optional<CachedClipping> kept_clipping(const std::string& path, bool need_measured) {
  std::optional<CachedClipping> kept = cached_clipping(path);
  if (kept && need_measured && !kept->has_measured) return std::nullopt;
  return kept;
}

void keep(const std::string& path, const analysis::Clipping& clipping,
          const std::vector<uint32_t>& fragments, bool robust,
          const analysis::SpanFigures* measured = nullptr) {
  CachedClipping c;
  c.clipping = clipping;
  c.fragments = fragments;
  c.robust = robust;
  if (measured) {
    c.has_measured = true;
    c.measured = *measured;
  }
  keep_clipping(path, c);
}

}  // namespace

StreamClipping clipping_in_passes(const std::string& path, SpanMode mode, bool measure_profile) {
  StreamClipping c;
  if (mode != SpanMode::Robust) return c;
  if (std::optional<CachedClipping> kept = kept_clipping(path, measure_profile)) {
    // (The caller's passes check each clipped strand: one that does not match drops the entry.)
    c.clipping = std::move(kept->clipping);
    c.fragments = std::move(kept->fragments);
    c.robust = kept->robust;
    c.measured = kept->measured;
    Timings::global().lap("robust (kept)");
    return c;
  }
  std::optional<analysis::OutlierCensus> census;
  std::optional<analysis::StreamProfile> profile;
  std::optional<model::TeeSink> both;
  Streamed st = read_in_one_pass(
      path, "looking for disturbed strands in",
      [&](const report::SitesAsTheyCome&, const trace::TraceFile& trace) -> model::StrandSink& {
        census.emplace(outlier_floor_of(trace));
        if (!measure_profile) return *census;
        profile.emplace(analysis::StreamProfile::kSitesAsTheyCome);
        return both.emplace(std::vector<model::StrandSink*>{&*census, &*profile});
      });
  both.reset();
  if (profile) {
    const analysis::Profile raw = profile->finish(false);
    c.measured = {raw.work, raw.span, raw.parallelism};
    profile.reset();
  }
  decide_clipping(path, *census, st);
  keep(path, st.clipping, st.clipped_fragments, st.robust, measure_profile ? &c.measured : nullptr);
  c.clipping = std::move(st.clipping);
  c.fragments = std::move(st.clipped_fragments);
  c.robust = st.robust;
  return c;
}

Streamed read_with_robust_span(const std::string& path, const std::string& reading, SpanMode mode,
                               const SinkMaker& make_sink, bool need_measured, bool replayable) {
  if (mode == SpanMode::Robust)
    if (std::optional<CachedClipping> kept = kept_clipping(path, need_measured)) {
      bool matched = true;
      Streamed st =
          read_clipped(path, reading, make_sink, kept->clipping, kept->fragments, &matched);
      if (matched) {
        st.clipping = std::move(kept->clipping);
        st.clipped_fragments = std::move(kept->fragments);
        st.robust = kept->robust;
        st.measured = kept->measured;
        st.clipping_kept = true;
        Timings::global().lap("robust (kept)");
        add_clipping_warning(st.model, st.clipping);
        return st;
      }
      forget_clipping(path);  // not this recording's: decided again below
    }
  std::optional<analysis::OutlierCensus> census;
  std::optional<model::TeeSink> both;
  // (Only a pass that may need another: the robust span's.)
  std::optional<SinkSpool> spool;
  if (replayable && mode == SpanMode::Robust) spool.emplace();
  Streamed st = read_in_one_pass(
      path, reading,
      [&](const report::SitesAsTheyCome& sites,
          const trace::TraceFile& trace) -> model::StrandSink& {
        model::StrandSink& sink = make_sink(sites, trace);
        if (mode != SpanMode::Robust) return sink;
        if (spool) spool->keep_for(sink);
        census.emplace(outlier_floor_of(trace));
        both.emplace(std::vector<model::StrandSink*>{&sink, &*census});
        return *both;
      },
      0, 0, 0, spool ? &*spool : nullptr);
  both.reset();
  if (mode != SpanMode::Robust) return st;
  decide_clipping(path, *census, st);
  keep(path, st.clipping, st.clipped_fragments, st.robust);
  if (!st.clipping.strands.empty() && spool && spool->complete()) {
    // The first pass's calls again, with the strands clipped: the same strands in the same
    // order, so the same reading as a pass over the trace, for the sink's share of its time.
    Progress::global().phase("finding the critical path again");
    report::SitesAsTheyCome sites(*st.trace);
    analysis::ClippingSink clipped(make_sink(sites, *st.trace), st.clipping, st.clipped_fragments);
    spool->replay(clipped);
    spool.reset();
    st.robust = true;
    Timings::global().lap("robust (replayed)");
  } else if (!st.clipping.strands.empty()) {
    // The caller's pass again, with the strands clipped (`st` then this pass's reading).
    Streamed last = read_clipped(path, reading, make_sink, st.clipping, st.clipped_fragments);
    check_read_alike(st, last);
    last.clipping = std::move(st.clipping);
    last.clipped_fragments = std::move(st.clipped_fragments);
    last.robust = true;
    st = std::move(last);
  }
  add_clipping_warning(st.model, st.clipping);
  return st;
}

Streamed load_streaming(const std::string& path, SpanMode mode) {
  // (A fresh profile for each pass that gives one; the first's figures are the ones as measured.)
  std::optional<analysis::StreamProfile> profile;
  analysis::SpanFigures measured;
  Streamed st = read_with_robust_span(
      path, "finding the critical path of", mode,
      [&](const report::SitesAsTheyCome&, const trace::TraceFile&) -> model::StrandSink& {
        if (profile) {
          const analysis::Profile as_measured = profile->finish(false);
          measured = {as_measured.work, as_measured.span, as_measured.parallelism};
        }
        profile.emplace(analysis::StreamProfile::kSitesAsTheyCome);
        return *profile;
      },
      /*need_measured=*/true, /*replayable=*/true);
  st.profile = profile->finish(false);
  if (st.clipping.strands.empty())
    st.measured = {st.profile.work, st.profile.span, st.profile.parallelism};
  else if (!st.clipping_kept)
    st.measured = measured;
  // (Kept with the figures as measured, which the next `report --stream` shows without the
  // first pass that gave them.)
  if (st.robust && !st.clipping_kept)
    keep(path, st.clipping, st.clipped_fragments, st.robust, &st.measured);
  Timings::global().lap("profile");
  st.model.warnings.push_back(
      st.robust ? "read in passes (--stream, or its DAG does not fit in the memory): the profile "
                  "without the diagnosis or the serial code's fragments"
                : "read in one pass (--stream, or its DAG does not fit in the memory): the profile "
                  "as measured, without the robust span, the diagnosis or the serial code's "
                  "fragments");
  Progress::global().phase("analysing " + std::filesystem::path(path).filename().string());
  return st;
}

report::SpanAccount span_account(const Loaded& l, const analysis::Profile& p,
                                 std::future<uint64_t>* measured_span) {
  report::SpanAccount a;
  a.clipping = &l.clipping;
  a.measured = {p.work, p.span, p.parallelism};
  // Blocked time of the critical path's strands, per fragment (few strands block).
  if (!l.model.blocked_work.empty()) {
    std::map<uint32_t, uint64_t> by_fragment;
    for (uint32_t s : p.critical_path) {
      auto it = std::lower_bound(
          l.model.blocked_work.begin(), l.model.blocked_work.end(), s,
          [](const model::StrandBlocked& b, uint32_t strand) { return b.strand < strand; });
      if (it != l.model.blocked_work.end() && it->strand == s)
        by_fragment[l.model.strands[s].fragment] += it->ticks;
    }
    std::vector<std::pair<uint64_t, uint32_t>> order;
    for (auto [fragment, ticks] : by_fragment) order.emplace_back(ticks, fragment);
    std::sort(order.rbegin(), order.rend());
    std::vector<uint32_t> fragments;
    for (auto [ticks, fragment] : order) fragments.push_back(fragment);
    const std::vector<std::string> names =
        report::label_some_fragments(l.model, l.trace->modules(), fragments);
    for (size_t i = 0; i < order.size(); ++i)
      a.blocked_critical.push_back({i < names.size() ? names[i] : std::string(), order[i].first});
  }
  if (l.clipping.strands.empty()) return a;
  a.measured.work = p.work + l.clipping.clipped_work;
  a.measured.span =
      measured_span ? measured_span->get() : analysis::measured_span(l.model, l.clipping);
  a.measured.parallelism = analysis::parallelism_of(a.measured.work, a.measured.span);
  std::vector<uint32_t> fragments;
  for (const analysis::ClippedStrand& c : l.clipping.strands)
    fragments.push_back(l.model.strands[c.strand].fragment);
  a.fragments = report::label_some_fragments(l.model, l.trace->modules(), fragments);
  return a;
}

analysis::DiffInput diff_input(const Loaded& l, const report::FragmentLabels& fragments) {
  analysis::DiffInput in;
  in.model = &l.model;
  for (const report::SiteLabel& label : l.labels) in.site_names.push_back(label.site);
  in.fragment_group = fragments.group_of;
  in.fragment_names = fragments.label;
  return in;
}

Diagnosed diagnosis_inputs(const Loaded& l, bool full) {
  Diagnosed d;
  d.fragments = report::label_fragments(l.model, l.trace->modules(), l.labels);
  const analysis::TaskOptions options = analysis::default_task_options(l.model, l.trace->tsc_hz());
  d.tiny_size = options.tiny_size;
  d.task_sizes = analysis::task_sizes(l.model, options.tiny_size);
  if (full) {
    d.tasks = analysis::compute_tasks(l.model, options);
    d.schedule = analysis::compute_schedule(l.model);
  }
  return d;
}

std::vector<analysis::DiagnosisFinding> diagnose(const Loaded& l, const analysis::Profile& p,
                                                 const report::SpanAccount& account,
                                                 const Diagnosed& d, const analysis::Diff* base) {
  analysis::DiagnosisInput in;
  in.model = &l.model;
  in.profile = &p;
  in.target = analysis::parallelism_target(l.model);
  in.fragment_group = &d.fragments.group_of;
  in.fragment_groups = static_cast<uint32_t>(d.fragments.label.size());
  in.clipping = account.clipping;
  in.measured = account.measured;
  in.task_sizes = &d.task_sizes;
  in.tiny_size = d.tiny_size;
  in.schedule = d.schedule.timestamps ? &d.schedule : nullptr;
  in.base = base;
  return analysis::diagnose(in);
}

}  // namespace tasklens::load
