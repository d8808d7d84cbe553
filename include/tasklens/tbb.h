/* tasklens/tbb.h: oneTBB's algorithms, telling tasklens where each one was called from.
 *
 *   #include <tasklens/tbb.h>                 instead of (or beside) <oneapi/tbb/...>
 *   namespace tbbx = tasklens::tbb;           instead of  namespace tbbx = ::tbb;
 *
 *   tbbx::parallel_for(tbbx::blocked_range<int>(0, n), body, tbbx::simple_partitioner());
 *   tbbx::task_group g;  g.run(f);  g.wait();
 *
 * Switching a program is that one include and that one namespace alias (or a search-and-replace
 * of `tbb::` in the calls): the wrappers take the same arguments as oneTBB's functions, call
 * them, and return what they return; every other name commonly used with them (blocked_range,
 * the partitioners, task_group_context, task_arena, combinable, the mutexes...) is oneTBB's own,
 * re-exported here. Write the calls qualified, as through an alias: an unqualified call whose
 * arguments are oneTBB types would also find oneTBB's function by argument-dependent lookup.
 *
 * Wrapped (C++17; oneTBB 2021):
 *   task_group        run, run_and_wait (also with a task_handle), wait, cancel, is_canceling
 *                     (oneTBB 2021 dropped is_canceling; here: is the group's context canceled),
 *                     defer as oneTBB's. Derives from ::tbb::task_group.
 *   parallel_invoke   2 to 10 functions, optionally followed by a task_group_context&
 *   parallel_for      (range, body [, partitioner] [, context]),
 *                     (first, last, f [, partitioner] [, context]),
 *                     (first, last, step, f [, partitioner] [, context])
 *   parallel_reduce   (range, identity, real_body, reduction [, partitioner] [, context]),
 *                     (range, body [, partitioner] [, context])
 *   parallel_sort     (begin, end [, comp]), (container [, comp])
 * Re-exported unchanged (not attributed to a site of their own): parallel_for_each,
 * parallel_scan, parallel_deterministic_reduce, parallel_pipeline and the other names of the
 * using-declarations below.
 *
 * What tasklens learns. Each wrapper takes a last parameter, defaulted to its caller's file:line
 * and function (source_location::current(), from __builtin_FILE/LINE/FUNCTION: gcc and clang, C++17
 * and later; for a call over several lines, the line of the function's name). Before calling oneTBB
 * it reports that site and the kind of call to the recorder (tasklens_tbb_site; task_group::run,
 * run_and_wait: kind_run; wait: kind_wait; cancel: kind_other), and clears it when the call returns
 * or throws (tasklens_tbb_site_clear): the site is pending on the calling thread meanwhile, and
 * applies to the oneTBB calls this thread makes until cleared. task_group::run and wait make one
 * such call each (a spawn, a wait): they report their site with tasklens_tbb_site_once instead, the
 * recorder takes it at that call, and they clear it only if oneTBB throws (two calls into the
 * recorder per task saved). Calls nest (a parallel_for in a function that parallel_invoke runs as a
 * task on the calling thread): every other site is followed by its own clear on the same thread,
 * last in first out. parallel_for and parallel_reduce also mark every invocation of the user's body
 * on a subrange (a chunk) with tasklens_tbb_chunk_begin / tasklens_tbb_chunk_end, on the thread
 * that runs it, the end even when the body throws: the range form's body on each subrange; for the
 * index forms (implemented, as oneTBB does, as the range form over a blocked_range of step counts
 * with grainsize 1) one chunk per subrange, which loops over its indices; the body form of
 * parallel_reduce, each operator() of the user's body or of its split copies; the functional form,
 * each real_body(range, value).
 *
 * Nothing to link, nearly nothing to pay, as with tasklens.h's regions: the five functions are
 * declared as weak symbols and defined only by the recorder that `tasklens record` preloads.
 * Without it their addresses are null, and a wrapper call or a chunk costs one load and one
 * branch not taken; everything is inline. Same build requirement as tasklens.h: compile as
 * position-independent code (-fPIE, the default of gcc and clang on Debian; -fPIC in a shared
 * library), or the sites are silently not recorded; statically linked programs cannot be
 * recorded.
 *
 * Results are oneTBB's: the same calls of the user's functions with the same arguments, the same
 * reductions and joins, the same exceptions, the same task_group_status. Bodies are copied as
 * oneTBB copies them (parallel_for's body once more, into the wrapper); parallel_reduce's body
 * form splits and joins the user's body itself (the root is the caller's object).
 *
 * Define TASKLENS_DISABLE before including this header to compile the reporting out: the
 * wrappers then only call oneTBB. Define TASKLENS_TBB_DECLARATIONS_ONLY to get only the four
 * functions (declared strong: for the recorder that defines them) and the kinds, without oneTBB.
 */
#ifndef TASKLENS_TBB_H
#define TASKLENS_TBB_H

#if !defined(TASKLENS_DISABLE) && !defined(__GNUC__)
/* Weak references need GCC or clang (or a compiler that mimics them): compile the reporting out
 * elsewhere. */
#define TASKLENS_DISABLE
#endif

namespace tasklens {
namespace tbb {

/* The kind of oneTBB call a site reports (the `kind` argument of tasklens_tbb_site). */
enum site_kind : unsigned {
  kind_run = 1,              // task_group::run, and run_and_wait (its task and its wait)
  kind_parallel_for = 2,     // parallel_for, every form
  kind_parallel_reduce = 3,  // parallel_reduce, both forms
  kind_parallel_invoke = 4,  // parallel_invoke
  kind_parallel_sort = 5,    // parallel_sort
  kind_wait = 6,             // task_group::wait
  kind_other = 7,            // anything else (task_group::cancel)
};

}  // namespace tbb
}  // namespace tasklens

#if defined(TASKLENS_TBB_DECLARATIONS_ONLY)
/* For the recorder, which defines them. */
extern "C" {
void tasklens_tbb_site(const char* file, unsigned line, const char* function,
                       unsigned kind) noexcept;
void tasklens_tbb_site_once(const char* file, unsigned line, const char* function,
                            unsigned kind) noexcept;
void tasklens_tbb_site_clear(void) noexcept;
void tasklens_tbb_chunk_begin(void) noexcept;
void tasklens_tbb_chunk_end(void) noexcept;
}
#else /* !TASKLENS_TBB_DECLARATIONS_ONLY */

#ifndef TASKLENS_DISABLE
/* Defined by the tasklens recorder (libtasklens_recorder.so); null when it is not loaded. */
extern "C" {
void tasklens_tbb_site(const char* file, unsigned line, const char* function,
                       unsigned kind) noexcept __attribute__((weak));
void tasklens_tbb_site_once(const char* file, unsigned line, const char* function,
                            unsigned kind) noexcept __attribute__((weak));
void tasklens_tbb_site_clear(void) noexcept __attribute__((weak));
void tasklens_tbb_chunk_begin(void) noexcept __attribute__((weak));
void tasklens_tbb_chunk_end(void) noexcept __attribute__((weak));
}
#endif

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/blocked_range2d.h>
#include <oneapi/tbb/blocked_range3d.h>
#include <oneapi/tbb/combinable.h>
#include <oneapi/tbb/concurrent_hash_map.h>
#include <oneapi/tbb/concurrent_queue.h>
#include <oneapi/tbb/concurrent_vector.h>
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/mutex.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_for_each.h>
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_scan.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/queuing_mutex.h>
#include <oneapi/tbb/rw_mutex.h>
#include <oneapi/tbb/spin_mutex.h>
#include <oneapi/tbb/spin_rw_mutex.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/tick_count.h>

#include <utility>

namespace tasklens {
namespace tbb {

/* A call site: the caller's, when current() is a default argument (of a default argument). */
struct source_location {
  const char* file;
  unsigned line;
  const char* function;

  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           unsigned line = __builtin_LINE(),
                                           const char* function = __builtin_FUNCTION()) noexcept {
    return source_location{file, line, function};
  }
};

/* oneTBB's own names, so that `tbbx::` finds them through the alias. */
using ::tbb::affinity_partitioner;
using ::tbb::auto_partitioner;
using ::tbb::blocked_range;
using ::tbb::blocked_range2d;
using ::tbb::blocked_range3d;
using ::tbb::canceled;
using ::tbb::combinable;
using ::tbb::complete;
using ::tbb::concurrent_bounded_queue;
using ::tbb::concurrent_hash_map;
using ::tbb::concurrent_queue;
using ::tbb::concurrent_vector;
using ::tbb::enumerable_thread_specific;
using ::tbb::filter;
using ::tbb::filter_mode;
using ::tbb::flattened2d;
using ::tbb::flow_control;
using ::tbb::global_control;
using ::tbb::is_current_task_group_canceling;
using ::tbb::make_filter;
using ::tbb::missing_wait;
using ::tbb::mutex;
using ::tbb::not_complete;
using ::tbb::parallel_deterministic_reduce;
using ::tbb::parallel_for_each;
using ::tbb::parallel_pipeline;
using ::tbb::parallel_scan;
using ::tbb::proportional_split;
using ::tbb::queuing_mutex;
using ::tbb::rw_mutex;
using ::tbb::simple_partitioner;
using ::tbb::spin_mutex;
using ::tbb::spin_rw_mutex;
using ::tbb::split;
using ::tbb::static_partitioner;
using ::tbb::task_arena;
using ::tbb::task_group_context;
using ::tbb::task_group_status;
using ::tbb::task_handle;
using ::tbb::tick_count;
namespace this_task_arena = ::tbb::this_task_arena;

#include "tbb_detail.h"  // the wrappers' guards and adapters: namespace detail

/* ---- task_group ------------------------------------------------------------------------- */

class task_group : public ::tbb::task_group {
 public:
  task_group() = default;
  task_group(task_group_context& context)  // NOLINT(runtime/explicit): implicit, as oneTBB's
      : ::tbb::task_group(context) {}

  template <typename F>
  void run(F&& f, source_location loc = source_location::current()) {
    detail::with_site_once(loc, kind_run, [&] { ::tbb::task_group::run(std::forward<F>(f)); });
  }
  void run(task_handle&& h, source_location loc = source_location::current()) {
    detail::with_site_once(loc, kind_run, [&] { ::tbb::task_group::run(std::move(h)); });
  }

  template <typename F>
  task_group_status run_and_wait(const F& f, source_location loc = source_location::current()) {
    return detail::with_site(loc, kind_run, [&] { return ::tbb::task_group::run_and_wait(f); });
  }
  task_group_status run_and_wait(task_handle&& h,
                                 source_location loc = source_location::current()) {
    return detail::with_site(loc, kind_run,
                             [&] { return ::tbb::task_group::run_and_wait(std::move(h)); });
  }

  task_group_status wait(source_location loc = source_location::current()) {
    return detail::with_site_once(loc, kind_wait, [&] { return ::tbb::task_group::wait(); });
  }

  void cancel(source_location loc = source_location::current()) {
    detail::with_site(loc, kind_other, [&] { ::tbb::task_group::cancel(); });
  }

  /* Whether the group is canceled and its wait has not returned yet (oneTBB 2021 has no
   * task_group::is_canceling; from a task of the group, is_current_task_group_canceling()). */
  bool is_canceling() { return context().is_group_execution_cancelled(); }

  using ::tbb::task_group::defer;
};

/* ---- parallel_invoke: 2 to 10 functions [, context] ------------------------------------- */

template <typename F0, typename F1>
void parallel_invoke(const F0& f0, const F1& f1, source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1);
}
template <typename F0, typename F1>
void parallel_invoke(const F0& f0, const F1& f1, task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, context);
}
template <typename F0, typename F1, typename F2>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2);
}
template <typename F0, typename F1, typename F2>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, context);
}
template <typename F0, typename F1, typename F2, typename F3>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3);
}
template <typename F0, typename F1, typename F2, typename F3>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3,
                     task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, context);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, context);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5, context);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5, typename F6>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, const F6& f6, source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5, f6);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5, typename F6>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, const F6& f6, task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5, f6, context);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5, typename F6,
          typename F7>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, const F6& f6, const F7& f7,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5, f6, f7);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5, typename F6,
          typename F7>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, const F6& f6, const F7& f7, task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5, f6, f7, context);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5, typename F6,
          typename F7, typename F8>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, const F6& f6, const F7& f7, const F8& f8,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5, f6, f7, f8);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5, typename F6,
          typename F7, typename F8>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, const F6& f6, const F7& f7, const F8& f8,
                     task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5, f6, f7, f8, context);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5, typename F6,
          typename F7, typename F8, typename F9>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, const F6& f6, const F7& f7, const F8& f8, const F9& f9,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9);
}
template <typename F0, typename F1, typename F2, typename F3, typename F4, typename F5, typename F6,
          typename F7, typename F8, typename F9>
void parallel_invoke(const F0& f0, const F1& f1, const F2& f2, const F3& f3, const F4& f4,
                     const F5& f5, const F6& f6, const F7& f7, const F8& f8, const F9& f9,
                     task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::invoke(loc, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, context);
}

/* ---- parallel_for ----------------------------------------------------------------------- */

/* Range form: body(subrange) on subranges of range. */
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body,
                  source_location loc = source_location::current()) {
  detail::for_range(loc, range, body);
}
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body, const simple_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_range(loc, range, body, partitioner);
}
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body, const auto_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_range(loc, range, body, partitioner);
}
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body, const static_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_range(loc, range, body, partitioner);
}
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body, affinity_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_range(loc, range, body, partitioner);
}
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body, task_group_context& context,
                  source_location loc = source_location::current()) {
  detail::for_range(loc, range, body, context);
}
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body, const simple_partitioner& partitioner,
                  task_group_context& context, source_location loc = source_location::current()) {
  detail::for_range(loc, range, body, partitioner, context);
}
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body, const auto_partitioner& partitioner,
                  task_group_context& context, source_location loc = source_location::current()) {
  detail::for_range(loc, range, body, partitioner, context);
}
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body, const static_partitioner& partitioner,
                  task_group_context& context, source_location loc = source_location::current()) {
  detail::for_range(loc, range, body, partitioner, context);
}
template <typename Range, typename Body>
void parallel_for(const Range& range, const Body& body, affinity_partitioner& partitioner,
                  task_group_context& context, source_location loc = source_location::current()) {
  detail::for_range(loc, range, body, partitioner, context);
}

/* Index form with a step: f(first), f(first + step), ... while < last (step > 0). */
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  source_location loc = source_location::current()) {
  const auto_partitioner partitioner;  // oneTBB's default
  detail::for_index(loc, first, last, step, f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  const simple_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, step, f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  const auto_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, step, f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  const static_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, step, f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  affinity_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, step, f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  task_group_context& context, source_location loc = source_location::current()) {
  const auto_partitioner partitioner;
  detail::for_index(loc, first, last, step, f, partitioner, context);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  const simple_partitioner& partitioner, task_group_context& context,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, step, f, partitioner, context);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  const auto_partitioner& partitioner, task_group_context& context,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, step, f, partitioner, context);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  const static_partitioner& partitioner, task_group_context& context,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, step, f, partitioner, context);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, Index step, const Function& f,
                  affinity_partitioner& partitioner, task_group_context& context,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, step, f, partitioner, context);
}

/* Index form: f(first), f(first + 1), ..., f(last - 1). */
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f,
                  source_location loc = source_location::current()) {
  const auto_partitioner partitioner;
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f, const simple_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f, const auto_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f, const static_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f, affinity_partitioner& partitioner,
                  source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f, task_group_context& context,
                  source_location loc = source_location::current()) {
  const auto_partitioner partitioner;
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner, context);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f, const simple_partitioner& partitioner,
                  task_group_context& context, source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner, context);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f, const auto_partitioner& partitioner,
                  task_group_context& context, source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner, context);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f, const static_partitioner& partitioner,
                  task_group_context& context, source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner, context);
}
template <typename Index, typename Function>
void parallel_for(Index first, Index last, const Function& f, affinity_partitioner& partitioner,
                  task_group_context& context, source_location loc = source_location::current()) {
  detail::for_index(loc, first, last, static_cast<Index>(1), f, partitioner, context);
}

/* ---- parallel_reduce -------------------------------------------------------------------- */

/* Functional form: reduction of real_body(subrange, identity-or-partial) over subranges. */
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction);
}
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction, const simple_partitioner& partitioner,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction, partitioner);
}
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction, const auto_partitioner& partitioner,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction, partitioner);
}
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction, const static_partitioner& partitioner,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction, partitioner);
}
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction, affinity_partitioner& partitioner,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction, partitioner);
}
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction, task_group_context& context,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction, context);
}
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction, const simple_partitioner& partitioner,
                      task_group_context& context,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction, partitioner,
                                   context);
}
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction, const auto_partitioner& partitioner,
                      task_group_context& context,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction, partitioner,
                                   context);
}
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction, const static_partitioner& partitioner,
                      task_group_context& context,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction, partitioner,
                                   context);
}
template <typename Range, typename Value, typename RealBody, typename Reduction>
Value parallel_reduce(const Range& range, const Value& identity, const RealBody& real_body,
                      const Reduction& reduction, affinity_partitioner& partitioner,
                      task_group_context& context,
                      source_location loc = source_location::current()) {
  return detail::reduce_functional(loc, range, identity, real_body, reduction, partitioner,
                                   context);
}

/* Body form: body(subrange) on the caller's body or split copies (Body(Body&, split)), joined
 * back with join(); the result is in the caller's body. */
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body);
}
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body, const simple_partitioner& partitioner,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body, partitioner);
}
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body, const auto_partitioner& partitioner,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body, partitioner);
}
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body, const static_partitioner& partitioner,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body, partitioner);
}
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body, affinity_partitioner& partitioner,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body, partitioner);
}
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body, task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body, context);
}
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body, const simple_partitioner& partitioner,
                     task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body, partitioner, context);
}
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body, const auto_partitioner& partitioner,
                     task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body, partitioner, context);
}
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body, const static_partitioner& partitioner,
                     task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body, partitioner, context);
}
template <typename Range, typename Body>
void parallel_reduce(const Range& range, Body& body, affinity_partitioner& partitioner,
                     task_group_context& context,
                     source_location loc = source_location::current()) {
  detail::reduce_imperative(loc, range, body, partitioner, context);
}

/* ---- parallel_sort ---------------------------------------------------------------------- */

template <typename RandomAccessIterator>
void parallel_sort(RandomAccessIterator begin, RandomAccessIterator end,
                   source_location loc = source_location::current()) {
  detail::with_site(loc, kind_parallel_sort, [&] { ::tbb::parallel_sort(begin, end); });
}
template <typename RandomAccessIterator, typename Compare>
void parallel_sort(RandomAccessIterator begin, RandomAccessIterator end, const Compare& comp,
                   source_location loc = source_location::current()) {
  detail::with_site(loc, kind_parallel_sort, [&] { ::tbb::parallel_sort(begin, end, comp); });
}
template <typename Container>
void parallel_sort(Container&& container, source_location loc = source_location::current()) {
  detail::with_site(loc, kind_parallel_sort,
                    [&] { ::tbb::parallel_sort(std::forward<Container>(container)); });
}
template <typename Container, typename Compare>
void parallel_sort(Container&& container, const Compare& comp,
                   source_location loc = source_location::current()) {
  detail::with_site(loc, kind_parallel_sort,
                    [&] { ::tbb::parallel_sort(std::forward<Container>(container), comp); });
}

}  // namespace tbb
}  // namespace tasklens

#endif /* !TASKLENS_TBB_DECLARATIONS_ONLY */

#endif /* TASKLENS_TBB_H */
