// The disturbance-robust span: strands whose work is an extreme outlier for their
// own code fragment are clipped to the fragment's median before any analysis walks the critical
// path.
//
// Why: on a real machine a strand of a ~50 ns fragment sometimes holds milliseconds of "work"
// that the program never did (the virtual machine paused by its host, a page-fault storm, an
// interrupt, the recorder stalling). One such strand on the critical path decides the span, and
// the headline parallelism then changes up to 100x between recordings of the same run.
//
// The rule (docs/robust-span.md says the same for users). A strand s of fragment F (its
// Strand::fragment: the code between two runtime events, named by their code addresses) is an
// outlier when all of these hold:
//  1. F is known (not fragment 0) and has at least `min_samples` strands (200): a fragment with
//     few samples has no "typical" size to compare with;
//  2. s ran on a worker and its work is above an absolute floor, `floor_seconds` (2 us) in the
//     metric's units: a fine-grained search's span can be under 100 us, so a 2-10 us interrupt
//     on one of its 50 ns strands moved its parallelism by 20-30% with a 10 us floor;
//  3. its work is more than `factor` (20) times q, the fragment's `quantile` (p99, nearest rank)
//     computed over F's other strands. p99 rather than p99.9: with 200 samples p99.9 is the
//     largest other strand, so two disturbed strands of one fragment would hide each other; p99
//     tolerates about 1% of disturbed strands. A fragment whose strands vary widely has a large
//     p99, so its long strands stay;
//  4. or, with the lower factor `simultaneous_factor` (5) instead of 3: s overlaps in time
//     (Strand::start..end) a strand of another thread that passes 1, 2 and 4 too. A pause of the
//     whole machine stretches the strands of every running thread over the same window, so two
//     such strands at once are more surely one disturbance than a long strand by itself.
// An outlier's work becomes the median of F's strands (all of them).
//
// Metrics: the floor needs the metric's rate. Time-like metrics (tsc, task-clock) use
// Model::ticks_per_second; cycles use the TSC's rate (cycles run at about the clock's rate).
// Other counts (instructions, cache misses ...) are not clipped: a pause of the machine does not
// add to them, and no floor in their units means "too long to be real".
//
// Cost: one pass over the strands (their work and fragment) when no strand is above the floor;
// otherwise a second pass gathering the work of the fragments that have such a strand, and a
// selection (nth_element) per such fragment: O(strands) in all, plus O(k log k) for the k
// strands above 5 x their fragment's p99 (the time-overlap sweep). Large models are read on two
// threads (about 10 ns per strand).
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {

struct OutlierRule {
  uint32_t min_samples = 200;
  double quantile = 0.99;
  double factor = 20;
  double simultaneous_factor = 5;
  double floor_seconds = 2e-6;
};

struct ClippedStrand {
  // Its id in the model (Strand index); read in passes (stream_robust.hpp), the order the pass
  // handed it over in, which can pass 2^32 on a recording of a billion tasks.
  uint64_t strand = 0;
  uint32_t thread = model::kNone;  // the worker that ran it
  uint64_t begin = 0, end = 0;     // its Strand::start and Strand::end (TSC)
  uint64_t work_raw = 0;           // as measured
  uint64_t work_clipped = 0;       // its fragment's median
  uint64_t fragment_quantile = 0;  // the rule's q: p99 of the fragment's other strands
  uint32_t fragment_samples = 0;   // strands of its fragment
  bool simultaneous = false;       // overlapped in time an outlier candidate of another thread
};

struct Clipping {
  // False when the metric has no floor (a count other than cycles, or a time metric without a
  // known rate): nothing was tested, and the spans are as measured.
  bool tested = false;
  uint64_t floor = 0;                  // the absolute floor, in metric units
  std::vector<ClippedStrand> strands;  // sorted by strand id
  uint64_t clipped_work = 0;           // sum of work_raw - work_clipped
};

// The rule's absolute floor in the metric's units, or 0 when the metric has none (see above).
uint64_t outlier_floor(const model::Model& model, double seconds);

// A strand the rule looks at closely: above the floor and above the lower factor. `strong`: above
// the full factor, an outlier by itself.
struct Suspect {
  uint64_t strand;
  uint32_t thread;
  uint64_t start, end;
  bool strong;
  bool overlap = false;
};
// Sets `overlap` on each suspect that overlaps in time a suspect of another thread (sorts them
// by start, then strand).
void mark_overlaps(std::vector<Suspect>& suspects);

// The rule's quantile position: the 0-based rank, in a fragment of `size` strands sorted by
// work, whose work is q for any suspect of the fragment (see find_outliers), and the median's.
size_t quantile_rank(double quantile, size_t size);
inline size_t median_rank(size_t size) { return size / 2; }  // the upper median: a strand's work

// Applies the rule above to the model as it is (no change to it). Models of `two_threads_from`
// strands or more are read on two threads (the result is the same, which the tests check by
// passing 0).
inline constexpr uint32_t kTwoThreadsFrom = uint32_t{1} << 20;
Clipping find_outliers(const model::Model& model, const OutlierRule& rule = {},
                       uint32_t two_threads_from = kTwoThreadsFrom);

// Sets each clipped strand's work to work_clipped, and scales its user regions' work
// (Model::region_work) by the same ratio so that they still fit inside the strand.
void apply_clipping(model::Model& model, const Clipping& clipping);

// find_outliers then apply_clipping: the model every span-computing command reads by default.
Clipping clip_outliers(model::Model& model, const OutlierRule& rule = {},
                       uint32_t two_threads_from = kTwoThreadsFrom);

// Every strand's measured work: Strand::work, with the clipped strands' work_raw put back. As
// span weights (longest_path) they give the span as measured.
std::vector<uint64_t> measured_work(const model::Model& model, const Clipping& clipping);

// The longest path with every strand at its measured work (longest_path's span under
// measured_work, without the array).
uint64_t measured_span(const model::Model& model, const Clipping& clipping);

// The program's figures as measured, from a clipped model and its clipping (the robust work plus
// the clipped work; the longest path under the measured work). When nothing was clipped they are
// `work` and `span` themselves, without a second longest path.
struct SpanFigures {
  uint64_t work = 0, span = 0;
  double parallelism = 0;
};
SpanFigures measured_figures(const model::Model& model, const Clipping& clipping, uint64_t work,
                             uint64_t span);

}  // namespace tasklens::analysis
