// `sched --stream`'s sort of the schedule's events on disk (src/analysis/stream_sched.hpp's
// SchedEventSort) on synthetic events shaped like a pass's: strands of 2 threads in the order a
// one-pass reading hands them over (near their start times, some held back a while), each with
// a start, an end and, for a third of them, a ready time before its start. It times the push
// (the runs sorted and written) and the merge, alone and feeding the sweep, and checks that the
// merge's order is right. A billion-task recording makes thousands of runs: the run size is the
// knob that makes as many here from fewer events.
//
// Usage: sched_merge [EVENTS_MILLIONS [RUN_EVENTS [BLOCK_EVENTS]]]
//   (defaults: 60 M events in runs of 2^14: about 3,700 runs, as fib 43 makes with runs of 2^21)
#include <cstdio>
#include <cstdlib>
#include <random>

#include "analysis/sched.hpp"
#include "analysis/stream_sched.hpp"
#include "seconds.hpp"

namespace {

using namespace tasklens;

// Pushes `events` events or a few more; returns the number pushed.
uint64_t push_events(analysis::SchedEventSort& sort, uint64_t events) {
  std::mt19937_64 rng(42);
  std::exponential_distribution<double> length(1.0 / 400.0);  // ticks
  uint64_t clock[2] = {1000, 1000};
  uint64_t pushed = 0;
  while (pushed < events) {
    const uint32_t thread = static_cast<uint32_t>(rng() & 1);
    const uint64_t start = clock[thread] + rng() % 64;
    const uint64_t end = start + 1 + static_cast<uint64_t>(length(rng));
    clock[thread] = end;
    // Held back: a strand handed over late (a loop's first chunk, a join's) pushes its events
    // after later ones.
    const bool ready = rng() % 3 == 0;
    sort.push({start, thread | (ready ? analysis::SchedEvent::kHadReady : 0u),
               analysis::SchedEvent::kStart});
    sort.push({end, thread, analysis::SchedEvent::kEnd});
    pushed += 2;
    if (ready) {
      sort.push({start - std::min<uint64_t>(start - 1000, rng() % 5000), 0,
                 analysis::SchedEvent::kReady});
      ++pushed;
    }
  }
  return pushed;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t events = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 60) * 1000000;
  const size_t run = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : size_t{1} << 14;
  const size_t block = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : size_t{1} << 11;
  if (events == 0 || run == 0 || block == 0) {
    std::fprintf(stderr, "usage: sched_merge [EVENTS_MILLIONS [RUN_EVENTS [BLOCK_EVENTS]]]\n");
    return 2;
  }
  std::printf("%12s %9s %7s %12s %14s %14s %12s\n", "events", "run", "runs", "push ns/ev",
              "merge ns/ev", "+sweep ns/ev", "disk B/ev");
  double merge_alone = 0, with_sweep = 0, push = 0;
  uint64_t pushed = 0, disk = 0;
  size_t runs = 0;
  for (int pass = 0; pass < 2; ++pass) {
    analysis::SchedEventSort sort(run, block);
    const double t0 = bench::seconds();
    pushed = push_events(sort, events);
    const double t1 = bench::seconds();
    uint64_t count = 0, last = 0;
    bool ordered = true;
    if (pass == 0) {
      sort.drain([&](const analysis::SchedEvent& e) {
        ordered &= e.time >= last;
        last = e.time;
        ++count;
      });
      merge_alone = (bench::seconds() - t1) / static_cast<double>(pushed) * 1e9;
    } else {
      analysis::Schedule out;
      out.per_worker.resize(2);
      out.per_worker[1].thread = 1;
      out.workers = 2;
      out.first = 1000;
      out.last = ~uint64_t{0} >> 2;
      analysis::Downsampler sampled(out.first, out.last, 1000);
      analysis::ScheduleSweep sweep(out, [&](const analysis::SchedStep& s) { sampled.step(s); });
      sort.drain([&](const analysis::SchedEvent& e) {
        ordered &= e.time >= last;
        last = e.time;
        ++count;
        sweep.add(e);
      });
      sweep.finish();
      with_sweep = (bench::seconds() - t1) / static_cast<double>(pushed) * 1e9;
    }
    push = (t1 - t0) / static_cast<double>(pushed) * 1e9;
    runs = sort.runs();
    disk = sort.file_bytes();
    if (!ordered || count != pushed) {
      std::fprintf(stderr, "sched_merge: the merge lost its order (%llu of %llu events)\n",
                   static_cast<unsigned long long>(count), static_cast<unsigned long long>(pushed));
      return 1;
    }
  }
  std::printf("%12llu %9zu %7zu %12.1f %14.1f %14.1f %12.2f\n",
              static_cast<unsigned long long>(pushed), run, runs, push, merge_alone, with_sweep,
              static_cast<double>(disk) / static_cast<double>(pushed));
  return 0;
}
