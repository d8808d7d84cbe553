/* sem_exec.c: an OpenMP program that runs tasks and then replaces itself with exec.
 *
 *   usage: sem_exec [n=32] [w=2000] [program=/bin/true]
 *
 * A `single` inside `parallel num_threads(2)` creates n tasks of w units and waits for them;
 * then main() prints a line and calls execl(program). Nothing of the process survives the exec
 * (no atexit handler, no destructor): `tasklens record` must keep the n tasks that ran before it,
 * say that the program called exec, and not record the new program (nor let it write into the
 * trace). The exit code is the new program's (/bin/true: 0).
 *
 * Analytic profile of the work before the exec (units):
 *   work           W = n w
 *   span           S = w
 *   parallelism    W / S = n
 */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#include "work.h"

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 32, "n");
  const unsigned long w = tl_arg(argc, argv, 2, 2000, "w");
  const char* program = argc > 3 ? argv[3] : "/bin/true";
  int done = 0;

#pragma omp parallel num_threads(2)  // site: exec-parallel
#pragma omp single
  for (unsigned long i = 0; i < n; i++) {
#pragma omp task shared(done)  // site: exec-task
    {
      tl_work(w);
      __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
    }
  }

  printf("ran %d tasks; exec %s\n", done, program);
  fflush(stdout);
  execl(program, program, (char*)NULL);
  perror("execl");
  return 127;
}
