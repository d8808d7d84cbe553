// tbb_flow.cpp: a oneTBB flow graph and a parallel_pipeline, with exact analytic profiles.
//
//   usage: tbb_flow MODE [N=32] [a=200] [b=400] [c=100] [p0=1000] [e=1000]
//
// main spins p0 units (before oneTBB starts), runs the mode's construct over N messages, then
// spins e. Every node or filter call spins once for its cost with tl_work (units of work.h).
//
//   serial     a flow graph A -> B -> C of function_nodes: A and C unlimited, B serial (one
//              message at a time); main try_puts N messages into A and waits for the graph.
//              A spins a, B spins b, C spins c per message. With b >= a, B's messages form one
//              chain, behind the first A and before the last C:
//                W = p0 + N (a + b + c) + e       S = p0 + a + N b + c + e
//                defaults: W = 24400, S = 15100, W/S = 1.6159
//   unlimited  the same graph with B unlimited: every message's path is independent.
//                W = p0 + N (a + b + c) + e       S = p0 + a + b + c + e
//                defaults: W = 24400, S = 2700, W/S = 9.037
//   pipeline   parallel_pipeline with N tokens over N items: a serial_in_order input filter
//              (a per item), a parallel filter (b), a serial_in_order output filter (c). Item i's
//              output follows item i-1's, its input item i-1's input:
//                W = p0 + N (a + b + c) + e
//                S = p0 + max(N a + b + c, a + b + N c) + e
//                defaults: W = 24400, S = 8900, W/S = 2.7416
//
// A tool that did not see the flow graph's tasks (oneTBB hands them to the arena with submit,
// not spawn) finds W = p0 + e (the graph's work on no thread it records) in both graph modes;
// one that took B's messages as independent finds the unlimited mode's S in the serial one.
// parallel_pipeline runs inside libtbb: its construct is named by the line of its call.
// Built plain (oneTBB) and with -DTASKLENS_TBB_WRAPPERS: the wrappers have no flow graph or
// pipeline of their own, so the two builds differ only by the include.
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/parallel_pipeline.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "tbb_example.hpp"

#ifdef TASKLENS_TBB_WRAPPERS
#include <tasklens/tbb.h>
#endif

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "serial";
  const bool serial = std::strcmp(mode, "serial") == 0;
  const bool unlimited = std::strcmp(mode, "unlimited") == 0;
  const bool pipeline = std::strcmp(mode, "pipeline") == 0;
  if (!serial && !unlimited && !pipeline) {
    std::fprintf(stderr, "tbb_flow: unknown mode '%s' (serial, unlimited or pipeline)\n", mode);
    return 2;
  }
  const unsigned long n = tl_arg(argc, argv, 2, 32, "N");
  const unsigned long a = tl_arg(argc, argv, 3, 200, "a");
  const unsigned long b = tl_arg(argc, argv, 4, 400, "b");
  const unsigned long c = tl_arg(argc, argv, 5, 100, "c");
  const unsigned long p0 = tl_arg(argc, argv, 6, 1000, "p0");
  const unsigned long e = tl_arg(argc, argv, 7, 1000, "e");
  if (n == 0) {
    std::fprintf(stderr, "tbb_flow: N must be at least 1\n");
    return 2;
  }
  serial_part(p0, 1);

  std::atomic<unsigned long> sum{0};
  unsigned long span = 0;
  if (pipeline) {
    unsigned long next = 0, out = 0;
    tbb::parallel_pipeline(  // site: flow-pipeline
        n, tbb::make_filter<void, unsigned long>(tbb::filter_mode::serial_in_order,
                                                 [&](tbb::flow_control& fc) -> unsigned long {
                                                   if (next == n) {
                                                     fc.stop();
                                                     return 0;
                                                   }
                                                   tl_work(a);
                                                   return next++;
                                                 }) &
               tbb::make_filter<unsigned long, unsigned long>(tbb::filter_mode::parallel,
                                                              [&](unsigned long i) {
                                                                tl_work(b);
                                                                return i;
                                                              }) &
               tbb::make_filter<unsigned long, void>(tbb::filter_mode::serial_in_order,
                                                     [&](unsigned long i) {
                                                       tl_work(c);
                                                       if (i == out) out++;  // in order
                                                       sum += i;
                                                     }));
    if (out != n) {
      std::fprintf(stderr, "tbb_flow: the output filter saw the items out of order\n");
      return 1;
    }
    span = std::max(n * a + b + c, a + b + n * c);
  } else {
    using Node = tbb::flow::function_node<unsigned long, unsigned long>;
    tbb::flow::graph g;
    Node na(g, tbb::flow::unlimited, [&](unsigned long v) {
      tl_work(a);
      return v;
    });
    Node nb(g, serial ? tbb::flow::serial : tbb::flow::unlimited, [&](unsigned long v) {
      tl_work(b);
      return v;
    });
    Node nc(g, tbb::flow::unlimited, [&](unsigned long v) {
      tl_work(c);
      sum += v;
      return v;
    });
    tbb::flow::make_edge(na, nb);
    tbb::flow::make_edge(nb, nc);
    for (unsigned long i = 0; i < n; i++) na.try_put(i);  // site: flow-put
    g.wait_for_all();
    span = serial ? a + n * b + c : a + b + c;
  }

  serial_part(e, 2);
  const unsigned long expected = n * (n - 1) / 2;
  std::printf("%s: %lu messages, sum %lu (expected %lu)\n", mode, n, sum.load(), expected);
  tl_print_analytic(p0 + n * (a + b + c) + e, p0 + span + e);
  return sum.load() == expected ? 0 : 1;
}
