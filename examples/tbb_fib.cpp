// tbb_fib.cpp: fib(n) with a oneTBB task per call (fib.c with a task_group).
//
//   usage: tbb_fib [n=12] [g=200] [cutoff=0]
//
// Every call of fib spins g units (tl_work(g)). A call with n >= 2 above the cutoff makes a
// task_group of its own, runs fib(n-1) in it as a task, computes fib(n-2) itself, then waits for
// the group. At or below the cutoff the calls recurse serially (each one still spins g units).
// main calls fib(n) directly: oneTBB starts on the first run.
//
// Built plain (oneTBB's task_group) and with -DTASKLENS_TBB_WRAPPERS (tasklens::tbb's, which
// tells the recorder the sites): the two builds differ by the include and the namespace alias.
//
// Analytic profile (units of tl_work; F(1) = F(2) = 1 are the Fibonacci numbers; C(m) =
// 2 F(m+1) - 1 is the number of calls of fib(m); c' = max(cutoff, 1)):
//   calls          C(n)
//   tasks          one per call of fib(m) with m > c' (there are F(n-m+1) of them):
//                  F(n - c' + 2) - 1 for c' < n (F(n+1) - 1 for cutoff <= 1), 0 for c' >= n
//   work           W = g C(n)
//   span           S = g (n - c' + C(c'))   for n > c'  (the chain fib(n) -> ... -> fib(c'+1),
//                                                        then the serial fib(c'))
//                  S = W                    for n <= c' (all serial)
//   parallelism    W / S; with cutoff <= 1: (2 F(n+1) - 1) / max(n, 1), as fib.c
//
//   defaults (n=12, g=200, cutoff=0): C = 465, tasks = 232, W = 93000, S = 2400, W/S = 38.75
//   n=12, g=200, cutoff=4:            tasks = 54, S = 200 (8 + 9) = 3400, W/S = 27.353
//   n=15, g=30:                       C = 1973, W = 59190, S = 450, W/S = 131.53
#include <cstdio>

#include "work.h"

#ifdef TASKLENS_TBB_WRAPPERS
#include <tasklens/tbb.h>
namespace tbbx = tasklens::tbb;
#else
#include <oneapi/tbb/task_group.h>
namespace tbbx = ::tbb;
#endif

namespace {

unsigned long g_units;
int g_cutoff;

long fib(int n) {
  tl_work(g_units);
  if (n < 2) return n;
  if (n <= g_cutoff) return fib(n - 1) + fib(n - 2);
  long x = 0;
  tbbx::task_group group;
  group.run([&x, n] { x = fib(n - 1); });  // site: tbb-fib-run
  const long y = fib(n - 2);
  group.wait();  // site: tbb-fib-wait
  return x + y;
}

// F(0..m) in f.
void fibonacci_numbers(int m, unsigned long long* f) {
  f[0] = 0;
  f[1] = 1;
  for (int i = 2; i <= m; i++) f[i] = f[i - 1] + f[i - 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = static_cast<int>(tl_arg(argc, argv, 1, 12, "n"));
  g_units = tl_arg(argc, argv, 2, 200, "g");
  const unsigned long cutoff = tl_arg(argc, argv, 3, 0, "cutoff");
  if (n > 50 || cutoff > 50) {  // (F(52), the largest number used below, fits in 64 bits)
    std::fprintf(stderr, "%s: n and cutoff must be at most 50\n", argv[0]);
    return 2;
  }
  g_cutoff = static_cast<int>(cutoff);

  const long result = fib(n);

  unsigned long long f[53];
  fibonacci_numbers(n + 2, f);
  const int c = g_cutoff > 1 ? g_cutoff : 1;
  auto calls = [&f](int m) { return 2 * f[m + 1] - 1; };
  const unsigned long long tasks = c < n ? f[n - c + 2] - 1 : 0;
  const unsigned long long span_calls =
      c < n ? static_cast<unsigned long long>(n - c) + calls(c) : calls(n);
  std::printf("fib(%d) = %ld (%llu calls, %llu tasks)\n", n, result, calls(n), tasks);
  tl_print_analytic(g_units * calls(n), g_units * span_calls);
  return 0;
}
