/* sem_user_threads.c: threads the program starts itself (pthread_create) that run OpenMP.
 *
 *   usage: sem_user_threads [a=10000] [b=20000] [L=40000] [c=10000]
 *
 * main spins a units, starts two threads with pthread_create, spins b units of its own, joins
 * both threads (pthread_join) and spins c units. Each thread runs a `parallel num_threads(2)`
 * region whose two implicit tasks spin L units each.
 *
 * Analytic profile (units):
 *   work           W = a + b + c + 4 L
 *   span           S = a + max(b, L) + c      (the threads run beside main's b, and main's c
 *                                              waits for both)
 *   parallelism    W / S
 *
 *   defaults / tests (a=10000, b=20000, L=40000, c=10000): W = 200000, S = 60000, W/S = 3.333
 *   (a tool that did not see the threads start and end would count main's time blocked in
 *   pthread_join as its work, and the threads' work as parallel to everything: W/S near 2.5 on
 *   two cores, varying with the schedule)
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>

#include "work.h"

static unsigned long g_len;

static void* thread_main(void* arg) {
  (void)arg;
#pragma omp parallel num_threads(2)  // site: ut-parallel
  tl_work(g_len);
  return NULL;
}

int main(int argc, char** argv) {
  const unsigned long a = tl_arg(argc, argv, 1, 10000, "a");
  const unsigned long b = tl_arg(argc, argv, 2, 20000, "b");
  g_len = tl_arg(argc, argv, 3, 40000, "L");
  const unsigned long c = tl_arg(argc, argv, 4, 10000, "c");

  tl_work(a);
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    if (pthread_create(&threads[i], NULL, thread_main, NULL) != 0) {  // site: ut-thread
      fprintf(stderr, "sem_user_threads: pthread_create failed\n");
      return 1;
    }
  }
  tl_work(b);
  for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  tl_work(c);

  printf("sem_user_threads: 2 threads joined\n");
  tl_print_analytic(a + b + c + 4 * g_len, a + (b > g_len ? b : g_len) + c);
  return 0;
}
