// The oneTBB wrappers of include/tasklens/tbb.h give the results of plain oneTBB: task_group,
// parallel_invoke with 2 to 10 functions, every form of parallel_for with every partitioner, both
// forms of parallel_reduce with a reduction that is associative but not commutative,
// parallel_sort, exceptions. (What they tell the recorder: tbb_wrappers_report_test.cpp.)
#include "tbb_wrappers_support.hpp"

namespace {

// ---- task_group --------------------------------------------------------------------------------

TEST(TbbWrappersTaskGroup, RunAndWaitGiveTheSameResultAsOneTbb) {
  std::atomic<long> plain{0}, wrapped{0};
  ::tbb::task_group g0;
  tl::task_group g1;
  for (long i = 1; i <= 100; i++) {
    g0.run([&plain, i] { plain += i; });
    g1.run([&wrapped, i] { wrapped += i; });
  }
  EXPECT_EQ(g0.wait(), ::tbb::complete);
  EXPECT_EQ(g1.wait(), tl::complete);
  EXPECT_EQ(plain.load(), 5050);
  EXPECT_EQ(wrapped.load(), 5050);

  // run_and_wait: the function, then the group's other tasks.
  long direct = 0;
  g1.run([&wrapped] { wrapped += 1000; });
  EXPECT_EQ(g1.run_and_wait([&direct] { direct = 7; }), tl::complete);
  EXPECT_EQ(direct, 7);
  EXPECT_EQ(wrapped.load(), 6050);
}

// fib with every call a task, run into the one group from inside its tasks.
void fib_tasks(tl::task_group& g, int n, std::atomic<long>& leaves) {
  if (n < 2) {
    leaves += n;
    return;
  }
  g.run([&g, n, &leaves] { fib_tasks(g, n - 1, leaves); });
  g.run([&g, n, &leaves] { fib_tasks(g, n - 2, leaves); });
}

TEST(TbbWrappersTaskGroup, TasksRunFromTasksIntoTheSameGroup) {
  tl::task_group g;
  std::atomic<long> leaves{0};
  g.run([&] { fib_tasks(g, 16, leaves); });
  EXPECT_EQ(g.wait(), tl::complete);
  EXPECT_EQ(leaves.load(), 987);  // F(16)

  leaves = 0;
  EXPECT_EQ(g.run_and_wait([&] { fib_tasks(g, 12, leaves); }), tl::complete);
  EXPECT_EQ(leaves.load(), 144);
}

TEST(TbbWrappersTaskGroup, CancelGivesCanceledAsOneTbb) {
  ::tbb::task_group g0;
  g0.cancel();
  const ::tbb::task_group_status plain = g0.wait();

  tl::task_group g1;
  EXPECT_FALSE(g1.is_canceling());
  g1.cancel();
  EXPECT_TRUE(g1.is_canceling());
  EXPECT_EQ(g1.wait(), plain);
  EXPECT_EQ(plain, tl::canceled);
  EXPECT_FALSE(g1.is_canceling());  // wait resets the group
  EXPECT_EQ(g1.run_and_wait([] {}), tl::complete);

  // Canceled from inside a task: the tasks that had not started do not run.
  std::atomic<int> ran{0};
  std::atomic<bool> seen_canceling{false};
  tl::task_group g2;
  g2.run_and_wait([&] {
    g2.cancel();
    seen_canceling = g2.is_canceling() && tl::is_current_task_group_canceling();
    for (int i = 0; i < 100; i++) g2.run([&ran] { ++ran; });
  });
  EXPECT_EQ(g2.wait(), tl::complete);  // run_and_wait already returned the status and reset
  EXPECT_TRUE(seen_canceling.load());
  EXPECT_EQ(ran.load(), 0);

  tl::task_group g3;
  EXPECT_EQ(g3.run_and_wait([&] { g3.cancel(); }), tl::canceled);

  // With a context of the caller's.
  tl::task_group_context ctx;
  tl::task_group g4(ctx);
  g4.run([] {});
  ctx.cancel_group_execution();
  EXPECT_EQ(g4.wait(), tl::canceled);
}

TEST(TbbWrappersTaskGroup, ExceptionsPropagateAsOneTbb) {
  tl::task_group g;
  g.run([] { throw std::runtime_error("from a task"); });
  try {
    g.wait();
    ADD_FAILURE() << "wait did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "from a task");
  }
  EXPECT_THROW(g.run_and_wait([] { throw std::logic_error("direct"); }), std::logic_error);
  EXPECT_EQ(g.run_and_wait([] {}), tl::complete);  // usable again
}

TEST(TbbWrappersTaskGroup, TaskHandles) {
  tl::task_group g;
  std::atomic<int> done{0};
  tl::task_handle h = g.defer([&done] { ++done; });
  g.run(std::move(h));
  EXPECT_EQ(g.wait(), tl::complete);
  EXPECT_EQ(g.run_and_wait(g.defer([&done] { done += 10; })), tl::complete);
  EXPECT_EQ(done.load(), 11);
}

// ---- parallel_invoke ---------------------------------------------------------------------------

TEST(TbbWrappersInvoke, TwoToTenFunctionsWithAndWithoutContext) {
  std::atomic<unsigned> mask{0};
  auto f = [&mask](int bit) { return [&mask, bit] { mask |= 1u << bit; }; };
  auto expect = [&mask](int n) { EXPECT_EQ(mask.exchange(0), (1u << n) - 1) << n << " functions"; };
  tl::task_group_context ctx;
  tl::parallel_invoke(f(0), f(1));
  expect(2);
  tl::parallel_invoke(f(0), f(1), ctx);
  expect(2);
  tl::parallel_invoke(f(0), f(1), f(2));
  expect(3);
  tl::parallel_invoke(f(0), f(1), f(2), ctx);
  expect(3);
  tl::parallel_invoke(f(0), f(1), f(2), f(3));
  expect(4);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), ctx);
  expect(4);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4));
  expect(5);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), ctx);
  expect(5);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5));
  expect(6);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5), ctx);
  expect(6);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5), f(6));
  expect(7);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5), f(6), ctx);
  expect(7);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7));
  expect(8);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), ctx);
  expect(8);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8));
  expect(9);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8), ctx);
  expect(9);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8), f(9));
  expect(10);
  tl::parallel_invoke(f(0), f(1), f(2), f(3), f(4), f(5), f(6), f(7), f(8), f(9), ctx);
  expect(10);

  // Function pointers and nested invocations.
  static std::atomic<int> hits{0};
  hits = 0;
  void (*p)() = [] { ++hits; };
  tl::parallel_invoke(p, p, [p] { tl::parallel_invoke(p, p, p); });
  EXPECT_EQ(hits.load(), 5);
}

TEST(TbbWrappersInvoke, ExceptionsAndCancellation) {
  EXPECT_THROW(tl::parallel_invoke([] {}, [] { throw std::out_of_range("x"); }), std::out_of_range);
  tl::task_group_context ctx;
  ctx.cancel_group_execution();
  std::atomic<int> ran{0};
  tl::parallel_invoke([&] { ++ran; }, [&] { ++ran; }, [&] { ++ran; }, ctx);
  std::atomic<int> ran_plain{0};
  ::tbb::task_group_context ctx_plain;
  ctx_plain.cancel_group_execution();
  ::tbb::parallel_invoke([&] { ++ran_plain; }, [&] { ++ran_plain; }, [&] { ++ran_plain; },
                         ctx_plain);
  EXPECT_EQ(ran.load(), ran_plain.load());
}

// ---- parallel_for ------------------------------------------------------------------------------

TEST(TbbWrappersFor, RangeFormWithEveryPartitioner) {
  const long n = 10007;
  std::vector<long> expect(n), out(n);
  ::tbb::parallel_for(blocked_range<long>(0, n), FillBody{&expect});
  for (long i = 0; i < n; i++) ASSERT_EQ(expect[i], 3 * i + 1);

  auto check = [&](const char* what) {
    EXPECT_EQ(out, expect) << what;
    std::fill(out.begin(), out.end(), 0);
  };
  const blocked_range<long> range(0, n, 16);
  tl::affinity_partitioner ap;
  tl::task_group_context ctx;
  tl::parallel_for(range, FillBody{&out});
  check("default");
  tl::parallel_for(range, FillBody{&out}, tl::simple_partitioner());
  check("simple");
  tl::parallel_for(range, FillBody{&out}, tl::auto_partitioner());
  check("auto");
  tl::parallel_for(range, FillBody{&out}, tl::static_partitioner());
  check("static");
  tl::parallel_for(range, FillBody{&out}, ap);
  check("affinity");
  tl::parallel_for(range, FillBody{&out}, ap);
  check("affinity, again");
  tl::parallel_for(range, FillBody{&out}, ctx);
  check("context");
  tl::parallel_for(range, FillBody{&out}, tl::simple_partitioner(), ctx);
  check("simple, context");
  tl::parallel_for(range, FillBody{&out}, tl::auto_partitioner(), ctx);
  check("auto, context");
  tl::parallel_for(range, FillBody{&out}, tl::static_partitioner(), ctx);
  check("static, context");
  tl::parallel_for(range, FillBody{&out}, ap, ctx);
  check("affinity, context");

  // A lambda body, an empty range, a 2-D range.
  tl::parallel_for(range, [&out](const blocked_range<long>& r) {
    for (long i = r.begin(); i != r.end(); ++i) out[i] = 3 * i + 1;
  });
  check("lambda");
  tl::parallel_for(blocked_range<long>(5, 5), [](const blocked_range<long>&) { FAIL(); });
  std::vector<int> grid(60 * 70, 0);
  tl::parallel_for(tl::blocked_range2d<int>(0, 60, 0, 70), [&grid](const auto& r) {
    for (int i = r.rows().begin(); i != r.rows().end(); ++i)
      for (int j = r.cols().begin(); j != r.cols().end(); ++j) grid[i * 70 + j] += i + j;
  });
  long grid_sum = std::accumulate(grid.begin(), grid.end(), 0L);
  EXPECT_EQ(grid_sum, 70L * (59 * 60 / 2) + 60L * (69 * 70 / 2));
}

// The index forms, against oneTBB's on the same arguments (negative, unsigned, empty, steps).
template <typename Index>
void check_index_forms(Index first, Index last, Index step) {
  const size_t n = 4096;
  auto slot = [first](Index i) { return static_cast<size_t>(i - first); };
  std::vector<int> plain(n, 0), out(n, 0);
  ::tbb::parallel_for(first, last, step, [&](Index i) { plain[slot(i)] += 1; });
  std::vector<int> plain1(n, 0);
  ::tbb::parallel_for(first, last, [&](Index i) { plain1[slot(i)] += 1; });

  auto with_step = [&](auto... extra) {
    tl::parallel_for(
        first, last, step, [&](Index i) { out[slot(i)] += 1; }, extra...);
    EXPECT_EQ(out, plain) << "step " << step << ", " << sizeof...(extra) << " extra";
    std::fill(out.begin(), out.end(), 0);
  };
  auto unit_step = [&](auto... extra) {
    tl::parallel_for(
        first, last, [&](Index i) { out[slot(i)] += 1; }, extra...);
    EXPECT_EQ(out, plain1) << "unit step, " << sizeof...(extra) << " extra";
    std::fill(out.begin(), out.end(), 0);
  };
  tl::affinity_partitioner ap;
  tl::task_group_context ctx;
  with_step();
  with_step(tl::simple_partitioner());
  with_step(tl::auto_partitioner());
  with_step(tl::static_partitioner());
  // The affinity partitioner and the context are lvalue references: no pack of copies.
  tl::parallel_for(
      first, last, step, [&](Index i) { out[slot(i)] += 1; }, ap);
  EXPECT_EQ(out, plain);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, step, [&](Index i) { out[slot(i)] += 1; }, ctx);
  EXPECT_EQ(out, plain);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, step, [&](Index i) { out[slot(i)] += 1; }, tl::simple_partitioner(), ctx);
  EXPECT_EQ(out, plain);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, step, [&](Index i) { out[slot(i)] += 1; }, tl::auto_partitioner(), ctx);
  EXPECT_EQ(out, plain);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, step, [&](Index i) { out[slot(i)] += 1; }, tl::static_partitioner(), ctx);
  EXPECT_EQ(out, plain);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, step, [&](Index i) { out[slot(i)] += 1; }, ap, ctx);
  EXPECT_EQ(out, plain);
  std::fill(out.begin(), out.end(), 0);

  unit_step();
  unit_step(tl::simple_partitioner());
  unit_step(tl::auto_partitioner());
  unit_step(tl::static_partitioner());
  tl::parallel_for(
      first, last, [&](Index i) { out[slot(i)] += 1; }, ap);
  EXPECT_EQ(out, plain1);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, [&](Index i) { out[slot(i)] += 1; }, ctx);
  EXPECT_EQ(out, plain1);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, [&](Index i) { out[slot(i)] += 1; }, tl::simple_partitioner(), ctx);
  EXPECT_EQ(out, plain1);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, [&](Index i) { out[slot(i)] += 1; }, tl::auto_partitioner(), ctx);
  EXPECT_EQ(out, plain1);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, [&](Index i) { out[slot(i)] += 1; }, tl::static_partitioner(), ctx);
  EXPECT_EQ(out, plain1);
  std::fill(out.begin(), out.end(), 0);
  tl::parallel_for(
      first, last, [&](Index i) { out[slot(i)] += 1; }, ap, ctx);
  EXPECT_EQ(out, plain1);
}

TEST(TbbWrappersFor, IndexAndStepFormsWithEveryPartitioner) {
  check_index_forms<int>(0, 4000, 3);
  check_index_forms<int>(-1000, 3000, 7);
  check_index_forms<long>(17, 4017, 1);
  check_index_forms<unsigned>(5u, 4005u, 4000u);  // one index
  check_index_forms<unsigned>(100u, 4000u, 5u);
  check_index_forms<int>(10, 10, 2);  // empty
  check_index_forms<int>(10, 3, 2);   // empty (last < first)
}

TEST(TbbWrappersFor, ExceptionsPropagateAsOneTbb) {
  auto body = [](const blocked_range<int>& r) {
    if (r.begin() <= 500 && 500 < r.end()) throw std::runtime_error("index 500");
  };
  try {
    tl::parallel_for(blocked_range<int>(0, 1000), body, tl::simple_partitioner());
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "index 500");
  }
  EXPECT_THROW(tl::parallel_for(0, 100,
                                [](int i) {
                                  if (i == 42) throw std::domain_error("42");
                                }),
               std::domain_error);

  // A step of 0 or less: oneTBB's own std::invalid_argument, with its message.
  std::string plain_what, wrapped_what;
  try {
    ::tbb::parallel_for(0, 10, 0, [](int) {});
  } catch (const std::invalid_argument& e) {
    plain_what = e.what();
  }
  try {
    tl::parallel_for(0, 10, 0, [](int) {});
  } catch (const std::invalid_argument& e) {
    wrapped_what = e.what();
  }
  EXPECT_FALSE(plain_what.empty());
  EXPECT_EQ(wrapped_what, plain_what);
  EXPECT_THROW(tl::parallel_for(
                   0, 10, -2, [](int) {}, tl::simple_partitioner()),
               std::invalid_argument);
}

// Bodies are called as const and copied as oneTBB copies them: a body with a mutable member
// counts per copy, never more than the indices of its copy's ranges.
TEST(TbbWrappersFor, BodiesAreCalledAsConstCopies) {
  struct Body {
    std::atomic<long>* total;
    mutable long mine = 0;
    void operator()(const blocked_range<int>& r) const {
      mine += r.size();
      *total += static_cast<long>(r.size());
    }
  };
  std::atomic<long> total{0};
  const Body body{&total};
  tl::parallel_for(blocked_range<int>(0, 5000, 10), body, tl::simple_partitioner());
  EXPECT_EQ(total.load(), 5000);
  EXPECT_EQ(body.mine, 0);  // the caller's body is never called: a copy is
}

// ---- parallel_reduce ---------------------------------------------------------------------------

TEST(TbbWrappersReduce, FunctionalFormKeepsTheOrderWithEveryPartitioner) {
  const int n = 3000;
  const std::string expect = serial_concat(n);
  const std::string plain = ::tbb::parallel_reduce(blocked_range<int>(0, n, 8), std::string(),
                                                   concat_range, std::plus<std::string>());
  ASSERT_EQ(plain, expect);

  const blocked_range<int> range(0, n, 8);
  const std::string empty;
  const std::plus<std::string> plus;
  tl::affinity_partitioner ap;
  tl::task_group_context ctx;
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus), expect);
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus, tl::simple_partitioner()),
            expect);
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus, tl::auto_partitioner()), expect);
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus, tl::static_partitioner()),
            expect);
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus, ap), expect);
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus, ctx), expect);
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus, tl::simple_partitioner(), ctx),
            expect);
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus, tl::auto_partitioner(), ctx),
            expect);
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus, tl::static_partitioner(), ctx),
            expect);
  EXPECT_EQ(tl::parallel_reduce(range, empty, concat_range, plus, ap, ctx), expect);

  // Lambdas, a non-string value, the identity used for every chunk.
  const long sum = tl::parallel_reduce(
      blocked_range<long>(1, 100001), 0L,
      [](const blocked_range<long>& r, long v) {
        for (long i = r.begin(); i != r.end(); ++i) v += i;
        return v;
      },
      [](long a, long b) { return a + b; });
  EXPECT_EQ(sum, 5000050000L);
  const int chunks = tl::parallel_reduce(
      blocked_range<int>(0, 64, 4), 100, [](const blocked_range<int>&, int v) { return v + 1; },
      [](int a, int b) { return a + b - 100; }, tl::simple_partitioner());
  EXPECT_EQ(chunks, 100 + 16);  // 16 chunks of 4, each starting from the identity
  EXPECT_EQ(tl::parallel_reduce(
                blocked_range<int>(3, 3), 41,
                [](const blocked_range<int>&, int v) { return v + 1; }, std::plus<int>()),
            41);  // an empty range: the identity
}

TEST(TbbWrappersReduce, BodyFormKeepsTheOrderWithEveryPartitioner) {
  const int n = 3000;
  const std::string expect = serial_concat(n);
  std::atomic<int> calls{0}, splits{0};
  {
    ConcatBody plain(&calls, &splits);
    ::tbb::parallel_reduce(blocked_range<int>(0, n, 8), plain);
    ASSERT_EQ(plain.s, expect);
  }
  const blocked_range<int> range(0, n, 8);
  tl::affinity_partitioner ap;
  tl::task_group_context ctx;
  auto run = [&](const char* what, auto&&... extra) {
    ConcatBody body(&calls, &splits);
    tl::parallel_reduce(range, body, extra...);
    EXPECT_EQ(body.s, expect) << what;
  };
  run("default");
  run("simple", tl::simple_partitioner());
  run("auto", tl::auto_partitioner());
  run("static", tl::static_partitioner());
  run("affinity", ap);
  run("context", ctx);
  run("simple, context", tl::simple_partitioner(), ctx);
  run("auto, context", tl::auto_partitioner(), ctx);
  run("static, context", tl::static_partitioner(), ctx);
  run("affinity, context", ap, ctx);

  // The user's bodies did the work: the caller's, and the split copies a thief makes (each joined
  // back in order, or the strings above would differ from the serial one).
  EXPECT_GT(calls.load(), 10);
}

TEST(TbbWrappersReduce, ExceptionsPropagateAsOneTbb) {
  auto real_body = [](const blocked_range<int>& r, int v) {
    if (r.begin() <= 77 && 77 < r.end()) throw std::overflow_error("77");
    return v + 1;
  };
  EXPECT_THROW(tl::parallel_reduce(blocked_range<int>(0, 1000), 0, real_body, std::plus<int>()),
               std::overflow_error);
  std::atomic<int> calls{0}, splits{0};
  struct Throwing : ConcatBody {
    Throwing(std::atomic<int>* c, std::atomic<int>* sp) : ConcatBody(c, sp) {}
    Throwing(Throwing& other, tl::split s) : ConcatBody(other, s) {}
    void operator()(const blocked_range<int>& r) {
      if (r.begin() <= 900 && 900 < r.end()) throw std::underflow_error("900");
      ConcatBody::operator()(r);
    }
    void join(Throwing& rhs) { ConcatBody::join(rhs); }
  };
  Throwing body(&calls, &splits);
  EXPECT_THROW(tl::parallel_reduce(blocked_range<int>(0, 1000, 10), body), std::underflow_error);
}

// ---- parallel_sort -----------------------------------------------------------------------------

TEST(TbbWrappersSort, EveryForm) {
  const std::vector<unsigned> keys = random_keys(20000);
  std::vector<unsigned> ascending = keys, descending = keys;
  std::sort(ascending.begin(), ascending.end());
  std::sort(descending.begin(), descending.end(), std::greater<unsigned>());

  std::vector<unsigned> v = keys;
  tl::parallel_sort(v.begin(), v.end());
  EXPECT_EQ(v, ascending);
  v = keys;
  tl::parallel_sort(v.begin(), v.end(), std::greater<unsigned>());
  EXPECT_EQ(v, descending);
  v = keys;
  tl::parallel_sort(v);
  EXPECT_EQ(v, ascending);
  v = keys;
  tl::parallel_sort(v, std::greater<unsigned>());
  EXPECT_EQ(v, descending);
  v = keys;
  tl::parallel_sort(v.data(), v.data() + v.size());  // pointers
  EXPECT_EQ(v, ascending);
  v = keys;
  auto b = v.begin(), e = v.end();  // lvalue iterators
  tl::parallel_sort(b, e, [](unsigned x, unsigned y) { return x > y; });
  EXPECT_EQ(v, descending);
  std::vector<unsigned> small = {5, 3, 9, 1};  // below oneTBB's parallel threshold
  tl::parallel_sort(small);
  EXPECT_EQ(small, (std::vector<unsigned>{1, 3, 5, 9}));
}

}  // namespace
