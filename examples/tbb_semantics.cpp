// tbb_semantics.cpp: oneTBB's joining rules, one mode each, with exact analytic profiles (the
// oneTBB counterpart of the sem_*.c programs).
//
//   usage: tbb_semantics MODE [sizes...]     (every size optional; defaults below)
//
//   group-from-inside [a=1000 x1=2000 k=6 y=5000 x2=1000 e=5000]
//   nested-groups     [a=1000 m=2 p=1000 c=4 y=4000 q=2000 r=2000 e=1000]
//   waiter-runs-others [a=2000 n=16 y=2000 e=2000]
//   isolate           [a=1000 m=2 p=1000 N=16 G=2 w=1000 q=1000 e=1000]
//   arena             [a=1000 N1=32 G1=4 m=2 p=1000 N2=16 G2=2 w=500 q=1000 e=1000]
//
// Every strand spins once for its cost with tl_work (units of work.h); main's prologue a runs
// before oneTBB starts and its epilogue e after the last construct. Loops are parallel_for over
// blocked_range(0, N, G) with the simple_partitioner, w units per iteration (N = G 2^k: N/G
// chunks of G iterations each, so a loop's span is one chunk, G w).
//
// Built plain (oneTBB) and with -DTASKLENS_TBB_WRAPPERS (tasklens::tbb, which tells the recorder
// the sites and the chunks): the two builds differ by the include and the namespace alias.
//
// 1. group-from-inside: task_group g; main runs A into g; A spins x1, runs B1..Bk (y each) into
//    the SAME group g from inside itself, spins x2 and returns without waiting; main calls
//    g.wait() (which must wait for the Bs too: they were run into g), then spins e.
//      W = a + x1 + k y + x2 + e                 S = a + x1 + max(x2, y) + e
//      defaults: W = 39000, S = 13000, W/S = 3
//    If the wait joined only A (the Bs joined at the end of the program, or never):
//    S = max(a + x1 + x2 + e, a + x1 + y) = 9000, W/S = 4.333. If the Bs ran inline in A:
//    S = W, W/S = 1.
//
// 2. nested-groups: task_group g; main runs m tasks T into g; each T spins p, makes its own
//    task_group h, runs c children (y each) into h, spins q, waits for h, spins r; main waits
//    for g, spins e.
//      W = a + m (p + c y + q + r) + e           S = a + p + max(y, q) + r + e
//      defaults: W = 44000, S = 9000, W/S = 4.8889
//    If h.wait did not join the children (g.wait did): S = a + p + max(q + r, y) + e = 7000,
//    W/S = 6.286. If the children ran inline: S = 23000, W/S = 1.913.
//
// 3. waiter-runs-others: main runs n tasks (y each) into a task_group and waits: with 2
//    threads the waiting thread runs most of them itself, inside the wait. The wait is not work
//    and the tasks it runs are not part of main's strand.
//      W = a + n y + e                           S = a + y + e
//      defaults: W = 36000, S = 6000, W/S = 6
//    If the time main spends in the wait counted as its work (the tasks it ran inside counted
//    twice), W would be about a + 1.5 n y + e = 52000. If the tasks main ran in its wait were
//    serial with it, S would be about a + n y / 2 + e = 20000, W/S = 1.8.
//
// 4. isolate: task_group g; m tasks, each spins p, runs a parallel_for of N iterations (w each,
//    grainsize G) inside this_task_arena::isolate, then spins q; main waits, spins e.
//      W = a + m (p + N w + q) + e               S = a + p + G w + q + e
//      defaults: W = 38000, S = 6000, W/S = 6.333; m parallel_for calls at one site
//    If the isolated loop counted as one serial strand: S = a + p + N w + q + e = 20000,
//    W/S = 1.9. If the loop's chunks were joined only by g.wait, not at the loop's end:
//    S = a + p + max(G w, q) + e = 5000, W/S = 7.6.
//
// 5. arena: two task_arena(2), outer and inner. main: outer.execute(parallel_for of N1
//    iterations, grainsize G1); then outer.execute(a task_group of m tasks, each spins p, calls
//    inner.execute(parallel_for of N2 iterations, grainsize G2) from inside the outer arena (a
//    nested arena), spins q; wait). Iterations cost w.
//      W = a + N1 w + m (p + N2 w + q) + e       S = a + G1 w + p + G2 w + q + e
//      defaults: W = 38000, S = 7000, W/S = 5.4286; 1 + m parallel_for calls at two sites
//    If the first execute were not waited for (its loop beside what follows it):
//    S = a + max(G1 w, p + G2 w + q) + e = 5000, W/S = 7.6; if the nested execute were not
//    waited for: S = a + G1 w + p + max(G2 w, q) + e = 6000, W/S = 6.33; if the loops ran
//    serially in the arenas: S = a + N1 w + p + N2 w + q + e = 28000, W/S = 1.357.
#include <pthread.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "tbb_example.hpp"

#ifdef TASKLENS_TBB_WRAPPERS
#include <tasklens/tbb.h>
namespace tbbx = tasklens::tbb;
#else
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
namespace tbbx = ::tbb;
#endif

namespace {

// Sizes of a mode, argv[2...] in order.
struct Args {
  int argc;
  char** argv;
  int next = 2;
  unsigned long get(unsigned long def, const char* name) {
    return tl_arg(argc, argv, next++, def, name);
  }
};

std::atomic<unsigned long> g_tasks{0};
std::atomic<unsigned long long> g_iterations{0};

int group_from_inside(Args args) {
  const unsigned long a = args.get(1000, "a"), x1 = args.get(2000, "x1"), k = args.get(6, "k"),
                      y = args.get(5000, "y"), x2 = args.get(1000, "x2"), e = args.get(5000, "e");
  tl_work(a);
  tbbx::task_group g;
  g.run([&] {  // site: sem-inside-a
    tl_work(x1);
    for (unsigned long i = 0; i < k; i++)
      g.run([y] {  // site: sem-inside-b
        tl_work(y);
        ++g_tasks;
      });
    tl_work(x2);
    ++g_tasks;
  });
  g.wait();  // site: sem-inside-wait
  const bool ok = g_tasks == k + 1;
  tl_work(e);
  std::printf("group-from-inside: %lu tasks run into one group from inside its task: %s\n",
              g_tasks.load(), ok ? "ok" : "WRONG");
  tl_print_analytic(a + x1 + k * y + x2 + e, a + x1 + (x2 > y ? x2 : y) + e);
  return ok ? 0 : 1;
}

int nested_groups(Args args) {
  const unsigned long a = args.get(1000, "a"), m = args.get(2, "m"), p = args.get(1000, "p"),
                      c = args.get(4, "c"), y = args.get(4000, "y"), q = args.get(2000, "q"),
                      r = args.get(2000, "r"), e = args.get(1000, "e");
  tl_work(a);
  tbbx::task_group g;
  for (unsigned long i = 0; i < m; i++)
    g.run([=] {  // site: sem-nested-outer
      tl_work(p);
      tbbx::task_group h;
      for (unsigned long j = 0; j < c; j++)
        h.run([y] {  // site: sem-nested-inner
          tl_work(y);
          ++g_tasks;
        });
      tl_work(q);
      h.wait();  // site: sem-nested-inner-wait
      tl_work(r);
    });
  g.wait();  // site: sem-nested-outer-wait
  const bool ok = g_tasks == m * c;
  tl_work(e);
  std::printf("nested-groups: %lu tasks in %lu groups with a group each: %s\n", g_tasks.load(), m,
              ok ? "ok" : "WRONG");
  tl_print_analytic(a + m * (p + c * y + q + r) + e, a + p + (y > q ? y : q) + r + e);
  return ok ? 0 : 1;
}

int waiter_runs_others(Args args) {
  const unsigned long a = args.get(2000, "a"), n = args.get(16, "n"), y = args.get(2000, "y"),
                      e = args.get(2000, "e");
  tl_work(a);
  std::atomic<unsigned long> by_main{0};
  const auto main_thread = pthread_self();
  tbbx::task_group g;
  for (unsigned long i = 0; i < n; i++)
    g.run([&by_main, main_thread, y] {  // site: sem-waiter-task
      tl_work(y);
      if (pthread_equal(pthread_self(), main_thread)) ++by_main;
      ++g_tasks;
    });
  g.wait();  // site: sem-waiter-wait
  const bool ok = g_tasks == n;
  tl_work(e);
  std::printf("waiter-runs-others: %lu tasks: %s\n", g_tasks.load(), ok ? "ok" : "WRONG");
  // How many ran on the waiting thread depends on the scheduling: stderr, not stdout.
  std::fprintf(stderr, "waiter-runs-others: %lu of %lu tasks ran on main, in its wait\n",
               by_main.load(), n);
  tl_print_analytic(a + n * y + e, a + (n ? y : 0) + e);
  return ok ? 0 : 1;
}

int isolate(Args args) {
  const unsigned long a = args.get(1000, "a"), m = args.get(2, "m"), p = args.get(1000, "p"),
                      n = args.get(16, "N"), gs = args.get(2, "G"), w = args.get(1000, "w"),
                      q = args.get(1000, "q"), e = args.get(1000, "e");
  if (gs == 0) {
    std::fprintf(stderr, "%s: G must be positive\n", args.argv[0]);
    return 2;
  }
  tl_work(a);
  tbbx::task_group g;
  for (unsigned long i = 0; i < m; i++)
    g.run([=] {  // site: sem-isolate-task
      tl_work(p);
      tbbx::this_task_arena::isolate([=] {
        tbbx::parallel_for(  // site: sem-isolate-for
            tbbx::blocked_range<unsigned long>(0, n, gs),
            [w](const tbbx::blocked_range<unsigned long>& r) {
              tl_work(w * r.size());
              g_iterations += r.size();
            },
            tbbx::simple_partitioner());
      });
      tl_work(q);
    });
  g.wait();
  const bool ok = g_iterations == m * n;
  tl_work(e);
  std::printf("isolate: %lu isolated parallel_for of %lu iterations: %s\n", m, n,
              ok ? "ok" : "WRONG");
  tl_print_analytic(a + m * (p + n * w + q) + e,
                    a + (m ? p + largest_chunk(n, gs) * w + q : 0) + e);
  return ok ? 0 : 1;
}

int arena(Args args) {
  const unsigned long a = args.get(1000, "a"), n1 = args.get(32, "N1"), g1 = args.get(4, "G1"),
                      m = args.get(2, "m"), p = args.get(1000, "p"), n2 = args.get(16, "N2"),
                      g2 = args.get(2, "G2"), w = args.get(500, "w"), q = args.get(1000, "q"),
                      e = args.get(1000, "e");
  if (g1 == 0 || g2 == 0) {
    std::fprintf(stderr, "%s: G1 and G2 must be positive\n", args.argv[0]);
    return 2;
  }
  tl_work(a);
  tbbx::task_arena outer(2), inner(2);
  outer.execute([&] {    // site: sem-arena-first
    tbbx::parallel_for(  // site: sem-arena-for1
        tbbx::blocked_range<unsigned long>(0, n1, g1),
        [w](const tbbx::blocked_range<unsigned long>& r) {
          tl_work(w * r.size());
          g_iterations += r.size();
        },
        tbbx::simple_partitioner());
  });
  outer.execute([&] {  // site: sem-arena-second
    tbbx::task_group g;
    for (unsigned long i = 0; i < m; i++)
      g.run([&] {  // site: sem-arena-task
        tl_work(p);
        inner.execute([&] {    // site: sem-arena-nested
          tbbx::parallel_for(  // site: sem-arena-for2
              tbbx::blocked_range<unsigned long>(0, n2, g2),
              [w](const tbbx::blocked_range<unsigned long>& r) {
                tl_work(w * r.size());
                g_iterations += r.size();
              },
              tbbx::simple_partitioner());
        });
        tl_work(q);
      });
    g.wait();
  });
  const bool ok = g_iterations == n1 + m * n2;
  tl_work(e);
  std::printf("arena: a parallel_for in an arena, %lu in a nested arena: %s\n", m,
              ok ? "ok" : "WRONG");
  const unsigned long s1 = n1 ? largest_chunk(n1, g1) * w : 0;
  const unsigned long s2 = m ? p + largest_chunk(n2, g2) * w + q : 0;
  tl_print_analytic(a + n1 * w + m * (p + n2 * w + q) + e, a + s1 + s2 + e);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  Args args{argc, argv};
  if (!std::strcmp(mode, "group-from-inside")) return group_from_inside(args);
  if (!std::strcmp(mode, "nested-groups")) return nested_groups(args);
  if (!std::strcmp(mode, "waiter-runs-others")) return waiter_runs_others(args);
  if (!std::strcmp(mode, "isolate")) return isolate(args);
  if (!std::strcmp(mode, "arena")) return arena(args);
  std::fprintf(stderr,
               "usage: %s group-from-inside|nested-groups|waiter-runs-others|isolate|arena "
               "[sizes...]\n",
               argv[0]);
  return 2;
}
