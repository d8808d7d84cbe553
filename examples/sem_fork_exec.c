/* sem_fork_exec.c: fork and exec in an OpenMP program.
 *
 *   usage: sem_fork_exec [k=4] [w=40000] [wc=5000]
 *
 * The parent runs region 1 (k tasks of w units from a `single` in `parallel num_threads(2)`),
 * then forks a child that runs its own region (k tasks of wc units) and ends with exit(0) (so its
 * atexit handlers and destructors run), and a second child that execs /bin/true; meanwhile the
 * parent runs region 2 (k tasks of w units), then waits for both children (which have ended by
 * then: the parent's waiting, serial time of its own, is short). Only the parent's work belongs to
 * the trace: the children's OpenMP work must not be counted, and neither the children nor /bin/true
 * may damage the parent's trace.
 *
 * Analytic profile of the parent (units):
 *   work           W = 2 k w
 *   span           S = 2 w
 *   parallelism    W / S = k
 *
 *   defaults / tests (k=4, w=40000, wc=5000): W = 320000, S = 80000, W/S = 4
 *   (the forked child's k tasks would make 3k tasks at the task site instead of 2k, and its
 *   k wc = 20000 units would make W = 340000, if they were counted. The child's work is small so
 *   that it ends long before the parent's region 2 even on a loaded machine.)
 *
 * Note: libgomp (gcc's runtime, used when the gcc build runs outside tasklens) does not support
 * OpenMP in the child of a fork once the parent has used it (the child hangs). The program looks
 * for libomp's entry point __kmpc_fork_call; without it the child spins k wc units serially
 * instead. tasklens runs gcc builds under libomp, so there the child does use OpenMP.
 */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "work.h"

static int region(unsigned long k, unsigned long w) {
  int done = 0;
#pragma omp parallel num_threads(2)  // site: fork-parallel
#pragma omp single
  for (unsigned long i = 0; i < k; i++) {
#pragma omp task shared(done)  // site: fork-task
    {
      tl_work(w);
      __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
    }
  }
  return done;
}

int main(int argc, char** argv) {
  const unsigned long k = tl_arg(argc, argv, 1, 4, "k");
  const unsigned long w = tl_arg(argc, argv, 2, 40000, "w");
  const unsigned long wc = tl_arg(argc, argv, 3, 5000, "wc");

  int done = region(k, w);
  fflush(stdout);
  /* Both children start before region 2 and are done long before it ends, so the parent does not
   * wait for them (waiting would be serial time of its own). */
  const pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  if (child == 0) {
    int child_done = (int)k;
    if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call") != NULL) {
      child_done = region(k, wc);
    } else {
      tl_work(k * wc);  // libgomp: no OpenMP after fork
    }
    exit(child_done == (int)k ? 0 : 1);
  }
  const pid_t execer = fork();
  if (execer < 0) {
    perror("fork");
    return 1;
  }
  if (execer == 0) {
    execl("/bin/true", "true", (char*)NULL);
    _exit(127);
  }
  done += region(k, w);
  int status = 0, exec_status = 0;
  if (waitpid(child, &status, 0) != child || waitpid(execer, &exec_status, 0) != execer) {
    perror("waitpid");
    return 1;
  }

  const int ok = done == (int)(2 * k) && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                 WIFEXITED(exec_status) && WEXITSTATUS(exec_status) == 0;
  printf("parent ran %d tasks; forked child exit %d; exec child exit %d: %s\n", done,
         WIFEXITED(status) ? WEXITSTATUS(status) : -1,
         WIFEXITED(exec_status) ? WEXITSTATUS(exec_status) : -1, ok ? "ok" : "WRONG");
  tl_print_analytic(2 * k * w, k ? 2 * w : 0);
  return ok ? 0 : 1;
}
