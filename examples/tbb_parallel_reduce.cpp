// tbb_parallel_reduce.cpp: oneTBB's parallel_reduce in both forms, with chunks of known size
// between a serial prologue and epilogue.
//
//   usage: tbb_parallel_reduce [mode=both|body|functional] [N=256] [G=8] [w=100] [a=2000]
//                              [b=2000]
//
// main spins a units (before oneTBB starts), then runs one or two reductions over
// blocked_range(0, N, G) with the simple_partitioner, one after the other:
//   body        the body form: a SquareSum body (splitting constructor, join) sums i*i;
//   functional  the functional form: a real_body lambda sums i*i*i into the value it is given,
//               std::plus joins the partial sums;
// then spins b units. In both, oneTBB splits the range in halves (floor(size/2) on the left)
// until no piece is larger than G and calls the body once per piece (a chunk), which spins w units
// per iteration at once. Joins and splits do no spinning.
//
// Built plain (oneTBB's parallel_reduce) and with -DTASKLENS_TBB_WRAPPERS (tasklens::tbb's, which
// marks every chunk): the two builds differ by the include and the namespace alias.
//
// Analytic profile (units), r = the number of reductions (2 for both, else 1), N = G 2^k (other
// N: the program computes the pieces, as tbb_parallel_for does):
//   chunks         N / G per reduction
//   work           W = a + r N w + b
//   span           S = a + r G w + b          (one largest chunk per reduction, in sequence)
//   parallelism    W / S = (a + r N w + b) / (a + r G w + b)
//
//   defaults (both, N=256, G=8, w=100, a=2000, b=2000): 2 x 32 chunks,
//                                              W = 55200, S = 5600, W/S = 9.8571
//   body or functional (same sizes):           W = 29600, S = 4800, W/S = 6.1667
//   both, a=0, b=0:                            W = 51200, S = 1600, W/S = 32
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>

#include "tbb_example.hpp"

#ifdef TASKLENS_TBB_WRAPPERS
#include <tasklens/tbb.h>
namespace tbbx = tasklens::tbb;
#else
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/partitioner.h>
namespace tbbx = ::tbb;
#endif

namespace {

using Range = tbbx::blocked_range<unsigned long>;

unsigned long g_w;
std::atomic<unsigned long> g_chunks{0};

// The body form: sums i*i over the pieces it is given.
class SquareSum {
 public:
  SquareSum() = default;
  SquareSum(SquareSum&, tbbx::split) {}
  void operator()(const Range& r) {
    unsigned long long s = 0;
    for (unsigned long i = r.begin(); i != r.end(); ++i)
      s += static_cast<unsigned long long>(i) * i;
    tl_work(g_w * r.size());
    sum_ += s;
    ++g_chunks;
  }
  void join(SquareSum& rhs) { sum_ += rhs.sum_; }
  unsigned long long sum() const { return sum_; }

 private:
  unsigned long long sum_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "both";
  const unsigned long n = tl_arg(argc, argv, 2, 256, "N");
  const unsigned long g = tl_arg(argc, argv, 3, 8, "G");
  g_w = tl_arg(argc, argv, 4, 100, "w");
  const unsigned long a = tl_arg(argc, argv, 5, 2000, "a");
  const unsigned long b = tl_arg(argc, argv, 6, 2000, "b");
  const bool both = std::strcmp(mode, "both") == 0;
  const bool body_form = both || std::strcmp(mode, "body") == 0;
  const bool functional_form = both || std::strcmp(mode, "functional") == 0;
  if ((!body_form && !functional_form) || g == 0 || n > (1ul << 20)) {
    std::fprintf(stderr,
                 "%s: usage: tbb_parallel_reduce [both|body|functional] [N] [G] [w] [a] [b] "
                 "(G > 0, N at most 2^20)\n",
                 argv[0]);
    return 2;
  }

  unsigned long long serial = serial_part(a, 1);  // before oneTBB starts

  unsigned long long squares = 0, cubes = 0;
  if (body_form) {
    SquareSum body;
    tbbx::parallel_reduce(  // site: tbb-reduce-body
        Range(0, n, g), body, tbbx::simple_partitioner());
    squares = body.sum();
  }
  if (functional_form) {
    cubes = tbbx::parallel_reduce(  // site: tbb-reduce-functional
        Range(0, n, g), 0ull,
        [](const Range& r, unsigned long long s) {
          for (unsigned long i = r.begin(); i != r.end(); ++i)
            s += static_cast<unsigned long long>(i) * i * i;
          tl_work(g_w * r.size());
          ++g_chunks;
          return s;
        },
        std::plus<unsigned long long>(), tbbx::simple_partitioner());
  }

  serial += serial_part(b, 2);

  unsigned long chunks = 0, largest = 0;
  if (n > 0) count_chunks(n, g, chunks, largest);
  const unsigned long reductions = (body_form ? 1 : 0) + (functional_form ? 1 : 0);
  unsigned long long expect_squares = 0, expect_cubes = 0;
  for (unsigned long long i = 0; i < n; i++) {
    expect_squares += i * i;
    expect_cubes += i * i * i;
  }
  const bool ok = (!body_form || squares == expect_squares) &&
                  (!functional_form || cubes == expect_cubes) && g_chunks == reductions * chunks;
  std::printf(
      "parallel_reduce (%s) over %lu iterations, grainsize %lu: %lu x %lu chunks, "
      "largest %lu: %s (squares %llu, cubes %llu, serial %llu)\n",
      mode, n, g, reductions, chunks, largest, ok ? "ok" : "WRONG", squares, cubes, serial);
  tl_print_analytic(a + reductions * n * g_w + b, a + reductions * largest * g_w + b);
  return ok ? 0 : 1;
}
