/* strassen.c: Strassen's matrix multiplication, 7 tasks per level (BOTS strassen).
 *
 *   usage: suite_strassen_<variant> [n=128] [leaf=16] [cutoff=3]
 *
 * C = A B for n x n matrices (n a power of two). A level splits each matrix in 4 quadrants,
 * forms the 7 products M1..M7 of Strassen's scheme, each in a task (which forms its own sums of
 * quadrants first), waits, and combines them into C's quadrants. Blocks of leaf x leaf or less
 * are multiplied by the classic triple loop. The entries of A and B are small integers, so every
 * sum is exact in double and the result is the same for every compiler and thread count.
 * tasks = 7 + 7^2 + ... + 7^L for L = log2(n / leaf) levels: 399 for n = 128, leaf = 16 (tests),
 * 960799 for n = 512, leaf = 4 (a bench size). Checked: 64 entries of C against their dot
 * products, and the checksum against the one of (sum of A's columns) . (sum of B's rows).
 */
#include "suite.h"

static int g_leaf;

/* A view of an n x n block inside a matrix of row stride s. */
typedef struct {
  double* p;
  long s;
} mat;

static mat quad(mat m, long h, int i, int j) { return (mat){m.p + i * h * m.s + j * h, m.s}; }
#define AT(m, i, j) ((m).p[(long)(i) * (m).s + (j)])

static mat alloc_mat(long n) {
  mat m = {malloc((size_t)(n * n) * sizeof(double)), n};
  if (!m.p) { perror("malloc"); exit(2); }
  return m;
}
/* c = a + sb * b (sb = +1 or -1; b may be absent: c = a). */
static void add(mat c, mat a, mat b, double sb, long n) {
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) AT(c, i, j) = AT(a, i, j) + (b.p ? sb * AT(b, i, j) : 0.0);
}

static unsigned long long strassen(mat c, mat a, mat b, long n, int depth);

/* c = (a1 + sa a2)(b1 + sb b2); a2 / b2 may be absent. */
static unsigned long long product(mat c, mat a1, mat a2, double sa, mat b1, mat b2, double sb,
                                  long n, int depth) {
  mat ta = alloc_mat(n), tb = alloc_mat(n);
  add(ta, a1, a2, sa, n);
  add(tb, b1, b2, sb, n);
  unsigned long long t = strassen(c, ta, tb, n, depth);
  free(ta.p);
  free(tb.p);
  return t;
}

static unsigned long long strassen(mat c, mat a, mat b, long n, int depth) {
  if (n <= g_leaf) {
    for (long i = 0; i < n; i++) {
      for (long j = 0; j < n; j++) AT(c, i, j) = 0;
      for (long k = 0; k < n; k++) {
        const double x = AT(a, i, k);
        for (long j = 0; j < n; j++) AT(c, i, j) += x * AT(b, k, j);
      }
    }
    return 0;
  }
  const long h = n / 2;
  const mat a11 = quad(a, h, 0, 0), a12 = quad(a, h, 0, 1);
  const mat a21 = quad(a, h, 1, 0), a22 = quad(a, h, 1, 1);
  const mat b11 = quad(b, h, 0, 0), b12 = quad(b, h, 0, 1);
  const mat b21 = quad(b, h, 1, 0), b22 = quad(b, h, 1, 1);
  const mat none = {NULL, 0};
  mat m[7];
  unsigned long long t[7] = {0};
  for (int i = 0; i < 7; i++) m[i] = alloc_mat(h);
  /* The operands of M1..M7: (a1 + sa a2)(b1 + sb b2). */
  const mat op[7][4] = {{a11, a22, b11, b22}, {a21, a22, b11, none}, {a11, none, b12, b22},
                        {a22, none, b21, b11}, {a11, a12, b22, none}, {a21, a11, b11, b12},
                        {a12, a22, b21, b22}};
  const double sg[7][2] = {{1, 1}, {1, 0}, {0, -1}, {0, -1}, {1, 0}, {-1, 1}, {-1, 1}};
  const int serial = SUITE_SERIAL(depth);
  for (int i = 0; i < 7; i++) {
    if (serial) {
      product(m[i], op[i][0], op[i][1], sg[i][0], op[i][2], op[i][3], sg[i][1], h, depth + 1);
      continue;
    }
#pragma omp task shared(m, t, op, sg) firstprivate(i) SUITE_UNTIED SUITE_CUTOFF(depth)
    t[i] = product(m[i], op[i][0], op[i][1], sg[i][0], op[i][2], op[i][3], sg[i][1], h, depth + 1);
  }
  if (!serial) {
#pragma omp taskwait
  }
  /* C11 = M1 + M4 - M5 + M7, C12 = M3 + M5, C21 = M2 + M4, C22 = M1 - M2 + M3 + M6. */
  const mat c11 = quad(c, h, 0, 0), c12 = quad(c, h, 0, 1);
  const mat c21 = quad(c, h, 1, 0), c22 = quad(c, h, 1, 1);
  for (long i = 0; i < h; i++)
    for (long j = 0; j < h; j++) {
      AT(c11, i, j) = AT(m[0], i, j) + AT(m[3], i, j) - AT(m[4], i, j) + AT(m[6], i, j);
      AT(c12, i, j) = AT(m[2], i, j) + AT(m[4], i, j);
      AT(c21, i, j) = AT(m[1], i, j) + AT(m[3], i, j);
      AT(c22, i, j) = AT(m[0], i, j) - AT(m[1], i, j) + AT(m[2], i, j) + AT(m[5], i, j);
    }
  unsigned long long total = serial ? 0 : 7;
  for (int i = 0; i < 7; i++) {
    total += t[i];
    free(m[i].p);
  }
  return total;
}

int main(int argc, char** argv) {
  const long n = suite_arg(argc, argv, 1, 128, 1, 8192, "n");
  g_leaf = (int)suite_arg(argc, argv, 2, 16, 1, 8192, "leaf");
  suite_cutoff_arg(argc, argv, 3, 3);
  if (n & (n - 1)) {
    fprintf(stderr, "%s: n must be a power of two\n", argv[0]);
    return 2;
  }
  mat a = alloc_mat(n), b = alloc_mat(n), c = alloc_mat(n);
  uint64_t rng = 3;
  for (long i = 0; i < n * n; i++) {
    a.p[i] = (double)((int)(suite_rand(&rng) * 9) - 4);
    b.p[i] = (double)((int)(suite_rand(&rng) * 9) - 4);
  }
  unsigned long long tasks = 0;
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  tasks = strassen(c, a, b, n, 0);
  const double t1 = omp_get_wtime();

  /* sum(C) = sum_k (sum_i A[i][k]) (sum_j B[k][j]). */
  double sum = 0, expect = 0;
  for (long i = 0; i < n * n; i++) sum += c.p[i];
  for (long k = 0; k < n; k++) {
    double ca = 0, rb = 0;
    for (long i = 0; i < n; i++) ca += AT(a, i, k), rb += AT(b, k, i);
    expect += ca * rb;
  }
  int ok = sum == expect;
  for (int s = 0; s < 64; s++) {
    const long i = (long)(suite_mix(2 * s) % (uint64_t)n);
    const long j = (long)(suite_mix(2 * s + 1) % (uint64_t)n);
    double d = 0;
    for (long k = 0; k < n; k++) d += AT(a, i, k) * AT(b, k, j);
    if (d != AT(c, i, j)) ok = 0;
  }
  char what[48], res[32];
  snprintf(what, sizeof what, "strassen n=%ld leaf=%d", n, g_leaf);
  snprintf(res, sizeof res, "%.0f", sum);
  suite_report(what, res, tasks, t1 - t0, ok);
  free(a.p);
  free(b.p);
  free(c.p);
  return 0;
}
