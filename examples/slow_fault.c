/* slow_fault.c: tasks whose first touch of a memory block takes far longer than their other
 * page faults, the way a virtual machine's host or memory reclaim now and then holds one.
 *
 *   usage: slow_fault [k=4] [small=200]
 *
 * k tasks, created from a `single`, each touch `small` fresh small pages (a microsecond or two
 * each: the thread's usual fault) and then one transparent huge page (the kernel clears 2 MiB:
 * tens to hundreds of microseconds, all on the CPU), then sleep 120 ms (blocked: not work).
 * tasklens takes the part of such a fault beyond a usual one out of the work by default
 * (slow_faults_removed), and keeps it with --keep-slow-faults.
 *
 * Prints whether the kernel backed the blocks with huge pages (it may not: transparent huge
 * pages turned off, or no free 2 MiB of memory); without them no fault is slow.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "work.h"

#define PAGE 4096ul
#define HUGE_PAGE (2ul << 20)

static unsigned long anon_huge_kb(void) {
  FILE* f = fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  unsigned long kb = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) break;
  fclose(f);
  return kb;
}

int main(int argc, char** argv) {
  const unsigned long k = tl_arg(argc, argv, 1, 4, "k");
  const unsigned long small = tl_arg(argc, argv, 2, 200, "small");
  char* blocks =
      mmap(NULL, (k + 1) * HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char* pages =
      mmap(NULL, k * small * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (blocks == MAP_FAILED || pages == MAP_FAILED) {
    perror("slow_fault: mmap");
    return 1;
  }
  char* huge = (char*)(((uintptr_t)blocks + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
  madvise(huge, k * HUGE_PAGE, MADV_HUGEPAGE);
  madvise(pages, k * small * PAGE, MADV_NOHUGEPAGE);
  unsigned long done = 0;
#pragma omp parallel  // site: fault-parallel
#pragma omp single
  {
    for (unsigned long i = 0; i < k; i++) {
#pragma omp task shared(done)  // site: fault-task
      {
        volatile char* p = pages + i * small * PAGE;
        for (unsigned long j = 0; j < small; j++) p[j * PAGE] = 1;
        huge[i * HUGE_PAGE] = 1;
        struct timespec ts = {0, 120000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
#pragma omp atomic
        done++;
      }
    }
  }
  printf("slow_fault: %lu tasks done, huge pages: %s\n", done,
         anon_huge_kb() >= 2048 ? "yes" : "no");
  return done == k ? 0 : 1;
}
