/* regions.c: user region annotations (include/tasklens/tasklens.h) in an OpenMP task program.
 *
 *   usage: regions [n=8] [g=2000] [mode=0]
 *
 * main runs region "setup" (g units), then, from a `single` inside a `parallel` region, region
 * "tasks": it creates n tasks and waits for them (taskwait), then runs the nested region
 * "combine" (g units). Each task runs region "leaf" (g units) with the nested region
 * "leaf-inner" (g units) inside. Last, two serial phases of g units are named at run time in one
 * reused buffer ("phase-0", "phase-1": not literals, same address, different text).
 *
 * Every region begins and ends in one tied task, which never changes threads: on every thread the
 * regions are balanced and properly nested (a thread that runs leaves inside the taskwait of
 * "tasks" nests them inside it).
 *
 * With mode=1 the program then forks a child that runs region "forked-child" and exits: the
 * recorder must record nothing in the child. With mode=2 it pauses for 300 ms (the recorder
 * flushes its buffers every 100 ms) and kills itself with SIGKILL: the trace then ends without
 * the recorder's end, and must still name every region its events use. A destructor runs region
 * "after-finish" after the recorder has ended its trace (its atexit handler runs before
 * destructors): not recorded either.
 *
 * Whether the annotations are live (the tasklens recorder is loaded) goes to stderr, so that the
 * stdout of a plain run and of a recorded one are the same.
 *
 * Analytic profile (units of tl_work):
 *   work           W = (2 n + 4) g
 *   span           S = 6 g        (setup, a leaf and its inner region, combine, the two phases)
 *   parallelism    W / S = (n + 2) / 3
 *
 *   defaults / tests (n=8, g=2000): W = 40000, S = 12000, W/S = 3.33
 */
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <tasklens/tasklens.h>
#include <unistd.h>

#include "work.h"

static unsigned long g_units;

static void leaf(void) {
  TASKLENS_REGION_BEGIN("leaf");
  tl_work(g_units);
  TASKLENS_REGION_BEGIN("leaf-inner");
  tl_work(g_units);
  TASKLENS_REGION_END("leaf-inner");
  TASKLENS_REGION_END("leaf");
}

__attribute__((destructor)) static void after_finish(void) {
  TASKLENS_REGION_BEGIN("after-finish");
  TASKLENS_REGION_END("after-finish");
}

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 8, "n");
  g_units = tl_arg(argc, argv, 2, 2000, "g");
  const unsigned long mode = tl_arg(argc, argv, 3, 0, "mode");
  fprintf(stderr, "regions: %s\n",
          tasklens_region_begin ? "annotations live (recorder loaded)" : "annotations off");

  TASKLENS_REGION_BEGIN("setup");
  tl_work(g_units);
  TASKLENS_REGION_END("setup");

  int done = 0;
#pragma omp parallel  // site: regions-parallel
#pragma omp single
  {
    TASKLENS_REGION_BEGIN("tasks");
    for (unsigned long i = 0; i < n; i++) {
#pragma omp task shared(done)  // site: regions-task
      {
        leaf();
        __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
      }
    }
#pragma omp taskwait
    TASKLENS_REGION_BEGIN("combine");
    tl_work(g_units);
    TASKLENS_REGION_END("combine");
    TASKLENS_REGION_END("tasks");
  }

  char name[32];
  for (int phase = 0; phase < 2; phase++) {
    snprintf(name, sizeof name, "phase-%d", phase);
    TASKLENS_REGION_BEGIN(name);
    tl_work(g_units);
    TASKLENS_REGION_END(name);
  }

  int child_status = 0;
  if (mode == 1) {
    fflush(stdout);
    const pid_t child = fork();
    if (child < 0) {
      perror("fork");
      return 1;
    }
    if (child == 0) {
      TASKLENS_REGION_BEGIN("forked-child");
      tl_work(g_units);
      TASKLENS_REGION_END("forked-child");
      /* _exit: LLVM 16's libomp asserts (and hangs) in the exit handlers of a forked child that
       * did not use OpenMP itself (its registration file name is reset at the fork). */
      _exit(0);
    }
    if (waitpid(child, &child_status, 0) != child) {
      perror("waitpid");
      return 1;
    }
  }

  const int ok = done == (int)n && WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0;
  printf("regions: %d of %lu tasks ran%s: %s\n", done, n, mode == 1 ? ", forked child ok" : "",
         ok ? "ok" : "WRONG");
  if (mode == 2) {
    printf("regions: raising SIGKILL\n");
    fflush(stdout);
    usleep(300000);
    raise(SIGKILL);
  }
  tl_print_analytic((2 * n + 4) * g_units, 6 * g_units);
  return ok ? 0 : 1;
}
