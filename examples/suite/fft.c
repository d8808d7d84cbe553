/* fft.c: a recursive radix-2 fast Fourier transform (in the style of BOTS fft).
 *
 *   usage: suite_fft_<variant> [log2n=12] [cutoff=6]
 *
 * fft(in, stride, out, n): the transforms of the even and of the odd samples in two tasks, a
 * taskwait, then the butterflies combining them, split recursively into tasks of BUTTERFLY_LEAF
 * butterflies (BOTS's fft_twiddle); transforms of LEAF points or fewer run sequentially.
 * Every call returns the tasks it created below it. tasks, without a cut-off: 3584 for
 * log2n = 12 (tests), 1441792 for log2n = 20 (a bench size).
 * The input is deterministic; the output is checked with Parseval's identity and 16 of its
 * points against the direct DFT sum. The result printed is the output's energy, rounded.
 */
#include <complex.h>
#include <math.h>

#include "suite.h"

#define LEAF 4
#define BUTTERFLY_LEAF 16

typedef double complex cplx;

static void fft_seq(const cplx* in, long stride, cplx* out, long n) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  const long h = n / 2;
  fft_seq(in, 2 * stride, out, h);
  fft_seq(in + stride, 2 * stride, out + h, h);
  for (long k = 0; k < h; k++) {
    const cplx w = cexp(-2.0 * M_PI * I * (double)k / (double)n) * out[k + h];
    const cplx e = out[k];
    out[k] = e + w;
    out[k + h] = e - w;
  }
}

/* The butterflies k = lo..hi-1 of a transform of n points held in out[0..n). */
static unsigned long long butterflies(cplx* out, long n, long lo, long hi, int depth) {
  const long h = n / 2;
  if (hi - lo <= BUTTERFLY_LEAF || SUITE_SERIAL(depth)) {
    for (long k = lo; k < hi; k++) {
      const cplx w = cexp(-2.0 * M_PI * I * (double)k / (double)n) * out[k + h];
      const cplx e = out[k];
      out[k] = e + w;
      out[k + h] = e - w;
    }
    return 0;
  }
  const long mid = lo + (hi - lo) / 2;
  unsigned long long a = 0, b = 0;
#pragma omp task shared(a) SUITE_UNTIED SUITE_CUTOFF(depth)
  a = butterflies(out, n, lo, mid, depth + 1);
#pragma omp task shared(b) SUITE_UNTIED SUITE_CUTOFF(depth)
  b = butterflies(out, n, mid, hi, depth + 1);
#pragma omp taskwait
  return 2 + a + b;
}

static unsigned long long fft(const cplx* in, long stride, cplx* out, long n, int depth) {
  if (n <= LEAF || SUITE_SERIAL(depth)) {
    fft_seq(in, stride, out, n);
    return 0;
  }
  const long h = n / 2;
  unsigned long long a = 0, b = 0;
#pragma omp task shared(a) SUITE_UNTIED SUITE_CUTOFF(depth)
  a = fft(in, 2 * stride, out, h, depth + 1);
#pragma omp task shared(b) SUITE_UNTIED SUITE_CUTOFF(depth)
  b = fft(in + stride, 2 * stride, out + h, h, depth + 1);
#pragma omp taskwait
  return 2 + a + b + butterflies(out, n, 0, h, depth);
}

int main(int argc, char** argv) {
  const int lg = (int)suite_arg(argc, argv, 1, 12, 0, 26, "log2n");
  suite_cutoff_arg(argc, argv, 2, 6);
  const long n = 1L << lg;
  cplx* in = malloc((size_t)n * sizeof *in);
  cplx* out = malloc((size_t)n * sizeof *out);
  if (!in || !out) { perror("malloc"); return 2; }
  uint64_t rng = 11;
  double e_in = 0;
  for (long i = 0; i < n; i++) {
    in[i] = (suite_rand(&rng) - 0.5) + (suite_rand(&rng) - 0.5) * I;
    e_in += creal(in[i] * conj(in[i]));
  }
  unsigned long long tasks = 0;
  const double t0 = omp_get_wtime();
#pragma omp parallel
#pragma omp single
  tasks = fft(in, 1, out, n, 0);
  const double t1 = omp_get_wtime();

  double e_out = 0;
  for (long i = 0; i < n; i++) e_out += creal(out[i] * conj(out[i]));
  int ok = fabs(e_out / (double)n - e_in) <= 1e-9 * e_in;  /* Parseval */
  for (int s = 0; s < 16; s++) {
    const long k = (long)(suite_mix((uint64_t)s) % (uint64_t)n);
    cplx d = 0;
    for (long j = 0; j < n; j++)
      d += in[j] * cexp(-2.0 * M_PI * I * (double)((j * k) % n) / (double)n);
    if (cabs(d - out[k]) > 1e-8 * sqrt(e_in)) ok = 0;
  }
  char what[32], res[32];
  snprintf(what, sizeof what, "fft n=%ld", n);
  snprintf(res, sizeof res, "%.6e", e_out);
  suite_report(what, res, tasks, t1 - t0, ok);
  free(in);
  free(out);
  return 0;
}
