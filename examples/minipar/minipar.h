// minipar.h: a tiny header-only parallel-algorithms library, written the way such libraries
// wrap their backends (their OpenMP backend runs par_do as tasks and parallel_for as a taskloop;
// their oneTBB backend calls tbb::parallel_for). Every construct is created inside this header,
// inlined into the caller: a profiler that names the construct's own line names this file for
// every algorithm of every program. tasklens names the caller's line when this directory is a
// library's (`--library-path minipar`, or the header installed under /usr/include), with this
// header's line kept as detail (e2e_diagnosis_test).
#pragma once

#if defined(MINIPAR_TBB)
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#endif

namespace minipar {

#if defined(MINIPAR_TBB)
// f(i) for 0 <= i < n, in chunks of `grain` iterations.
template <class F>
inline void parallel_for(long n, long grain, F f) {
  ::tbb::parallel_for(::tbb::blocked_range<long>(0, n, grain),
                      [&f](const ::tbb::blocked_range<long>& r) {
                        for (long i = r.begin(); i != r.end(); ++i) f(i);
                      });
}
#else
// f(i) for 0 <= i < n, `grain` iterations per task. Call it inside a parallel region.
// (clang's taskloop compares its unsigned trip count with the loop's bound: not ours to fix.)
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wsign-compare"
#endif
template <class F>
inline void parallel_for(long n, long grain, F f) {
#pragma omp taskloop grainsize(grain)
  for (long i = 0; i < n; ++i) f(i);
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

// f() and g() side by side; returns when both are done.
template <class F, class G>
inline void par_do(F f, G g) {
#pragma omp task
  f();
  g();
#pragma omp taskwait
}
#endif

}  // namespace minipar
