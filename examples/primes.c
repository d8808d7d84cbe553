/* primes.c: counting primes with load imbalance (the example of the OSPG paper).
 *
 *   usage: primes [mode=static|tasks] [N=8192] [q=64] [B=256]
 *
 * Counts the primes below N by trial division. Testing i costs cost(i) = 1 + floor(i/q) units,
 * so the cost grows with i.
 *   static: the range is split into 4 equal parts (N must be a multiple of 4) and the parts are
 *           the 4 iterations of a `parallel for schedule(static)`: the parts at the end of the
 *           range dominate, and the parallelism is poor.
 *   tasks:  the range is split into N/B blocks of B numbers (B must divide N), one task per block,
 *           created from the most expensive block down: the parallelism is high.
 *
 * Analytic profile (units). Let P(a, b) = sum over a <= i < b of (1 + floor(i/q)), m = N/4 and
 * p_j = P(j m, (j+1) m) the cost of part j.
 *   work           W = P(0, N)      (both modes)
 *   static, span   S = the largest sum of the parts that one thread runs. schedule(static) gives
 *                  each thread a contiguous block of the 4 iterations (libomp and libgomp agree
 *                  for these team sizes): 2 threads: S = p_2 + p_3; 4 threads: S = p_3;
 *                  1 thread: S = W.
 *   tasks, span    S = P(N - B, N)  (the last block; the creation of the tasks is negligible)
 *
 *   defaults / tests (N=8192, q=64, B=256):
 *     p_0 = 33792, p_1 = 99328, p_2 = 164864, p_3 = 230400, W = 528384
 *     static, 2 threads: S = 395264, W/S = 1.3368;  4 threads: S = 230400, W/S = 2.2933
 *     tasks (32 tasks):  S = 32384,  W/S = 16.3162
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "work.h"

static unsigned long g_q;

static unsigned long cost(unsigned long i) { return 1 + i / g_q; }

static int is_prime(unsigned long i) {
  if (i < 2) return 0;
  for (unsigned long d = 2; d * d <= i; d++)
    if (i % d == 0) return 0;
  return 1;
}

/* Tests lo <= i < hi, then spins the total cost of the range at once (one spin per strand). */
static unsigned long test_range(unsigned long lo, unsigned long hi) {
  unsigned long count = 0, units = 0;
  for (unsigned long i = lo; i < hi; i++) {
    count += is_prime(i);
    units += cost(i);
  }
  tl_work(units);
  return count;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "static";
  const unsigned long n = tl_arg(argc, argv, 2, 8192, "N");
  g_q = tl_arg(argc, argv, 3, 64, "q");
  const unsigned long block = tl_arg(argc, argv, 4, 256, "B");
  const int tasks = strcmp(mode, "tasks") == 0;
  if ((!tasks && strcmp(mode, "static") != 0) || g_q == 0 || n % 4 != 0 ||
      (tasks && (block == 0 || n % block != 0))) {
    fprintf(stderr,
            "%s: usage: primes [static|tasks] [N] [q] [B] (N a multiple of 4; B divides N)\n",
            argv[0]);
    return 2;
  }

  unsigned long count = 0;
  if (!tasks) {
    const unsigned long m = n / 4;
#pragma omp parallel for schedule(static) reduction(+ : count)  // site: primes-static-loop
    for (int part = 0; part < 4; part++) count += test_range(part * m, (part + 1) * m);
  } else {
#pragma omp parallel  // site: primes-tasks-parallel
#pragma omp single
    for (unsigned long b = n / block; b-- > 0;) {
#pragma omp task shared(count)  // site: primes-task
      {
        unsigned long c = test_range(b * block, (b + 1) * block);
#pragma omp atomic
        count += c;
      }
    }
  }

  unsigned long long work = 0, last = 0;
  unsigned long long part[4] = {0, 0, 0, 0};
  for (unsigned long i = 0; i < n; i++) {
    work += cost(i);
    part[i / (n / 4)] += cost(i);
    if (i >= n - block) last += cost(i);
  }
  printf("%lu primes below %lu (%s)\n", count, n, mode);
  if (tasks) {
    tl_print_analytic(work, last);
  } else {
    printf("parts: %llu %llu %llu %llu; span with 2 threads %llu, with 4 threads %llu\n", part[0],
           part[1], part[2], part[3], part[2] + part[3], part[3]);
    tl_print_analytic(work, part[2] + part[3]);
  }
  return 0;
}
