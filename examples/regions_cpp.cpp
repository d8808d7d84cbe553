// regions_cpp.cpp: the C++ scope guards of include/tasklens/tasklens.h in an OpenMP task program.
//
//   usage: regions_cpp [n=8] [g=2000]
//
// main runs region "cpp-main" (TASKLENS_REGION) around everything. From a `single` inside a
// `parallel` region, region "cpp-spawn" creates n tasks and waits for them. Each task runs
// cpp_leaf: region "cpp-leaf" (g units) around a scope with two guards, "cpp-inner" and
// "cpp-inner-2" (g units), which end in reverse order. Last, a tasklens::Region named at run
// time ("cpp-n<n>", from a std::string) around g units, and a region left by an exception
// ("cpp-throw"): the guard ends it during unwinding.
//
// Every region begins and ends in one tied task: balanced and properly nested on every thread.
//
// Analytic profile (units of tl_work):
//   work           W = (2 n + 1) g
//   span           S = 3 g
//   parallelism    W / S = (2 n + 1) / 3
//
//   defaults / tests (n=8, g=2000): W = 34000, S = 6000, W/S = 5.67
#include <omp.h>
#include <tasklens/tasklens.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "work.h"

namespace {

unsigned long g_units;

void cpp_leaf() {
  TASKLENS_REGION("cpp-leaf");
  tl_work(g_units);
  {
    TASKLENS_REGION("cpp-inner");
    TASKLENS_REGION("cpp-inner-2");  // two guards in one scope: distinct variables
    tl_work(g_units);
  }
}

void throws() {
  TASKLENS_REGION("cpp-throw");
  throw std::runtime_error("ended by unwinding");
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned long n = tl_arg(argc, argv, 1, 8, "n");
  g_units = tl_arg(argc, argv, 2, 2000, "g");
  std::fprintf(stderr, "regions_cpp: %s\n",
               tasklens_region_begin ? "annotations live (recorder loaded)" : "annotations off");

  int done = 0;
  {
    TASKLENS_REGION("cpp-main");
#pragma omp parallel  // site: regions-cpp-parallel
#pragma omp single
    {
      TASKLENS_REGION("cpp-spawn");
      for (unsigned long i = 0; i < n; i++) {
#pragma omp task shared(done)  // site: regions-cpp-task
        {
          cpp_leaf();
          __atomic_add_fetch(&done, 1, __ATOMIC_SEQ_CST);
        }
      }
#pragma omp taskwait
    }

    const std::string name = "cpp-n" + std::to_string(n);
    {
      tasklens::Region region(name.c_str());
      tl_work(g_units);
    }
    try {
      throws();
    } catch (const std::exception&) {
    }
  }

  const bool ok = done == static_cast<int>(n);
  std::printf("regions_cpp: %d of %lu tasks ran: %s\n", done, n, ok ? "ok" : "WRONG");
  tl_print_analytic((2 * n + 1) * g_units, 3 * g_units);
  return ok ? 0 : 1;
}
