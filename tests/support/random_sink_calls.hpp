// Random calls of the builder's streaming mode into a StrandSink, for the tests of the sinks that
// pass calls on (model::SinkThread, model::TeeSink). Header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "model/strand_sink.hpp"

namespace tasklens::fixtures {

// A random DAG of strands inside nested instances, with joins, played into `sink`; strands are
// released once no later strand takes them, so that handles are reused.
inline void play_random_calls(model::StrandSink& sink, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint32_t n = 1 + static_cast<uint32_t>(rng() % 300);
  std::vector<model::StrandSink::Strand> handle(n);
  std::vector<uint32_t> last_use(n, 0);
  std::vector<std::vector<uint32_t>> preds(n);
  for (uint32_t s = 1; s < n; ++s)
    for (uint32_t k = 0, count = static_cast<uint32_t>(rng() % 4); k < count; ++k) {
      const uint32_t p = s - 1 - static_cast<uint32_t>(rng() % std::min<uint32_t>(s, 8));
      preds[s].push_back(p);
      last_use[p] = s;
    }
  const model::StrandSink::Instance outer = sink.open_instance(0);
  model::StrandSink::Instance inner = sink.open_instance(1);
  for (uint32_t s = 0; s < n; ++s) {
    if (rng() % 10 == 0) {  // a new inner instance, sometimes inside one of its own site
      sink.close_instance(inner);
      inner = sink.open_instance(1 + static_cast<uint32_t>(rng() % 2));
      if (rng() % 3 == 0) sink.not_outermost(inner);
    }
    std::vector<model::StrandSink::Strand> listed;
    for (uint32_t p : preds[s]) listed.push_back(handle[p]);
    model::StrandSink::Strand join = 0;
    const bool joined = listed.size() >= 2 && rng() % 2;
    if (joined) {
      join = sink.open_join();
      sink.fold(join, listed[0]);
      sink.fold(join, listed[1]);
      listed.erase(listed.begin(), listed.begin() + 2);
      listed.push_back(join);
    }
    const model::StrandSink::Instance around[] = {outer, inner};
    handle[s] = sink.strand(rng() % 100, rng() % 100, static_cast<uint32_t>(rng() % 3),
                            listed.data(), static_cast<uint32_t>(listed.size()), around, 2,
                            1 + rng() % 3, static_cast<uint32_t>(rng() % 5), rng() % 1000);
    if (joined) sink.release(join);
    for (uint32_t p : preds[s])
      if (last_use[p] == s) {
        sink.release(handle[p]);
        last_use[p] = 0;
      }
    if (last_use[s] == 0 && rng() % 2) sink.release(handle[s]);  // (a sink, now or never)
  }
  sink.close_instance(inner);
  sink.close_instance(outer);
}

}  // namespace tasklens::fixtures
