/* tasklens/tbb_detail.h: the machinery of tasklens/tbb.h's wrappers (the guards that report a
 * site and a chunk to the recorder, and the adapters of the user's bodies). Internal: included by
 * tasklens/tbb.h, inside its namespace tasklens::tbb, after source_location and the kinds; not a
 * header to include on its own.
 */
#ifndef TASKLENS_TBB_DETAIL_H
#define TASKLENS_TBB_DETAIL_H

#ifndef TASKLENS_TBB_H
#error "tasklens/tbb_detail.h is included by tasklens/tbb.h; include that one"
#endif

namespace detail {

#ifndef TASKLENS_DISABLE

/* Only built when the recorder is there: reports the site, clears it at the end of the scope. */
class site_guard {
 public:
  site_guard(const source_location& loc, unsigned kind) noexcept {
    tasklens_tbb_site(loc.file, loc.line, loc.function, kind);
  }
  ~site_guard() {
    if (tasklens_tbb_site_clear) tasklens_tbb_site_clear();
  }
  site_guard(const site_guard&) = delete;
  site_guard& operator=(const site_guard&) = delete;
};

class chunk_guard {
 public:
  chunk_guard() noexcept { tasklens_tbb_chunk_begin(); }
  ~chunk_guard() {
    if (tasklens_tbb_chunk_end) tasklens_tbb_chunk_end();
  }
  chunk_guard(const chunk_guard&) = delete;
  chunk_guard& operator=(const chunk_guard&) = delete;
};

/* A program that defines the functions itself (a test) would get "the address will never be
 * NULL" from gcc for the tests below. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress"

/* f() with the site pending. Without the recorder: one branch, then f(). */
template <typename F>
inline decltype(auto) with_site(const source_location& loc, unsigned kind, F&& f) {
  if (__builtin_expect(tasklens_tbb_site != nullptr, 0)) {
    site_guard guard(loc, kind);
    return f();
  }
  return f();
}

/* f() with the site pending for f's one oneTBB call (task_group::run's spawn, wait's wait),
 * which takes it: cleared here only if f throws. A recorder without tasklens_tbb_site_once (an
 * older one) gets with_site's announce and clear. */
template <typename F>
inline decltype(auto) with_site_once(const source_location& loc, unsigned kind, F&& f) {
  if (__builtin_expect(tasklens_tbb_site_once != nullptr, 0)) {
    tasklens_tbb_site_once(loc.file, loc.line, loc.function, kind);
    try {
      return f();
    } catch (...) {
      if (tasklens_tbb_site_clear) tasklens_tbb_site_clear();
      throw;
    }
  }
  return with_site(loc, kind, std::forward<F>(f));
}

/* f() as one chunk. Without the recorder: one branch, then f(). */
template <typename F>
inline decltype(auto) in_chunk(F&& f) {
  if (__builtin_expect(tasklens_tbb_chunk_begin != nullptr, 0)) {
    chunk_guard guard;
    return f();
  }
  return f();
}

#pragma GCC diagnostic pop

#else /* TASKLENS_DISABLE */

template <typename F>
inline decltype(auto) with_site(const source_location&, unsigned, F&& f) {
  return f();
}
template <typename F>
inline decltype(auto) with_site_once(const source_location&, unsigned, F&& f) {
  return f();
}
template <typename F>
inline decltype(auto) in_chunk(F&& f) {
  return f();
}

#endif /* TASKLENS_DISABLE */

/* parallel_for's body: a copy of the user's, copied (split) along with it, as oneTBB copies
 * bodies; every call is a chunk. Range& or const Range&: whatever oneTBB passes. */
template <typename Body>
class for_body {
 public:
  explicit for_body(const Body& body) : body_(body) {}
  template <typename Range>
  void operator()(Range& range) const {
    detail::in_chunk([&] { body_(range); });
  }

 private:
  Body body_;
};

/* The index forms: the body of oneTBB's own implementation (parallel_for_body_wrapper), over a
 * blocked_range of step counts; one call, one chunk. */
template <typename Index, typename Function>
class index_body {
 public:
  index_body(const Function& f, Index first, Index step) : f_(f), first_(first), step_(step) {}
  void operator()(const ::tbb::blocked_range<Index>& r) const {
    detail::in_chunk([&] {
      Index b = r.begin();
      Index e = r.end();
      Index ms = step_;
      Index k = first_ + b * ms;
      for (Index i = b; i < e; ++i, k += ms) f_(k);
    });
  }

 private:
  const Function& f_;
  const Index first_;
  const Index step_;
};

/* parallel_reduce's body form. The root points to the caller's body; a split owns the user's
 * split copy (made with the user's splitting constructor, in place) and join() joins the user's
 * bodies. oneTBB constructs these in place and never copies them. */
template <typename Body>
class reduce_body {
 public:
  explicit reduce_body(Body& body) noexcept : body_(&body), owned_(false) {}
  reduce_body(reduce_body& other, ::tbb::split s) : body_(nullptr), owned_(false) {
    body_ = ::new (static_cast<void*>(&storage_)) Body(*other.body_, s);
    owned_ = true;
  }
  ~reduce_body() {
    if (owned_) body_->~Body();
  }
  reduce_body(const reduce_body&) = delete;
  reduce_body& operator=(const reduce_body&) = delete;

  template <typename Range>
  void operator()(Range& range) {
    detail::in_chunk([&] { (*body_)(range); });
  }
  void join(reduce_body& rhs) { body_->join(*rhs.body_); }

 private:
  Body* body_;
  bool owned_;
  alignas(Body) unsigned char storage_[sizeof(Body)];
};

/* parallel_reduce's functional form: real_body(range, value), as one chunk. */
template <typename RealBody>
class reduce_real_body {
 public:
  explicit reduce_real_body(const RealBody& f) : f_(f) {}
  template <typename Range, typename Value>
  decltype(auto) operator()(Range& range, const Value& value) const {
    return detail::in_chunk([&]() -> decltype(auto) { return f_(range, value); });
  }

 private:
  const RealBody& f_;
};

/* `extra`: the optional partitioner and context, passed on as the caller gave them. */
template <typename Range, typename Body, typename... Extra>
inline void for_range(const source_location& loc, const Range& range, const Body& body,
                      Extra&... extra) {
  detail::with_site(loc, kind_parallel_for,
                    [&] { ::tbb::parallel_for(range, for_body<Body>(body), extra...); });
}

template <typename Index, typename Function, typename... Extra>
inline void for_index(const source_location& loc, Index first, Index last, Index step,
                      const Function& f, Extra&... extra) {
  detail::with_site(loc, kind_parallel_for, [&] {
    if (step <= 0) {
      // What oneTBB's parallel_for_impl does: std::invalid_argument, with oneTBB's message.
      ::tbb::detail::r1::throw_exception(::tbb::detail::exception_id::nonpositive_step);
    } else if (first < last) {
      Index end = (last - first - Index(1)) / step + Index(1);
      ::tbb::parallel_for(::tbb::blocked_range<Index>(static_cast<Index>(0), end, 1),
                          index_body<Index, Function>(f, first, step), extra...);
    }
  });
}

template <typename Range, typename Value, typename RealBody, typename Reduction, typename... Extra>
inline Value reduce_functional(const source_location& loc, const Range& range,
                               const Value& identity, const RealBody& real_body,
                               const Reduction& reduction, Extra&... extra) {
  return detail::with_site(loc, kind_parallel_reduce, [&]() -> Value {
    return ::tbb::parallel_reduce(range, identity, reduce_real_body<RealBody>(real_body), reduction,
                                  extra...);
  });
}

template <typename Range, typename Body, typename... Extra>
inline void reduce_imperative(const source_location& loc, const Range& range, Body& body,
                              Extra&... extra) {
  detail::with_site(loc, kind_parallel_reduce, [&] {
    reduce_body<Body> root(body);
    ::tbb::parallel_reduce(range, root, extra...);
  });
}

template <typename... Args>
inline void invoke(const source_location& loc, Args&... args) {
  detail::with_site(loc, kind_parallel_invoke, [&] { ::tbb::parallel_invoke(args...); });
}

}  // namespace detail

#endif /* TASKLENS_TBB_DETAIL_H */
