// tbb_mergesort.cpp: mergesort with oneTBB's parallel_invoke on the halves and a SERIAL merge
// (mergesort.c with parallel_invoke).
//
//   usage: tbb_mergesort [n=16384] [G=128] [c=1]
//
// n keys (n must be G * 2^k) are sorted recursively: a range of at most G keys is sorted serially
// (insertion sort) and costs c units per key; a larger range sorts its two halves with
// parallel_invoke and merges them serially, which costs c units per key of the range. The merges
// near the root are long and serial: the span is linear in n and the parallelism only grows like
// log n.
//
// Built plain (oneTBB's parallel_invoke) and with -DTASKLENS_TBB_WRAPPERS (tasklens::tbb's):
// the two builds differ by the include and the namespace alias.
//
// Analytic profile (units), with n = G 2^k:
//   parallel_invoke calls   2^k - 1 (each runs 2 functions)
//   work           W = c n (k + 1)  (leaves: c n; each of the k merge levels: c n)
//   span           S = c (2n - G)   (one leaf, then merges of 2G, 4G, ..., n keys)
//   parallelism    W / S = n (k + 1) / (2n - G)  ~ (log2(n/G) + 1) / 2
//
//   defaults (n=16384, G=128, c=1): k = 7, 127 parallel_invoke calls,
//                                   W = 131072, S = 32640, W/S = 4.0157
//   n=65536, G=256, c=1:            k = 8, W = 589824, S = 130816, W/S = 4.5088
#include <cstdio>
#include <vector>

#include "work.h"

#ifdef TASKLENS_TBB_WRAPPERS
#include <tasklens/tbb.h>
namespace tbbx = tasklens::tbb;
#else
#include <oneapi/tbb/parallel_invoke.h>
namespace tbbx = ::tbb;
#endif

namespace {

unsigned long g_grain, g_cost;

void insertion_sort(unsigned* a, size_t n) {
  for (size_t i = 1; i < n; i++) {
    unsigned v = a[i];
    size_t j = i;
    while (j > 0 && a[j - 1] > v) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = v;
  }
}

void merge(unsigned* a, unsigned* tmp, size_t lo, size_t mid, size_t hi) {
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
  while (i < mid) tmp[k++] = a[i++];
  while (j < hi) tmp[k++] = a[j++];
  for (k = lo; k < hi; k++) a[k] = tmp[k];
}

void msort(unsigned* a, unsigned* tmp, size_t lo, size_t hi) {
  const size_t n = hi - lo;
  if (n <= g_grain) {
    insertion_sort(a + lo, n);
    tl_work(g_cost * n);
    return;
  }
  const size_t mid = lo + n / 2;
  tbbx::parallel_invoke([=] { msort(a, tmp, lo, mid); },  // site: tbb-msort-invoke
                        [=] { msort(a, tmp, mid, hi); });
  merge(a, tmp, lo, mid, hi);
  tl_work(g_cost * n);
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 16384, "n");
  g_grain = tl_arg(argc, argv, 2, 128, "G");
  g_cost = tl_arg(argc, argv, 3, 1, "c");
  unsigned k = 0;
  while (g_grain > 0 && (g_grain << k) < n) k++;
  if (g_grain == 0 || (g_grain << k) != n || n > (1ul << 26)) {
    std::fprintf(stderr, "%s: n must be G * 2^k (and at most 2^26), got n=%lu G=%lu\n", argv[0], n,
                 g_grain);
    return 2;
  }
  std::vector<unsigned> a(n), tmp(n);
  unsigned long long checksum = 0;
  unsigned x = 12345;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    a[i] = x >> 8;
    checksum += a[i];
  }

  msort(a.data(), tmp.data(), 0, n);

  bool sorted = true;
  unsigned long long after = a[0];
  for (size_t i = 1; i < n; i++) {
    if (a[i - 1] > a[i]) sorted = false;
    after += a[i];
  }
  std::printf("sorted %lu keys: %s, checksum %llu, median %u (%lu parallel_invoke calls)\n", n,
              sorted && after == checksum ? "ok" : "WRONG", checksum, a[n / 2], (1ul << k) - 1);
  tl_print_analytic(g_cost * n * (k + 1ull), g_cost * (2 * n - g_grain));
  return sorted && after == checksum ? 0 : 1;
}
