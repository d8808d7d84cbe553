// tbb_parallel_for.cpp: a serial prologue, a oneTBB parallel_for of equal iterations in chunks of
// known size, a serial epilogue (Amdahl's law with chunks).
//
//   usage: tbb_parallel_for [N=256] [G=8] [w=200] [a=4000] [b=2000]
//
// main spins a units (the prologue: before oneTBB starts, so a profiler must count code that
// runs before the runtime's first call), then runs a parallel_for over blocked_range(0, N, G)
// with the simple_partitioner: oneTBB splits the range in halves (left half floor(size/2), right
// half the rest) until no piece is larger than G, and calls the body once per piece: a chunk.
// Each iteration costs w units (its real work, a small sum, then the chunk spins w units per
// iteration at once); then main spins b units (the epilogue).
//
// Built plain (oneTBB's parallel_for) and with -DTASKLENS_TBB_WRAPPERS (tasklens::tbb's, which
// marks every chunk): the two builds differ by the include and the namespace alias.
//
// Analytic profile (units). With N = G 2^k the chunks are exactly N/G = ceil(N/G) pieces of G
// iterations; otherwise the program computes the pieces the same way (printed: chunks, largest).
//   chunks         N / G                        (N = G 2^k)
//   work           W = a + N w + b
//   span           S = a + G w + b              (the largest chunk: G iterations for N = G 2^k)
//   parallelism    W / S = (a + N w + b) / (a + G w + b)   (-> N/G as a, b -> 0)
//
//   defaults (N=256, G=8, w=200, a=4000, b=2000): 32 chunks,
//                                                  W = 57200, S = 7600, W/S = 7.5263
//   a=0, b=0:                                      W = 51200, S = 1600, W/S = 32
//   N=100, G=8, w=200, a=0, b=0:                   16 chunks (12 of 6, 4 of 7), S = 1400,
//                                                  W/S = 14.286
#include <atomic>
#include <cstdio>

#include "tbb_example.hpp"

#ifdef TASKLENS_TBB_WRAPPERS
#include <tasklens/tbb.h>
namespace tbbx = tasklens::tbb;
#else
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
namespace tbbx = ::tbb;
#endif

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 256, "N");
  const unsigned long g = tl_arg(argc, argv, 2, 8, "G");
  const unsigned long w = tl_arg(argc, argv, 3, 200, "w");
  const unsigned long a = tl_arg(argc, argv, 4, 4000, "a");
  const unsigned long b = tl_arg(argc, argv, 5, 2000, "b");
  if (g == 0 || n > (1ul << 24)) {
    std::fprintf(stderr, "%s: G must be positive and N at most 2^24\n", argv[0]);
    return 2;
  }

  unsigned long long total = serial_part(a, 1);  // before oneTBB starts

  std::atomic<unsigned long long> sum{0};
  std::atomic<unsigned long> body_calls{0};
  tbbx::parallel_for(  // site: tbb-for
      tbbx::blocked_range<unsigned long>(0, n, g),
      [&sum, &body_calls, w](const tbbx::blocked_range<unsigned long>& r) {
        unsigned long long s = 0;
        for (unsigned long i = r.begin(); i != r.end(); ++i) s += i;
        tl_work(w * r.size());
        sum += s;
        ++body_calls;
      },
      tbbx::simple_partitioner());

  total += serial_part(b, 2);

  unsigned long chunks = 0, largest = 0;
  if (n > 0) count_chunks(n, g, chunks, largest);
  const bool ok = sum == (n > 0 ? n * (n - 1) / 2 : 0) && body_calls == chunks;
  std::printf(
      "parallel_for over %lu iterations, grainsize %lu: %lu chunks, largest %lu: %s "
      "(sum %llu, serial %llu)\n",
      n, g, chunks, largest, ok ? "ok" : "WRONG", sum.load(), total);
  tl_print_analytic(a + n * w + b, a + largest * w + b);
  return ok ? 0 : 1;
}
