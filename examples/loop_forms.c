/* loop_forms.c: n independent, equal iterations of w units in each way OpenMP writes a loop.
 *
 *   usage: loop_forms FORM [n=64] [w=2000]
 *
 * Forms (n a multiple of 8):
 *   static        parallel for                             (no schedule clause)
 *   static_chunk  parallel for schedule(static, 4)
 *   dynamic       parallel for schedule(dynamic, 4)
 *   guided        parallel for schedule(guided)
 *   runtime       parallel for schedule(runtime)            (OMP_SCHEDULE, static by default)
 *   collapse      parallel for collapse(2)                  over n/8 x 8
 *   reduction     parallel for reduction(+ : sum)
 *   nowait        two `for nowait` loops of n iterations each in one region: W and S double
 *   taskloop_grainsize   single + taskloop grainsize(4)
 *   taskloop_num_tasks   single + taskloop num_tasks(8)
 *   tasks_loops   4 tasks, each running a (nested, so one-thread) parallel for of n/4 iterations
 *   imbalanced    parallel for (static): the second half of the iterations cost 2w each
 *   ordered       parallel for ordered: each iteration's w, then an ordered part of w/8
 *
 * The loop's logical parallelism is its iteration count, whatever the team: every form but
 * nowait and imbalanced has W = n w, S = w, W/S = n (for nowait W = 2 n w, S = 2 w). The span is
 * one iteration because iterations are independent; a thread's share of a static schedule is n/T
 * iterations run one after the other, which is the schedule, not the program.
 * imbalanced: W = 1.5 n w; its static shares differ (with 2 threads the second share costs 2x the
 * first), which the report shows as a finding.
 * ordered: the ordered parts run one after the other in iteration order, each after its own
 * iteration's body: W = n (w + w/8), S = w + n w/8 (the first body, then every ordered part);
 * defaults: W = 144000, S = 18000, W/S = 8.
 *
 * Measured notes: gcc computes static shares itself (static, static_chunk, collapse, reduction,
 * nowait, runtime's default and the nested loops of tasks_loops make no runtime call), so with
 * gcc those loops are not seen at all and their regions' parallelism is the team's; the report
 * says so.
 *
 *   defaults (n=64, w=2000): W = 128000, S = 2000, W/S = 64
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "work.h"

/* clang's taskloop compares its unsigned trip count with the loop's bound (-Wsign-compare). */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wsign-compare"
#endif

static double cell(unsigned long i) { return (double)(i % 7) * 0.5; }

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: loop_forms FORM [n=64] [w=2000]\n");
    return 2;
  }
  const char* form = argv[1];
  const long n = (long)tl_arg(argc, argv, 2, 64, "n");
  const unsigned long w = tl_arg(argc, argv, 3, 2000, "w");
  if (n % 8 != 0) {
    fprintf(stderr, "loop_forms: n must be a multiple of 8\n");
    return 2;
  }
  double sum = 0;
  unsigned long work = n * w, span = w;

  if (!strcmp(form, "static")) {
#pragma omp parallel for  // site: static
    for (long i = 0; i < n; i++) tl_work(w);
  } else if (!strcmp(form, "static_chunk")) {
#pragma omp parallel for schedule(static, 4)  // site: static_chunk
    for (long i = 0; i < n; i++) tl_work(w);
  } else if (!strcmp(form, "dynamic")) {
#pragma omp parallel for schedule(dynamic, 4)  // site: dynamic
    for (long i = 0; i < n; i++) tl_work(w);
  } else if (!strcmp(form, "guided")) {
#pragma omp parallel for schedule(guided)  // site: guided
    for (long i = 0; i < n; i++) tl_work(w);
  } else if (!strcmp(form, "runtime")) {
#pragma omp parallel for schedule(runtime)  // site: runtime
    for (long i = 0; i < n; i++) tl_work(w);
  } else if (!strcmp(form, "collapse")) {
#pragma omp parallel for collapse(2)  // site: collapse
    for (long i = 0; i < n / 8; i++)
      for (long j = 0; j < 8; j++) tl_work(w);
  } else if (!strcmp(form, "reduction")) {
#pragma omp parallel for reduction(+ : sum)  // site: reduction
    for (long i = 0; i < n; i++) {
      tl_work(w);
      sum += cell(i);
    }
  } else if (!strcmp(form, "nowait")) {
#pragma omp parallel
    {
#pragma omp for nowait  // site: nowait-a
      for (long i = 0; i < n; i++) tl_work(w);
#pragma omp for nowait  // site: nowait-b
      for (long i = 0; i < n; i++) tl_work(w);
    }
    work = 2 * n * w;
    span = 2 * w;
  } else if (!strcmp(form, "taskloop_grainsize")) {
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(4)  // site: taskloop_grainsize
    for (int i = 0; i < (int)n; i++) tl_work(w);
  } else if (!strcmp(form, "taskloop_num_tasks")) {
#pragma omp parallel
#pragma omp single
#pragma omp taskloop num_tasks(8)  // site: taskloop_num_tasks
    for (int i = 0; i < (int)n; i++) tl_work(w);
  } else if (!strcmp(form, "tasks_loops")) {
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < 4; t++) {
#pragma omp task  // site: tasks_loops-task
      {
#pragma omp parallel for  // site: tasks_loops-loop
        for (long i = 0; i < n / 4; i++) tl_work(w);
      }
    }
  } else if (!strcmp(form, "imbalanced")) {
#pragma omp parallel for  // site: imbalanced
    for (long i = 0; i < n; i++) tl_work(i < n / 2 ? w : 2 * w);
    work = n / 2 * w + n / 2 * 2 * w;
    span = 2 * w;  // with 2 or more threads: the costlier half's iterations
  } else if (!strcmp(form, "ordered")) {
#pragma omp parallel for ordered  // site: ordered
    for (long i = 0; i < n; i++) {
      tl_work(w);
#pragma omp ordered
      tl_work(w / 8);
    }
    work = n * (w + w / 8);
    span = w + n * (w / 8);
  } else {
    fprintf(stderr, "loop_forms: unknown form '%s'\n", form);
    return 2;
  }
  printf("%s: %ld iterations of %lu units (sum %.1f)\n", form, n, w, sum);
  tl_print_analytic(work, span);
  return 0;
}
