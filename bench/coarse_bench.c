/* coarse_bench.c: the coarse-grained recording benchmark (see docs/benchmarks.md).
 *
 *   usage: coarse_bench [tasks=6000] [reps=3]
 *
 * One thread (a `single`) creates `tasks` independent tasks; each one multiplies two small dense
 * matrices of its own `reps` times (real floating-point work, L1-resident, no spinning). Task i
 * uses matrices of size m = 28 + 3 (i % 5), so the tasks come in five sizes whose cost ranges over
 * about 2.9x. With the defaults a task takes tens of microseconds, so the few
 * events the recorder writes per task are a tiny fraction of the run.
 *
 * Prints a checksum, the number of tasks, the time of the parallel region and the min / median /
 * mean / max task duration (measured inside each task with clock_gettime; the max includes any
 * preemption) on stdout.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_M 40

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* C = A * B for m x m matrices stored with row stride MAX_M. */
static void matmul(int m, const double* A, const double* B, double* C) {
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < m; j++) C[i * MAX_M + j] = 0.0;
    for (int k = 0; k < m; k++) {
      const double a = A[i * MAX_M + k];
      for (int j = 0; j < m; j++) C[i * MAX_M + j] += a * B[k * MAX_M + j];
    }
  }
}

/* The work of task i: returns a checksum of its products. */
static double task_body(long i, int reps) {
  double A[MAX_M * MAX_M], B[MAX_M * MAX_M], C[MAX_M * MAX_M];
  const int m = 28 + 3 * (int)(i % 5);
  for (int r = 0; r < m; r++)
    for (int c = 0; c < m; c++) {
      A[r * MAX_M + c] = (double)((r * 7 + c * 3 + i) % 17) / 16.0;
      B[r * MAX_M + c] = (double)((r * 5 + c * 11 + 2 * i) % 19) / 18.0;
    }
  double sum = 0.0;
  for (int rep = 0; rep < reps; rep++) {
    matmul(m, A, B, C);
    sum += C[(rep % m) * MAX_M + (i + rep) % m];
    A[(rep % m) * MAX_M] = C[rep % m] / (double)m; /* every repetition depends on the last */
  }
  return sum;
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 6000;
  const int reps = argc > 2 ? atoi(argv[2]) : 3;
  if (n < 1 || n > 10000000 || reps < 1 || reps > 100000) {
    fprintf(stderr, "usage: %s [tasks=6000 (1..1e7)] [reps=3 (1..1e5)]\n", argv[0]);
    return 2;
  }
  double* result = calloc((size_t)n, sizeof *result);
  double* dur = calloc((size_t)n, sizeof *dur);
  if (!result || !dur) {
    fprintf(stderr, "%s: out of memory\n", argv[0]);
    return 1;
  }
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  for (long i = 0; i < n; i++) {
#pragma omp task firstprivate(i)
    {
      const double s = now();
      result[i] = task_body(i, reps);
      dur[i] = now() - s;
    }
  }
  const double t1 = omp_get_wtime();

  double sum = 0.0, dsum = 0.0;
  for (long i = 0; i < n; i++) {
    sum += result[i];
    dsum += dur[i];
  }
  qsort(dur, (size_t)n, sizeof *dur, cmp_double);
  printf(
      "checksum=%.6f tasks=%ld threads=%d region=%.6f s "
      "task_us min=%.1f median=%.1f mean=%.1f max=%.1f\n",
      sum, n, omp_get_max_threads(), t1 - t0, 1e6 * dur[0], 1e6 * dur[n / 2],
      1e6 * dsum / (double)n, 1e6 * dur[n - 1]);
  free(result);
  free(dur);
  return 0;
}
