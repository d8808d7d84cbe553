// bench/fault_tail.c MIB: the time this machine takes to fault fresh memory in, page by page.
//
// Why: a program's start-up (the runtime's first allocations, the first tasks' stacks, the
// first construct) touches fresh memory, and its strands there are unique (nothing of the same
// code to judge them by), so a slow page fault in one of them lengthens the span of a recording
// as any other work would. On a virtual machine whose host backs guest memory lazily (or takes
// freed memory back), one fault in a few hundred can take 10 us to milliseconds instead of 1-2
// us. bench/repro.sh prints this next to its figures so that a miss can be read against it.
//
// Maps MIB MiB of anonymous memory, writes one byte per page, timing each write with
// CLOCK_MONOTONIC, and prints one line: pages, median, p99, p99.9 and max per fault in us, and
// how many faults took more than 10 us and how long they took in all.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  long mib = argc > 1 ? strtol(argv[1], NULL, 10) : 64;
  if (mib < 1 || mib > 65536) {
    fprintf(stderr, "fault_tail: MIB must be 1..65536 (got %s)\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t bytes = (size_t)mib << 20, pages = bytes / page;
  char* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  double* us = malloc(pages * sizeof *us);
  if (p == MAP_FAILED || !us) {
    perror("fault_tail");
    return 1;
  }
  // No transparent huge pages: one fault per page, as a program's scattered first touches.
  madvise(p, bytes, MADV_NOHUGEPAGE);
  for (size_t i = 0; i < pages; ++i) {
    const double t0 = now_us();
    ((volatile char*)p)[i * page] = 1;
    us[i] = now_us() - t0;
  }
  double slow_us = 0;
  size_t slow = 0;
  for (size_t i = 0; i < pages; ++i)
    if (us[i] > 10) {
      ++slow;
      slow_us += us[i];
    }
  qsort(us, pages, sizeof *us, by_value);
  printf("page faults: %zu pages of %zu KiB, median %.1f us, p99 %.1f us, p99.9 %.1f us, "
         "max %.0f us; %zu over 10 us (%.1f ms in all)\n",
         pages, page / 1024, us[pages / 2], us[pages * 99 / 100], us[pages * 999 / 1000],
         us[pages - 1], slow, slow_us / 1000);
  return 0;
}
