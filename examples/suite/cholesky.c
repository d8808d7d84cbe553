/* cholesky.c: tiled Cholesky factorization with task dependences (KaStORS / PLASMA dpotrf).
 *
 *   usage: suite_cholesky_<variant> [nt=8] [ts=8]
 *
 * A symmetric positive definite matrix of nt x nt tiles of ts x ts doubles (lower triangle
 * stored). For each k: potrf on tile (k, k); trsm on each tile (i, k) below it; syrk on each
 * diagonal tile (i, i) and gemm on each tile (i, j), k < j < i, below the diagonal. Every kernel
 * is a task with depend(in: the tiles it reads) depend(inout: the tile it updates); one thread
 * creates them all, with no taskwait: the dependences alone order the factorization.
 * tasks = nt + nt(nt-1)/2 (trsm) + nt(nt-1)/2 (syrk) + nt(nt-1)(nt-2)/6 (gemm): 120 for nt = 8
 * (tests), 988260 for nt = 180, ts = 2 (a bench size). Every tile sees the same
 * operations in the same order as in a sequential factorization, which the run compares with
 * bit for bit. No cut-off variant (the tasks do not nest).
 */
#include <math.h>

#include "suite.h"

static int g_nt, g_ts;

static void potrf(double* a) {
  const int n = g_ts;
  for (int j = 0; j < n; j++) {
    for (int k = 0; k < j; k++) a[j * n + j] -= a[j * n + k] * a[j * n + k];
    a[j * n + j] = sqrt(a[j * n + j]);
    for (int i = j + 1; i < n; i++) {
      for (int k = 0; k < j; k++) a[i * n + j] -= a[i * n + k] * a[j * n + k];
      a[i * n + j] /= a[j * n + j];
    }
  }
}
/* b = b L^-T for the lower-triangular L of tile l. */
static void trsm(const double* l, double* b) {
  const int n = g_ts;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      for (int k = 0; k < j; k++) b[i * n + j] -= b[i * n + k] * l[j * n + k];
      b[i * n + j] /= l[j * n + j];
    }
}
/* c -= a a^T (lower triangle only). */
static void syrk(const double* a, double* c) {
  const int n = g_ts;
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      for (int k = 0; k < n; k++) c[i * n + j] -= a[i * n + k] * a[j * n + k];
}
/* c -= a b^T. */
static void gemm(const double* a, const double* b, double* c) {
  const int n = g_ts;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) c[i * n + j] -= a[i * n + k] * b[j * n + k];
}

/* Tile (i, j), i >= j, of matrix m (an array of tile pointers). */
#define T(m, i, j) ((m)[(long)(i) * g_nt + (j)])

static void genmat(double** m) {
  const long n = (long)g_nt * g_ts;
  for (int ti = 0; ti < g_nt; ti++)
    for (int tj = 0; tj <= ti; tj++) {
      double* t = malloc((size_t)g_ts * g_ts * sizeof *t);
      if (!t) { perror("malloc"); exit(2); }
      for (int a = 0; a < g_ts; a++)
        for (int b = 0; b < g_ts; b++) {
          const long i = (long)ti * g_ts + a, j = (long)tj * g_ts + b;
          /* Symmetric (a function of i + j and |i - j|), diagonally dominant: SPD. */
          double v = (double)((i + j) % 7) * 0.1 + 1.0 / (1.0 + (double)labs(i - j));
          if (i == j) v += 2.0 * (double)n;
          t[a * g_ts + b] = v;
        }
      T(m, ti, tj) = t;
    }
}

static void cholesky_seq(double** m) {
  for (int k = 0; k < g_nt; k++) {
    potrf(T(m, k, k));
    for (int i = k + 1; i < g_nt; i++) trsm(T(m, k, k), T(m, i, k));
    for (int i = k + 1; i < g_nt; i++) {
      for (int j = k + 1; j < i; j++) gemm(T(m, i, k), T(m, j, k), T(m, i, j));
      syrk(T(m, i, k), T(m, i, i));
    }
  }
}

/* The same loops, a task per kernel. The depend clauses name the tiles' first elements. */
static unsigned long long cholesky_tasks(double** m) {
  unsigned long long tasks = 0;
  for (int k = 0; k < g_nt; k++) {
    double* kk = T(m, k, k);
#pragma omp task firstprivate(kk) SUITE_UNTIED depend(inout : kk[0])
    potrf(kk);
    tasks++;
    for (int i = k + 1; i < g_nt; i++) {
      double* ik = T(m, i, k);
#pragma omp task firstprivate(kk, ik) SUITE_UNTIED depend(in : kk[0]) depend(inout : ik[0])
      trsm(kk, ik);
      tasks++;
    }
    for (int i = k + 1; i < g_nt; i++) {
      double* ik = T(m, i, k);
      for (int j = k + 1; j < i; j++) {
        double *jk = T(m, j, k), *ij = T(m, i, j);
#pragma omp task firstprivate(ik, jk, ij) SUITE_UNTIED depend(in : ik[0], jk[0]) \
    depend(inout : ij[0])
        gemm(ik, jk, ij);
        tasks++;
      }
      double* ii = T(m, i, i);
#pragma omp task firstprivate(ik, ii) SUITE_UNTIED depend(in : ik[0]) depend(inout : ii[0])
      syrk(ik, ii);
      tasks++;
    }
  }
#pragma omp taskwait
  return tasks;
}

int main(int argc, char** argv) {
  g_nt = (int)suite_arg(argc, argv, 1, 8, 1, 2048, "nt");
  g_ts = (int)suite_arg(argc, argv, 2, 8, 1, 1024, "ts");
  const size_t ntiles = (size_t)g_nt * g_nt;
  double** m = calloc(ntiles, sizeof *m);
  double** ref = calloc(ntiles, sizeof *ref);
  if (!m || !ref) { perror("calloc"); return 2; }
  genmat(m);
  genmat(ref);
  unsigned long long tasks = 0;
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  tasks = cholesky_tasks(m);
  const double t1 = omp_get_wtime();
  cholesky_seq(ref);

  int ok = 1;
  double sum = 0;
  for (size_t t = 0; t < ntiles; t++) {
    if (!m[t]) continue;
    if (memcmp(m[t], ref[t], (size_t)g_ts * g_ts * sizeof(double))) ok = 0;
    for (int k = 0; k < g_ts * g_ts; k++) sum += m[t][k];
    free(m[t]);
    free(ref[t]);
  }
  char what[48], res[32];
  snprintf(what, sizeof what, "cholesky nt=%d ts=%d", g_nt, g_ts);
  snprintf(res, sizeof res, "%.9e", sum);
  suite_report(what, res, tasks, t1 - t0, ok);
  free(m);
  free(ref);
  return 0;
}
