/* sparselu.c: LU factorization of a sparse blocked matrix (BOTS sparselu), in two variants.
 *
 *   usage: suite_sparselu_<variant> [nb=16] [bs=8] [mode=0: single, 1: for, 2: depend]
 *
 * The matrix is nb x nb blocks of bs x bs doubles, some blocks absent (BOTS's pattern). For each
 * kk: lu0 on the diagonal block, then a task per present block of row kk (fwd) and of column kk
 * (bdiv), a wait, then a task per pair (ii, jj) with blocks (ii, kk) and (kk, jj) present
 * (bmod, which allocates block (ii, jj) if absent), a wait.
 *   mode 0 (BOTS sparselu_single): one thread creates all the tasks, taskwaits between phases;
 *   mode 1 (BOTS sparselu_for): worksharing loops (omp for) over the rows create the tasks, from
 *     every thread, and the loops' barriers separate the phases.
 *   mode 2 (KaStORS sparselu_task_dep): one thread creates the tasks, lu0 one of them, and
 *     `depend` clauses on the blocks' slots order them (lu0 before the fwd and bdiv of its step,
 *     those before the bmods that read their blocks): no taskwait between the phases, one per
 *     step, which keeps the runtime's live tasks to one step's (a billion tasks do not fit).
 * The tasks are counted where they are created (a reduction over the loops in mode 1). Each block
 * sees the same operations in the same order in both modes and in a sequential factorization,
 * which the run compares with bit for bit. tasks: 549 for nb = 16, bs = 8 (tests); 1195477
 * for nb = 240, bs = 2 (a bench size). There is no cut-off variant: the tasks do not nest.
 */
#include "suite.h"

static int g_nb, g_bs;

static double* new_block(void) {
  double* b = calloc((size_t)g_bs * g_bs, sizeof *b);
  if (!b) { perror("calloc"); exit(2); }
  return b;
}

/* BOTS's genmat: which blocks are present, and their deterministic values. */
static void genmat(double** m) {
  uint64_t rng = 1325;
  for (int ii = 0; ii < g_nb; ii++)
    for (int jj = 0; jj < g_nb; jj++) {
      int null = 0;
      if (ii < jj && ii % 3 != 0) null = 1;
      if (ii > jj && jj % 3 != 0) null = 1;
      if (ii % 2 == 1) null = 1;
      if (jj % 2 == 1) null = 1;
      if (ii == jj || ii == jj - 1 || ii - 1 == jj) null = 0;
      if (ii == jj - 2 || ii - 2 == jj) null = 0;
      m[ii * g_nb + jj] = NULL;
      if (null) continue;
      double* b = new_block();
      for (int k = 0; k < g_bs * g_bs; k++) b[k] = suite_rand(&rng) * 2.0 - 1.0;
      if (ii == jj)  /* diagonally dominant: no pivoting needed */
        for (int k = 0; k < g_bs; k++) b[k * g_bs + k] += 2.0 * g_bs * g_nb;
      m[ii * g_nb + jj] = b;
    }
}

static void lu0(double* d) {
  const int n = g_bs;
  for (int k = 0; k < n; k++)
    for (int i = k + 1; i < n; i++) {
      d[i * n + k] /= d[k * n + k];
      for (int j = k + 1; j < n; j++) d[i * n + j] -= d[i * n + k] * d[k * n + j];
    }
}
static void fwd(const double* d, double* col) {
  const int n = g_bs;
  for (int j = 0; j < n; j++)
    for (int k = 0; k < n; k++)
      for (int i = k + 1; i < n; i++) col[i * n + j] -= d[i * n + k] * col[k * n + j];
}
static void bdiv(const double* d, double* row) {
  const int n = g_bs;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++) {
      row[i * n + k] /= d[k * n + k];
      for (int j = k + 1; j < n; j++) row[i * n + j] -= row[i * n + k] * d[k * n + j];
    }
}
static void bmod(const double* row, const double* col, double* inner) {
  const int n = g_bs;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) inner[i * n + j] -= row[i * n + k] * col[k * n + j];
}
/* Block (ii, jj) for bmod: allocated when absent (only its own task touches it in this phase). */
static void bmod_at(double** m, int ii, int jj, int kk) {
  double** t = &m[ii * g_nb + jj];
  if (!*t) *t = new_block();
  bmod(m[ii * g_nb + kk], m[kk * g_nb + jj], *t);
}

static void sparselu_seq(double** m) {
  const int nb = g_nb;
  for (int kk = 0; kk < nb; kk++) {
    lu0(m[kk * nb + kk]);
    for (int jj = kk + 1; jj < nb; jj++)
      if (m[kk * nb + jj]) fwd(m[kk * nb + kk], m[kk * nb + jj]);
    for (int ii = kk + 1; ii < nb; ii++)
      if (m[ii * nb + kk]) bdiv(m[kk * nb + kk], m[ii * nb + kk]);
    for (int ii = kk + 1; ii < nb; ii++)
      if (m[ii * nb + kk])
        for (int jj = kk + 1; jj < nb; jj++)
          if (m[kk * nb + jj]) bmod_at(m, ii, jj, kk);
  }
}

static unsigned long long sparselu_single(double** m) {
  const int nb = g_nb;
  unsigned long long tasks = 0;
  for (int kk = 0; kk < nb; kk++) {
    lu0(m[kk * nb + kk]);
    for (int jj = kk + 1; jj < nb; jj++)
      if (m[kk * nb + jj]) {
#pragma omp task firstprivate(kk, jj) SUITE_UNTIED
        fwd(m[kk * nb + kk], m[kk * nb + jj]);
        tasks++;
      }
    for (int ii = kk + 1; ii < nb; ii++)
      if (m[ii * nb + kk]) {
#pragma omp task firstprivate(kk, ii) SUITE_UNTIED
        bdiv(m[kk * nb + kk], m[ii * nb + kk]);
        tasks++;
      }
#pragma omp taskwait
    for (int ii = kk + 1; ii < nb; ii++)
      if (m[ii * nb + kk])
        for (int jj = kk + 1; jj < nb; jj++)
          if (m[kk * nb + jj]) {
#pragma omp task firstprivate(kk, ii, jj) SUITE_UNTIED
            bmod_at(m, ii, jj, kk);
            tasks++;
          }
#pragma omp taskwait
  }
  return tasks;
}

/* The blocks' slots m[i] (not the blocks) are the dependences' objects: bmod may allocate the
   block it updates. */
static unsigned long long sparselu_depend(double** m) {
  const int nb = g_nb;
  unsigned long long tasks = 0;
  for (int kk = 0; kk < nb; kk++) {
#pragma omp task firstprivate(kk) SUITE_UNTIED depend(inout : m[kk * nb + kk])
    lu0(m[kk * nb + kk]);
    tasks++;
    for (int jj = kk + 1; jj < nb; jj++)
      if (m[kk * nb + jj]) {
#pragma omp task firstprivate(kk, jj) SUITE_UNTIED depend(in : m[kk * nb + kk]) \
    depend(inout : m[kk * nb + jj])
        fwd(m[kk * nb + kk], m[kk * nb + jj]);
        tasks++;
      }
    for (int ii = kk + 1; ii < nb; ii++)
      if (m[ii * nb + kk]) {
#pragma omp task firstprivate(kk, ii) SUITE_UNTIED depend(in : m[kk * nb + kk]) \
    depend(inout : m[ii * nb + kk])
        bdiv(m[kk * nb + kk], m[ii * nb + kk]);
        tasks++;
      }
    for (int ii = kk + 1; ii < nb; ii++)
      if (m[ii * nb + kk])
        for (int jj = kk + 1; jj < nb; jj++)
          if (m[kk * nb + jj]) {
#pragma omp task firstprivate(kk, ii, jj) SUITE_UNTIED \
    depend(in : m[ii * nb + kk], m[kk * nb + jj]) depend(inout : m[ii * nb + jj])
            bmod_at(m, ii, jj, kk);
            tasks++;
          }
#pragma omp taskwait
  }
  return tasks;
}

/* Called by every thread of the team. */
static void sparselu_for(double** m, unsigned long long* tasks) {
  const int nb = g_nb;
  for (int kk = 0; kk < nb; kk++) {
#pragma omp single
    lu0(m[kk * nb + kk]);
    /* fwd and bdiv: one loop over both (the block row, then the block column). */
#pragma omp for schedule(dynamic) reduction(+ : tasks[0])
    for (int x = kk + 1; x < 2 * nb - kk - 1; x++) {
      const int jj = x < nb ? x : 0, ii = x < nb ? 0 : x - nb + kk + 1;
      if (x < nb && m[kk * nb + jj]) {
#pragma omp task firstprivate(kk, jj) SUITE_UNTIED
        fwd(m[kk * nb + kk], m[kk * nb + jj]);
        tasks[0]++;
      } else if (x >= nb && m[ii * nb + kk]) {
#pragma omp task firstprivate(kk, ii) SUITE_UNTIED
        bdiv(m[kk * nb + kk], m[ii * nb + kk]);
        tasks[0]++;
      }
    }  /* the barrier waits for the tasks too */
#pragma omp for schedule(dynamic) reduction(+ : tasks[0])
    for (int ii = kk + 1; ii < nb; ii++)
      if (m[ii * nb + kk])
        for (int jj = kk + 1; jj < nb; jj++)
          if (m[kk * nb + jj]) {
#pragma omp task firstprivate(kk, ii, jj) SUITE_UNTIED
            bmod_at(m, ii, jj, kk);
            tasks[0]++;
          }
  }
}

int main(int argc, char** argv) {
  g_nb = (int)suite_arg(argc, argv, 1, 16, 1, 4096, "nb");
  g_bs = (int)suite_arg(argc, argv, 2, 8, 1, 1024, "bs");
  const int mode = (int)suite_arg(argc, argv, 3, 0, 0, 2, "mode");
  const size_t nblocks = (size_t)g_nb * g_nb;
  double** m = malloc(nblocks * sizeof *m);
  double** ref = malloc(nblocks * sizeof *ref);
  if (!m || !ref) { perror("malloc"); return 2; }
  genmat(m);
  genmat(ref);
  unsigned long long tasks = 0;
  const double t0 = omp_get_wtime();
  if (mode == 0) {
#pragma omp parallel
#pragma omp single
    tasks = sparselu_single(m);
  } else if (mode == 2) {
#pragma omp parallel
#pragma omp single
    tasks = sparselu_depend(m);
  } else {
#pragma omp parallel
    sparselu_for(m, &tasks);
  }
  const double t1 = omp_get_wtime();
  sparselu_seq(ref);

  int ok = 1;
  double sum = 0;
  for (size_t b = 0; b < nblocks; b++) {
    if (!m[b] != !ref[b]) { ok = 0; continue; }
    if (!m[b]) continue;
    if (memcmp(m[b], ref[b], (size_t)g_bs * g_bs * sizeof(double))) ok = 0;
    for (int k = 0; k < g_bs * g_bs; k++) sum += m[b][k];
    free(m[b]);
    free(ref[b]);
  }
  char what[64], res[32];
  snprintf(what, sizeof what, "sparselu nb=%d bs=%d mode=%s", g_nb, g_bs, mode == 2 ? "depend" : mode ? "for" : "single");
  snprintf(res, sizeof res, "%.9e", sum);
  suite_report(what, res, tasks, t1 - t0, ok);
  free(m);
  free(ref);
  return 0;
}
