/* mergesort.c: cilksort (BOTS sort): a recursive 4-way merge sort whose merges are parallel too.
 *
 *   usage: suite_mergesort_<variant> [n=20000] [cutoff=6]
 *
 * sort(a, n): below SORT_LEAF elements a sequential quicksort + insertion sort; otherwise a task
 * per quarter, a taskwait, a task for each of the two merges of quarters into a temporary array,
 * a taskwait, and the final merge back. merge(x, y -> out) is recursive and parallel: split the
 * longer input at its middle, find that value in the other one (binary search), and merge the
 * two lower and the two upper halves in two tasks; below MERGE_LEAF elements a plain merge.
 * Every call returns the number of tasks it created below it (summed after its taskwaits).
 * Without a cut-off: 10096 tasks for n = 20000 (tests), 1356920 for n = 2000000 (a bench size).
 * Checked: the output is sorted and holds the same multiset (sum and xor of a hash).
 */
#include "suite.h"

#define SORT_LEAF 32
#define MERGE_LEAF 64

typedef unsigned int elm;
typedef unsigned long long cnt;

static void insertion(elm* a, long n) {
  for (long i = 1; i < n; i++) {
    elm v = a[i];
    long j = i;
    for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
    a[j] = v;
  }
}
static void quick(elm* a, long n) {
  while (n > 24) {
    elm p = a[n / 2];
    long i = 0, j = n - 1;
    while (i <= j) {
      while (a[i] < p) i++;
      while (a[j] > p) j--;
      if (i <= j) { elm t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (j + 1 < n - i) { quick(a, j + 1); a += i; n -= i; }
    else { quick(a + i, n - i); n = j + 1; }
  }
  insertion(a, n);
}
static void seqmerge(const elm* x, long nx, const elm* y, long ny, elm* out) {
  long i = 0, j = 0, k = 0;
  while (i < nx && j < ny) out[k++] = x[i] <= y[j] ? x[i++] : y[j++];
  while (i < nx) out[k++] = x[i++];
  while (j < ny) out[k++] = y[j++];
}
/* The first index of y whose element is >= v. */
static long lower(const elm* y, long ny, elm v) {
  long lo = 0, hi = ny;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (y[mid] < v) lo = mid + 1; else hi = mid;
  }
  return lo;
}

static cnt merge(const elm* x, long nx, const elm* y, long ny, elm* out, int depth) {
  if (nx < ny) { const elm* t = x; x = y; y = t; long tn = nx; nx = ny; ny = tn; }
  if (nx + ny <= MERGE_LEAF || ny == 0 || SUITE_SERIAL(depth)) {
    seqmerge(x, nx, y, ny, out);
    return 0;
  }
  const long mx = nx / 2, my = lower(y, ny, x[mx]);
  cnt a = 0, b = 0;
#pragma omp task shared(a) SUITE_UNTIED SUITE_CUTOFF(depth)
  a = merge(x, mx, y, my, out, depth + 1);
#pragma omp task shared(b) SUITE_UNTIED SUITE_CUTOFF(depth)
  b = merge(x + mx, nx - mx, y + my, ny - my, out + mx + my, depth + 1);
#pragma omp taskwait
  return 2 + a + b;
}

/* Sorts a[0..n) using tmp[0..n). */
static cnt sort(elm* a, elm* tmp, long n, int depth) {
  if (n <= SORT_LEAF) {
    quick(a, n);
    return 0;
  }
  if (SUITE_SERIAL(depth)) {  /* the same algorithm, without tasks */
    long q = n / 4;
    long s[5] = {0, q, 2 * q, 3 * q, n};
    for (int i = 0; i < 4; i++) sort(a + s[i], tmp + s[i], s[i + 1] - s[i], depth);
    seqmerge(a, q, a + q, q, tmp);
    seqmerge(a + s[2], q, a + s[3], n - s[3], tmp + s[2]);
    seqmerge(tmp, s[2], tmp + s[2], n - s[2], a);
    return 0;
  }
  const long q = n / 4;
  const long s[5] = {0, q, 2 * q, 3 * q, n};
  cnt c[4] = {0}, m[2] = {0};
  for (int i = 0; i < 4; i++) {
#pragma omp task shared(c) firstprivate(i) SUITE_UNTIED SUITE_CUTOFF(depth)
    c[i] = sort(a + s[i], tmp + s[i], s[i + 1] - s[i], depth + 1);
  }
#pragma omp taskwait
#pragma omp task shared(m) SUITE_UNTIED SUITE_CUTOFF(depth)
  m[0] = merge(a, q, a + q, q, tmp, depth + 1);
#pragma omp task shared(m) SUITE_UNTIED SUITE_CUTOFF(depth)
  m[1] = merge(a + s[2], q, a + s[3], n - s[3], tmp + s[2], depth + 1);
#pragma omp taskwait
  cnt last = merge(tmp, s[2], tmp + s[2], n - s[2], a, depth + 1);
  return 6 + c[0] + c[1] + c[2] + c[3] + m[0] + m[1] + last;
}

int main(int argc, char** argv) {
  const long n = suite_arg(argc, argv, 1, 20000, 1, 1L << 30, "n");
  suite_cutoff_arg(argc, argv, 2, 6);
  elm* a = malloc((size_t)n * sizeof *a);
  elm* tmp = malloc((size_t)n * sizeof *tmp);
  if (!a || !tmp) { perror("malloc"); return 2; }
  uint64_t rng = 42, sum0 = 0, xor0 = 0;
  for (long i = 0; i < n; i++) {
    a[i] = (elm)(suite_rand(&rng) * 4294967296.0);
    sum0 += suite_mix(a[i]);
    xor0 ^= suite_mix(a[i] + 1);
  }
  cnt tasks = 0;
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  tasks = sort(a, tmp, n, 0);
  const double t1 = omp_get_wtime();
  uint64_t sum1 = 0, xor1 = 0;
  int sorted = 1;
  for (long i = 0; i < n; i++) {
    sum1 += suite_mix(a[i]);
    xor1 ^= suite_mix(a[i] + 1);
    if (i && a[i - 1] > a[i]) sorted = 0;
  }
  char what[48], res[48];
  snprintf(what, sizeof what, "mergesort n=%ld", n);
  snprintf(res, sizeof res, "%u/%u/%u", a[0], a[n / 2], a[n - 1]);
  suite_report(what, res, tasks, t1 - t0, sorted && sum0 == sum1 && xor0 == xor1);
  free(a);
  free(tmp);
  return 0;
}
