/* jacobi.c: blocked Jacobi iterations on a 2D grid with task dependences (KaStORS jacobi,
 * task-dep version).
 *
 *   usage: suite_jacobi_<variant> [nb=8] [bs=8] [iters=20]
 *
 * A (nb bs) x (nb bs) grid with a fixed boundary and a source term, two buffers (old, new). Each
 * iteration makes a task per block computing its new values from the old ones:
 * depend(in: the block and its 4 neighbours in the old buffer) depend(out: the block in the new
 * buffer); the buffers swap. Between the iterations the dependences alone order the tasks (a
 * block of iteration k+1 waits for its neighbours of iteration k, and overwrites a buffer only
 * after iteration k's readers of it), so iterations overlap, up to a taskwait every WINDOW
 * iterations. One thread creates all the tasks. tasks = iters nb^2: 1280 for nb = 8, iters = 20
 * (tests), 1024000 for nb = 32, bs = 4, iters = 1000 (a bench size). Checked bit for bit against
 * a sequential sweep; the result is the grid's sum. No cut-off variant (the tasks do not nest).
 */
#include "suite.h"

/* A taskwait every WINDOW iterations: without it the creating thread runs arbitrarily far
 * ahead, and libomp's handling of the pending dependences grows faster than linearly (200
 * iterations of 1024 blocks took 15x as long as 50). */
#define WINDOW 8

static int g_nb, g_bs;
static long g_n; /* the grid's side, boundary included: nb bs + 2 */

/* The address that stands for block (bi, bj) of grid u in the depend clauses. */
#define BLK(u, bi, bj) (u)[(long)((bi) * g_bs + 1) * g_n + (bj) * g_bs + 1]

static void sweep_block(const double* restrict u, double* restrict v, const double* f, int bi,
                        int bj) {
  for (long i = (long)bi * g_bs + 1; i <= (long)(bi + 1) * g_bs; i++)
    for (long j = (long)bj * g_bs + 1; j <= (long)(bj + 1) * g_bs; j++)
      v[i * g_n + j] = 0.25 * (u[(i - 1) * g_n + j] + u[(i + 1) * g_n + j] + u[i * g_n + j - 1] +
                               u[i * g_n + j + 1] + f[i * g_n + j]);
}

static void init(double* u, double* v, double* f) {
  for (long i = 0; i < g_n; i++)
    for (long j = 0; j < g_n; j++) {
      const int edge = i == 0 || j == 0 || i == g_n - 1 || j == g_n - 1;
      u[i * g_n + j] = v[i * g_n + j] = edge ? (double)((i * 7 + j * 3) % 11) : 0.0;
      f[i * g_n + j] = (double)((i * j) % 5) * 0.01;
    }
}

int main(int argc, char** argv) {
  g_nb = (int)suite_arg(argc, argv, 1, 8, 1, 4096, "nb");
  g_bs = (int)suite_arg(argc, argv, 2, 8, 1, 4096, "bs");
  const int iters = (int)suite_arg(argc, argv, 3, 20, 0, 1000000, "iters");
  g_n = (long)g_nb * g_bs + 2;
  const size_t cells = (size_t)(g_n * g_n);
  double *a = malloc(cells * sizeof *a), *b = malloc(cells * sizeof *b);
  double *ra = malloc(cells * sizeof *ra), *rb = malloc(cells * sizeof *rb);
  double* f = malloc(cells * sizeof *f);
  if (!a || !b || !ra || !rb || !f) { perror("malloc"); return 2; }
  init(a, b, f);
  init(ra, rb, f);
  const int nb = g_nb;
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  for (int it = 0; it < iters; it++) {
    double* u = it % 2 ? b : a;
    double* v = it % 2 ? a : b;
    for (int bi = 0; bi < nb; bi++)
      for (int bj = 0; bj < nb; bj++) {
        /* Clamped neighbours at the edges: a block listed twice is the same dependence. */
        const int up = bi > 0 ? bi - 1 : bi, down = bi < nb - 1 ? bi + 1 : bi;
        const int left = bj > 0 ? bj - 1 : bj, right = bj < nb - 1 ? bj + 1 : bj;
#pragma omp task firstprivate(u, v, bi, bj) SUITE_UNTIED                                  \
    depend(in : BLK(u, bi, bj), BLK(u, up, bj), BLK(u, down, bj), BLK(u, bi, left),       \
               BLK(u, bi, right)) depend(out : BLK(v, bi, bj))
        sweep_block(u, v, f, bi, bj);
      }
    if ((it + 1) % WINDOW == 0) {
#pragma omp taskwait
    }
  }
  const double t1 = omp_get_wtime();

  for (int it = 0; it < iters; it++)
    for (int bi = 0; bi < nb; bi++)
      for (int bj = 0; bj < nb; bj++) sweep_block(it % 2 ? rb : ra, it % 2 ? ra : rb, f, bi, bj);
  const double* out = iters % 2 ? b : a;
  const double* ref = iters % 2 ? rb : ra;
  double sum = 0;
  for (size_t k = 0; k < cells; k++) sum += out[k];
  char what[64], res[32];
  snprintf(what, sizeof what, "jacobi nb=%d bs=%d iters=%d", g_nb, g_bs, iters);
  snprintf(res, sizeof res, "%.9e", sum);
  suite_report(what, res, (unsigned long long)iters * nb * nb, t1 - t0,
               memcmp(out, ref, cells * sizeof *out) == 0);
  free(a), free(b), free(ra), free(rb), free(f);
  return 0;
}
