/* alignment.c: all-pairs sequence alignment, tasks created from a loop (BOTS alignment).
 *
 *   usage: suite_alignment_<variant> [nseq=60] [len=20] [mode=0]
 *
 * nseq deterministic random protein-like sequences of about len letters; a task per pair (i, j),
 * i < j, computes their global alignment score (Needleman-Wunsch, linear gap penalty, a simple
 * substitution score) into its own cell of the score matrix. The tasks come from a loop:
 *   mode 0 (BOTS alignment_single): one thread runs the loop over i and j;
 *   mode 1 (BOTS alignment_for): a worksharing loop over i (schedule dynamic), each thread
 *     creating the tasks of its rows.
 * tasks = nseq (nseq - 1) / 2: 1770 for nseq = 60 (tests), 1124250 for nseq = 1500 with len = 12
 * (a bench size). Checked: every 7th score against a sequential computation; the result is the
 * sum of all scores. No cut-off variant (the tasks do not nest).
 */
#include "suite.h"

#define GAP (-2)
#define MAXLEN 256

static int g_n;
static char** g_seq;
static int* g_len;
static int* g_score;

static int subst(char a, char b) { return a == b ? 3 : ((a ^ b) & 1) ? -1 : 0; }

static int align(const char* a, int na, const char* b, int nb) {
  int row[MAXLEN + 1];
  for (int j = 0; j <= nb; j++) row[j] = j * GAP;
  for (int i = 1; i <= na; i++) {
    int diag = row[0];
    row[0] = i * GAP;
    for (int j = 1; j <= nb; j++) {
      int best = diag + subst(a[i - 1], b[j - 1]);
      if (row[j] + GAP > best) best = row[j] + GAP;
      if (row[j - 1] + GAP > best) best = row[j - 1] + GAP;
      diag = row[j];
      row[j] = best;
    }
  }
  return row[nb];
}

static void pair(int i, int j) {
  g_score[(long)i * g_n + j] = align(g_seq[i], g_len[i], g_seq[j], g_len[j]);
}

int main(int argc, char** argv) {
  g_n = (int)suite_arg(argc, argv, 1, 60, 2, 20000, "nseq");
  const int len = (int)suite_arg(argc, argv, 2, 20, 2, MAXLEN / 2, "len");
  const int mode = (int)suite_arg(argc, argv, 3, 0, 0, 1, "mode");
  g_seq = malloc((size_t)g_n * sizeof *g_seq);
  g_len = malloc((size_t)g_n * sizeof *g_len);
  g_score = calloc((size_t)g_n * g_n, sizeof *g_score);
  if (!g_seq || !g_len || !g_score) { perror("malloc"); return 2; }
  uint64_t rng = 99;
  for (int i = 0; i < g_n; i++) {
    g_len[i] = len / 2 + (int)(suite_rand(&rng) * len);  /* len/2 .. 3 len/2 */
    g_seq[i] = malloc((size_t)g_len[i]);
    if (!g_seq[i]) { perror("malloc"); return 2; }
    for (int k = 0; k < g_len[i]; k++)
      g_seq[i][k] = "ACDEFGHIKLMNPQRSTVWY"[(int)(suite_rand(&rng) * 20)];
  }
  unsigned long long tasks = 0;
  const double t0 = omp_get_wtime();
  if (mode == 0) {
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < g_n; i++)
      for (int j = i + 1; j < g_n; j++) {
#pragma omp task firstprivate(i, j) SUITE_UNTIED
        pair(i, j);
        tasks++;
      }
  } else {
#pragma omp parallel
#pragma omp for schedule(dynamic) reduction(+ : tasks)
    for (int i = 0; i < g_n; i++)
      for (int j = i + 1; j < g_n; j++) {
#pragma omp task firstprivate(i, j) SUITE_UNTIED
        pair(i, j);
        tasks++;
      }
  }
  const double t1 = omp_get_wtime();

  long sum = 0;
  int ok = 1;
  long k = 0;
  for (int i = 0; i < g_n; i++)
    for (int j = i + 1; j < g_n; j++, k++) {
      sum += g_score[(long)i * g_n + j];
      if (k % 7 == 0 && g_score[(long)i * g_n + j] != align(g_seq[i], g_len[i], g_seq[j], g_len[j]))
        ok = 0;
    }
  char what[64], res[32];
  snprintf(what, sizeof what, "alignment nseq=%d len=%d mode=%s", g_n, len,
           mode ? "for" : "single");
  snprintf(res, sizeof res, "%ld", sum);
  suite_report(what, res, tasks, t1 - t0, ok);
  for (int i = 0; i < g_n; i++) free(g_seq[i]);
  free(g_seq);
  free(g_len);
  free(g_score);
  return 0;
}
