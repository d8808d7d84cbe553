// tbb_primes.cpp: counting primes with load imbalance, with oneTBB's parallel_for (primes.c; the
// example of "A Case for Parallelism Profilers and Advisers with What-If Analyses": the range
// divided into 4 parts, one per core, gives 1.8x on 4 cores; expressed as many tasks, 3.8x).
//
//   usage: tbb_primes [mode=static|tasks] [N=8192] [q=512] [B=256]
//
// Counts the primes below N by trial division. Testing i costs cost(i) = 1 + floor(i/q) units,
// so the cost grows with i.
//   static: the range is split into 4 equal parts (N must be a multiple of 4), and a parallel_for
//           over the 4 parts with the static_partitioner hands them out: oneTBB splits the 4
//           parts into one chunk per thread of the arena (as OpenMP's schedule(static) does), so
//           the parts at the end of the range dominate and the parallelism is poor.
//   tasks:  the range is split into N/B blocks of B numbers (B must divide N), and a parallel_for
//           with the simple_partitioner over the blocks (grainsize 1) makes every block a chunk of
//           its own, the most expensive block first: the parallelism is high.
// Each chunk tests its numbers, then spins the total cost of its range at once.
//
// Built plain (oneTBB's parallel_for) and with -DTASKLENS_TBB_WRAPPERS (tasklens::tbb's, which
// marks every chunk): the two builds differ by the include and the namespace alias.
//
// Analytic profile (units). Let P(a, b) = sum over a <= i < b of (1 + floor(i/q)), m = N/4 and
// p_j = P(j m, (j+1) m) the cost of part j.
//   work           W = P(0, N)      (both modes)
//   static, span   S = the costliest chunk: oneTBB's static partitioner makes, of the 4 parts,
//                  with T threads (measured, oneTBB 2021.8): T = 1: one chunk, S = W;
//                  T = 2: parts {0,1} and {2,3}, S = p_2 + p_3; T = 3: {0}, {1,2}, {3},
//                  S = max(p_1 + p_2, p_3); T >= 4: a chunk per part, S = p_3. The program prints
//                  the chunks it ran and the span of those.
//   tasks, span    S = P(N - B, N)  (the last block)
//
//   defaults (N=8192, q=512, B=256):
//     p_0 = 5120, p_1 = 13312, p_2 = 21504, p_3 = 29696, W = 69632
//     static, 2 threads: S = 51200, W/S = 1.36;  4 threads: S = 29696, W/S = 2.3448
//     tasks (32 blocks): S = 4096,  W/S = 17.0
//   N=8192, q=128 (the e2e test of tasks): W = 266240, tasks: S = 16256, W/S = 16.378
//   N=8192, q=64 (primes.c's defaults): W = 528384; static, 2 threads: S = 395264, W/S = 1.3368;
//     tasks: S = 32384, W/S = 16.316
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "work.h"

#ifdef TASKLENS_TBB_WRAPPERS
#include <tasklens/tbb.h>
namespace tbbx = tasklens::tbb;
#else
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
namespace tbbx = ::tbb;
#endif

namespace {

unsigned long g_q;

unsigned long cost(unsigned long i) { return 1 + i / g_q; }

bool is_prime(unsigned long i) {
  if (i < 2) return false;
  for (unsigned long d = 2; d * d <= i; d++)
    if (i % d == 0) return false;
  return true;
}

unsigned long long range_cost(unsigned long lo, unsigned long hi) {
  unsigned long long units = 0;
  for (unsigned long i = lo; i < hi; i++) units += cost(i);
  return units;
}

// Tests lo <= i < hi, then spins the total cost of the range at once (one spin per chunk).
unsigned long test_range(unsigned long lo, unsigned long hi) {
  unsigned long count = 0;
  for (unsigned long i = lo; i < hi; i++) count += is_prime(i);
  tl_work(range_cost(lo, hi));
  return count;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "static";
  const unsigned long n = tl_arg(argc, argv, 2, 8192, "N");
  g_q = tl_arg(argc, argv, 3, 512, "q");
  const unsigned long block = tl_arg(argc, argv, 4, 256, "B");
  const bool tasks = std::strcmp(mode, "tasks") == 0;
  if ((!tasks && std::strcmp(mode, "static") != 0) || g_q == 0 || n % 4 != 0 ||
      (tasks && (block == 0 || n % block != 0))) {
    std::fprintf(stderr,
                 "%s: usage: tbb_primes [static|tasks] [N] [q] [B] (N a multiple of 4; B "
                 "divides N)\n",
                 argv[0]);
    return 2;
  }

  std::atomic<unsigned long> count{0};
  std::mutex chunks_mutex;
  std::vector<std::pair<unsigned long, unsigned long>> chunks;  // static: the parts of each chunk
  if (!tasks) {
    const unsigned long m = n / 4;
    tbbx::parallel_for(  // site: tbb-primes-static
        tbbx::blocked_range<int>(0, 4, 1),
        [&](const tbbx::blocked_range<int>& parts) {
          count += test_range(parts.begin() * m, parts.end() * m);
          std::lock_guard<std::mutex> lock(chunks_mutex);
          chunks.emplace_back(parts.begin(), parts.end());
        },
        tbbx::static_partitioner());
  } else {
    const unsigned long blocks = n / block;
    tbbx::parallel_for(  // site: tbb-primes-tasks
        tbbx::blocked_range<unsigned long>(0, blocks, 1),
        [&](const tbbx::blocked_range<unsigned long>& r) {
          for (unsigned long j = r.begin(); j != r.end(); ++j) {
            const unsigned long b = blocks - 1 - j;  // the most expensive block first
            count += test_range(b * block, (b + 1) * block);
          }
        },
        tbbx::simple_partitioner());
  }

  const unsigned long m = n / 4;
  unsigned long long part[4];
  for (int j = 0; j < 4; j++) part[j] = range_cost(j * m, (j + 1) * m);
  const unsigned long long work = range_cost(0, n);
  std::printf("%lu primes below %lu (%s)\n", count.load(), n, mode);
  if (tasks) {
    tl_print_analytic(work, range_cost(n - block, n));
  } else {
    std::sort(chunks.begin(), chunks.end());
    unsigned long long span = 0;
    std::printf("parts: %llu %llu %llu %llu; chunks:", part[0], part[1], part[2], part[3]);
    for (const auto& c : chunks) {
      std::printf(" {%lu-%lu}", c.first, c.second - 1);
      span = std::max(span, range_cost(c.first * m, c.second * m));
    }
    std::printf("; span with 2 threads %llu, with 4 threads %llu\n", part[2] + part[3], part[3]);
    tl_print_analytic(work, span);
  }
  return 0;
}
