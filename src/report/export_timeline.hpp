// The timeline `tasklens export --format perfetto` writes, before it is text: its slices (timed
// strands) and the flows between them (export_flows.hpp's rules), from the DAG in memory
// (timeline_of) or from one pass over the recording (export_stream.hpp's TimelineSink), and
// optionally only what a time window of the run holds. export_perfetto.hpp writes it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "report/export_flows.hpp"

namespace tasklens::report {

// TSC ticks -> integer ns since the origin (negative before it).
struct ExportClock {
  uint64_t origin = 0;
  double ns_per_tick = 1;
  int64_t ns(uint64_t tick) const {
    const double d = (double(tick) - double(origin)) * ns_per_tick;
    // A damaged trace's timestamps can be anywhere: keep them inside int64_t (llround of a value
    // outside it is undefined), a thousand years either way.
    constexpr double kLimit = 3.2e19 / 1000;
    if (!(d > -kLimit)) return -static_cast<int64_t>(kLimit);
    if (!(d < kLimit)) return static_cast<int64_t>(kLimit);
    return static_cast<int64_t>(std::llround(d));
  }
  // A slice's ns: [start, end] with end not before start.
  std::pair<int64_t, int64_t> slice_ns(uint64_t start, uint64_t end) const {
    const int64_t a = ns(start);
    return {a, std::max(a, ns(end))};
  }
};

// A part of the run in ns since the origin: the slices that start before `to` and end at or
// after `from` (a slice across either edge is whole in it).
struct TimeWindow {
  bool given = false;
  int64_t from = std::numeric_limits<int64_t>::min();
  int64_t to = std::numeric_limits<int64_t>::max();
  bool holds(int64_t start_ns, int64_t end_ns) const { return start_ns < to && end_ns >= from; }
};

struct TimelineSlice {
  uint64_t start = 0, end = 0;  // TSC ticks, as recorded
  uint64_t work = 0;
  uint64_t id = 0;     // args.strand: the strand's id in the DAG (or the order met: see ids_met)
  uint64_t order = 0;  // Model::strand_order: breaks ties between slices of one start and end
  uint32_t thread = 0;
  uint32_t site = 0;
  uint32_t fragment = 0;             // Strand::fragment (0: unknown)
  uint32_t instance = model::kNone;  // its node's construct instance
  uint8_t node_kind = 0;             // NodeKind of Strand::node
};

struct TimelineFlow {
  uint32_t from = 0, to = 0;  // indices into Timeline::slices
  FlowKind kind = FlowKind::Continuation;
  bool routed = false;  // through an untimed strand
};

inline constexpr uint64_t kNoStart = ~uint64_t{0};

struct Timeline {
  // The slices, in any order: a reading in one pass's own; from a DAG in memory, its timed
  // strands' ids (`dag_strands`, of `dag`), read from it when written rather than copied (a
  // copy was 64 bytes per strand beside the DAG).
  std::vector<TimelineSlice> slices;
  const model::Model* dag = nullptr;
  std::vector<uint32_t> dag_strands;
  size_t size() const { return dag ? dag_strands.size() : slices.size(); }
  TimelineSlice slice(size_t i) const;
  uint32_t thread(size_t i) const {
    return dag ? dag->strands[dag_strands[i]].thread : slices[i].thread;
  }
  uint64_t order(size_t i) const {
    if (!dag) return slices[i].order;
    const uint32_t s = dag_strands[i];
    return dag->strand_order.size() == dag->strands.size() ? dag->strand_order[s] : s;
  }

  std::vector<TimelineFlow> flows;    // at most one per pair of slices, in any order (by index)
  uint64_t strands = 0;               // the run's strands
  uint64_t timed = 0;                 // the run's timed strands (its slices, all windows)
  uint64_t continuations_hidden = 0;  // continuation edges on one worker between two slices
  uint64_t first_start = kNoStart;    // the earliest start of a timed strand in the run
  TimeWindow window;
  // The slices' ids are the order the reading met the strands in (Model::strand_order), not the
  // DAG's serial ids: a timeline read in one pass has no DAG to number them.
  bool ids_met = false;
};

// The timeline of a DAG in memory, within `window` (all of it when not given).
Timeline timeline_of(const model::Model& model, const ExportClock& clock, const TimeWindow& window);

}  // namespace tasklens::report
