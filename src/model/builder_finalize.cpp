// Provisional graph -> Model: serial-elision numbering, CSR edges, attribution.
#include <algorithm>
#include <atomic>
#include <future>
#include <unordered_map>

#include "model/builder_state.hpp"
#include "model/sink_thread.hpp"

namespace tasklens::model {

// A host that takes a few percent is common on a virtual machine; past that the timings stretch
// unevenly, which nothing the guest sees can take out.
std::string host_steal_warning(double percent) {
  if (percent < kHostStealWorthSaying) return {};
  return "the virtual machine's host took " + std::to_string(static_cast<int>(percent + 0.5)) +
         "% of the time of the program's CPUs away while it was recorded (steal time): a strand "
         "running when its CPU was taken counts that time as work, and the figures move from one "
         "recording to the next; record it again when the host is quieter, or on a machine of "
         "your own";
}
namespace detail {

Model Builder::finalize() {
  Model m;
  place_open_flow_chains();  // (builder_tbb.cpp)
  // The nodes of ordered parts (on_ordered) go after everything else of their phase.
  for (const auto& [instance, chain] : last_ordered_)
    append_item(chain.phase, chain.node | kNodeBit);
  // Each node's items, contiguous and in append order (a stable counting sort of the log), and
  // the number of strands and nodes in each node's subtree (summed children first: a child's
  // id is larger than its parent's): on a thread of their own, while the tasks are closed and
  // joined below (the two only read the nodes).
  const uint32_t node_count = static_cast<uint32_t>(nodes_.size());
  std::vector<uint32_t> item_begin(node_count + 1, 0);
  std::vector<uint32_t> items;
  std::vector<uint32_t> subtree_strands(node_count, 0), subtree_nodes(node_count, 1);
  std::vector<uint32_t> node_id, strand_id, first_strand, node_site;
  std::future<void> items_done = std::async(std::launch::async, [&] {
    for (uint32_t v = 0; v < node_count; ++v)
      item_begin[v + 1] = item_begin[v] + nodes_[v].item_count;
    items.resize(items_.size());
    std::vector<uint32_t> fill(item_begin.begin(), item_begin.end() - 1);
    for (const auto& [node, item] : items_) {
      items[fill[node]++] = item;
      if (!(item & kNodeBit)) ++subtree_strands[node];
    }
    std::vector<std::pair<uint32_t, uint32_t>>().swap(items_);
    for (uint32_t v = 0; v < node_count; ++v)
      if (nodes_[v].tail_strand != kNone) ++subtree_strands[v];
    for (uint32_t v = node_count; v-- > 1;) {
      subtree_strands[nodes_[v].parent] += subtree_strands[v];
      subtree_nodes[nodes_[v].parent] += subtree_nodes[v];
    }
  });

  // Escaped tasks join where their innermost enclosing taskgroup or phase ends.
  std::vector<uint32_t> join_target(node_count, kNone);
  for (uint32_t v = 0; v < node_count; ++v) {  // parents come before children
    const PNode& p = nodes_[v];
    uint32_t inherited = p.parent == kNone ? kNone : join_target[p.parent];
    if (p.kind == NodeKind::Taskgroup || p.kind == NodeKind::Phase) {
      uint32_t j = p.join_strand;
      if (j == kNone && p.kind == NodeKind::Phase && p.region != kNone)
        j = regions_[p.region].post_strand;
      join_target[v] = j != kNone ? j : inherited;
    } else {
      join_target[v] = inherited;
    }
  }
  // The chains of ordered parts (on_ordered) join where their phase ends.
  for (const auto& [instance, chain] : last_ordered_)
    if (chain.phase < node_count) edge(chain.last, join_target[chain.phase]);
  // Tasks whose end was not recorded, closed where they must have ended (builder_unended.cpp).
  close_unended(join_target);
  // One pass over the tasks: those still open (a killed program) are closed where they were,
  // escaped ones get their join, and what the edges still need of a task is where it ended;
  // the rest of its state goes now.
  std::vector<uint32_t> task_end(tasks_.size());
  for (uint32_t t = 0; t < tasks_.size(); ++t) {
    close_strand(t);
    TaskState& ts = tasks_[t];
    if (!ts.implicit && !ts.joined_in_scope && ts.node != kNone && ts.node != 0 &&
        ts.prev != kNone) {
      uint32_t target = join_target[nodes_[ts.node].parent];
      if (target != kNone) edges_.emplace_back(ts.prev, target);
    }
    task_end[t] = ts.prev;
    delete ts.extra;
  }
  std::vector<uint32_t>().swap(join_target);
  std::vector<TaskState>().swap(tasks_);
  // The numbering's arrays, here rather than on the items' thread, which this one waits for
  // (in the memory the tasks had).
  node_id.assign(node_count, kNone);
  strand_id.assign(strands_.size(), kNone);
  first_strand.assign(node_count, 0);
  node_site.assign(node_count, 0);
  items_done.get();

  // Depth-first numbering of nodes and strands: the serial elision order. Not by walking the
  // tree depth first (that reads each node's items at a random place), but from the subtree
  // sizes: each node, in id order, places its items after its own first strand and its
  // children's subtrees one after the other, reading the items in sequence (below, on this
  // thread). The model's nodes are written from that on another thread, following this one
  // (`numbered`: the nodes whose ids are known), and each strand is attributed to the innermost
  // construct site around it (node_site, by final node id: parents are numbered before their
  // children). Writing the nodes was 0.016 of the numbering's 0.028 s on fib(29).
  m.nodes.resize(node_count);
  node_id[0] = 0;
  std::atomic<uint32_t> numbered{0};
  std::atomic<bool> nodes_written{false};
  auto write_nodes = [&] {
    for (uint32_t v = 0, ready = 0; v < node_count; ++v) {
      while (v >= ready) {
        ready = numbered.load(std::memory_order_acquire);
        if (v >= ready) numbered.wait(ready, std::memory_order_acquire);
      }
      Node& out = m.nodes[node_id[v]];
      out.kind = nodes_[v].kind;
      out.parent = nodes_[v].parent == kNone ? kNone : node_id[nodes_[v].parent];
      out.site = nodes_[v].site;
      out.instance = nodes_[v].instance;
      out.strand_begin = first_strand[v];
      out.strand_end = first_strand[v] + subtree_strands[v];
      out.subtree_size = subtree_nodes[v];
      node_site[node_id[v]] = out.site != kNone     ? out.site
                              : out.parent == kNone ? 0
                                                    : node_site[out.parent];
    }
    nodes_written.store(true, std::memory_order_release);
    nodes_written.notify_one();
  };
  // Fragments: distinct (begin, end) code pairs, numbered in the order of the provisional
  // strands, on the same thread once the nodes are written (a pass that streams, while this
  // thread makes the model's strands; moving the strands took 0.045 s with the fragments, 0.038
  // s without). Each strand's fragment goes where its begin code was. There are few fragments:
  // a small direct-mapped cache in front of the hash map answers nearly every strand.
  m.fragments.push_back(Fragment{});
  auto number_fragments = [&] {
    std::unordered_map<uint64_t, uint32_t> fragment_ids;
    fragment_ids.emplace(0, 0);
    struct PairSlot {
      uint64_t pair = 0;
      uint32_t fragment = 0;
    };
    constexpr size_t kPairCache = 256;
    std::vector<PairSlot> pair_cache(kPairCache);  // pair 0 is fragment 0: right when empty
    for (PStrand& p : strands_) {
      const uint64_t pair = (uint64_t(p.begin_code) << 32) | p.end_code;
      PairSlot& slot = pair_cache[(p.begin_code * 31u + p.end_code) & (kPairCache - 1)];
      if (slot.pair != pair) {
        auto [it, inserted] = fragment_ids.try_emplace(pair, uint32_t(m.fragments.size()));
        if (inserted) m.fragments.push_back(Fragment{codes_[p.begin_code], codes_[p.end_code]});
        slot = {pair, it->second};
      }
      p.begin_code = slot.fragment;
    }
  };
  std::future<void> fragments_done = std::async(std::launch::async, [&] {
    write_nodes();  // (allocates nothing: cannot fail)
    number_fragments();
  });
  constexpr uint32_t kPublish = 1 << 14;  // nodes numbered between two wake-ups of the writer
  for (uint32_t v = 0; v < node_count; ++v) {
    uint32_t next_strand = first_strand[v], next_node = node_id[v] + 1;
    for (uint32_t i = item_begin[v]; i < item_begin[v + 1]; ++i) {
      const uint32_t item = items[i];
      if (item & kNodeBit) {
        const uint32_t c = item & ~kNodeBit;
        first_strand[c] = next_strand;
        node_id[c] = next_node;
        next_strand += subtree_strands[c];
        next_node += subtree_nodes[c];
      } else {
        strand_id[item] = next_strand++;
      }
    }
    if (nodes_[v].tail_strand != kNone) strand_id[nodes_[v].tail_strand] = next_strand++;
    if ((v + 1) % kPublish == 0 || v + 1 == node_count) {
      numbered.store(v + 1, std::memory_order_release);
      numbered.notify_one();
    }
  }
  const uint32_t next_strand = node_count ? subtree_strands[0] : 0;
  nodes_written.wait(false, std::memory_order_acquire);
  std::vector<uint32_t>().swap(items);
  std::vector<uint32_t>().swap(item_begin);
  std::vector<uint32_t>().swap(subtree_nodes);
  std::vector<uint32_t>().swap(subtree_strands);
  std::vector<uint32_t>().swap(first_strand);
  std::vector<PNode>().swap(nodes_);
  std::vector<std::vector<uint32_t>>().swap(ids_);
  uint64_t backward = 0, backward_fulfill = 0;  // of which from a detached task's fulfilment
  // Strands move to their final place in sequential passes over blocks of the provisional ones
  // (the scattered accesses are writes, which do not stall like scattered reads), taken by this
  // thread and, once the edges are done, by theirs.
  constexpr uint32_t kMoveBlock = 1 << 16;
  const uint32_t provisional = static_cast<uint32_t>(strands_.size());
  std::atomic<uint32_t> next_block{0};
  constexpr int kMaking = 0, kMade = 1, kFailed = 2;
  std::atomic<int> strands_made{kMaking};  // m.strands, for the edges' thread
  auto move_strands = [&] {
    for (uint32_t b;
         (b = next_block.fetch_add(kMoveBlock, std::memory_order_relaxed)) < provisional;) {
      const uint32_t e = std::min(provisional, b + kMoveBlock);
      for (uint32_t s = b; s < e; ++s) {
        if (strand_id[s] == kNone) continue;
        const PStrand& p = strands_[s];
        Strand& out = m.strands[strand_id[s]];
        out.work = p.work;
        out.start = p.start;
        out.end = p.end;
        out.thread = p.thread;
        out.node = node_id[p.node];
        out.site = node_site[out.node];
        out.fragment = p.begin_code;  // its fragment by now (above)
        m.strand_order[strand_id[s]] = s;
      }
    }
  };
  // Edges, in final ids; every edge must go forward in the serial order. Counting sort into
  // the CSR arrays (no comparison sort: there are millions of edges). On a thread of their own:
  // they need only the numbering, like the strands' move.
  std::future<void> edges_done = std::async(std::launch::async, [&] {
    m.pred_begin.assign(size_t{next_strand} + 1, 0);
    for (auto& [ref, to] : edges_) {
      const uint32_t from = (ref & kTaskRef) ? task_end[ref & ~kTaskRef] : ref;
      // kNone: the task never ran (killed)
      uint32_t a = from == kNone ? kNone : strand_id[from], b = strand_id[to];
      if (a == kNone || b == kNone || a == b) {
        to = kNone;
        continue;
      }
      if (a > b) {
        ++backward;
        if (std::binary_search(fulfill_joins_.begin(), fulfill_joins_.end(), from))
          ++backward_fulfill;
        to = kNone;
        continue;
      }
      ref = a;
      to = b;
      m.pred_begin[b + 1]++;
    }
    for (size_t i = 0; i < next_strand; ++i) m.pred_begin[i + 1] += m.pred_begin[i];
    m.preds.resize(m.pred_begin.back());
    // pred_begin[to] serves as to's cursor, ending at to + 1's beginning: shifted back after.
    for (const auto& [from, to] : edges_)
      if (to != kNone) m.preds[m.pred_begin[to]++] = static_cast<uint32_t>(from);
    std::copy_backward(m.pred_begin.begin(), m.pred_begin.end() - 1, m.pred_begin.end());
    m.pred_begin[0] = 0;
    std::vector<std::pair<uint32_t, uint32_t>>().swap(edges_);
    strands_made.wait(kMaking, std::memory_order_acquire);
    if (strands_made.load(std::memory_order_acquire) == kMade) move_strands();
  });
  // The model's strands are made once the numbering's arrays and the provisional nodes are
  // gone, so that their memory is reused (huge_blocks.cpp): made during the numbering, on the
  // fragments' thread, they took 66 MB more of fresh memory on fib(29) for 0.008 s less.
  try {
    m.strands.resize(next_strand);
    m.strand_order.resize(next_strand);
    fragments_done.get();  // (the move reads each strand's fragment)
  } catch (...) {
    strands_made.store(kFailed, std::memory_order_release);
    strands_made.notify_one();
    throw;
  }
  strands_made.store(kMade, std::memory_order_release);
  strands_made.notify_one();
  move_strands();
  // The extra metrics and region work below read strand_id only; the edges' thread may still
  // be moving strands.

  // Further metrics, metric-major (Model::extra_work).
  if (extra_count_) {
    const size_t n = m.strands.size();
    extra_work_.resize(strands_.size() * extra_count_);
    m.extra_work.assign(n * extra_count_, 0);
    for (uint32_t s = 0; s < strands_.size(); ++s) {
      if (strand_id[s] == kNone) continue;
      for (uint32_t x = 0; x < extra_count_; ++x)
        m.extra_work[x * n + strand_id[s]] = extra_work_[size_t(s) * extra_count_ + x];
    }
    for (uint32_t x = 0; x < extra_count_; ++x)
      m.extra_metrics.push_back(trace::to_string(trace_.metrics()[x + 1]));
  }

  // Region work, in final strand ids and sorted by strand.
  for (RegionWork& r : region_work_) r.strand = strand_id[r.strand];
  std::erase_if(region_work_, [](const RegionWork& r) { return r.strand == kNone || !r.work; });
  std::sort(region_work_.begin(), region_work_.end(), [](const RegionWork& a, const RegionWork& b) {
    return a.strand != b.strand ? a.strand < b.strand : a.region < b.region;
  });
  m.region_work = std::move(region_work_);
  for (StrandBlocked& b : blocked_work_) b.strand = strand_id[b.strand];
  std::erase_if(blocked_work_, [](const StrandBlocked& b) { return b.strand == kNone; });
  std::sort(blocked_work_.begin(), blocked_work_.end(),
            [](const StrandBlocked& a, const StrandBlocked& b) { return a.strand < b.strand; });
  // A strand seen twice (its thread blocked, ran another strand, came back) is one entry.
  size_t w = 0;
  for (size_t r = 0; r < blocked_work_.size(); ++r) {
    if (w > 0 && blocked_work_[w - 1].strand == blocked_work_[r].strand)
      blocked_work_[w - 1].ticks += blocked_work_[r].ticks;
    else
      blocked_work_[w++] = blocked_work_[r];
  }
  blocked_work_.resize(w);
  m.blocked_work = std::move(blocked_work_);
  m.region_names = trace_.region_names();
  for (const RegionWork& r : m.region_work)
    if (r.region >= m.region_names.size()) m.region_names.resize(r.region + 1);
  for (size_t i = 0; i < m.region_names.size(); ++i)
    if (m.region_names[i].empty()) m.region_names[i] = "region#" + std::to_string(i);

  edges_done.get();
  describe_run(m);
  find_divisible(m, node_id);
  describe_anomalies(m, backward, backward_fulfill);
  uint64_t first = ~uint64_t(0), last = 0;
  for (const Strand& st : m.strands) {
    if (st.end == 0) continue;  // never ran
    first = std::min(first, st.start);
    last = std::max(last, st.end);
  }
  preemption_in_run(m, first, last);
  return m;
}

void Builder::describe_run(Model& m) {
  for (const auto& [address, name] : trace_.site_names())
    m.synthetic_sites[address] = SourceName{name.file, name.line, name.function};
  m.sites = std::move(sites_);
  m.instance_count = instance_count_;
  m.metric = metric_of(trace_);
  m.metric_is_time = trace::is_time(trace_.metric());
  double hz = trace_.tsc_hz();
  m.tsc_per_second = hz;
  m.ticks_per_second = trace_.metric() == trace::Metric::Tsc         ? hz
                       : trace_.metric() == trace::Metric::TaskClock ? 1e9
                                                                     : 0;
  m.task_cost = task_cost_of(trace_);
  if (m.task_cost > 0) m.task_cost_tasks = trace_.task_cost().tasks;
  m.complete = trace_.complete();
  // Without an OpenMP runtime (a oneTBB program) there are no worksharing loops to split.
  m.loops_have_chunks = (trace_.runtime_flags() & trace::kRuntimeHasDispatch) != 0 ||
                        trace_.runtime_version().rfind("oneTBB", 0) == 0;
  m.task_count = explicit_tasks_;
  m.preempted = preempted_total_;
  m.blocked = blocked_total_;
  m.slow_faults = faults_total_;
  m.blocked_removed = !options_.blocked_as_work;
  m.recorder_stalled = stalled_total_;
  m.recorder_stalls = trace_.recorder_stats().stalls;
  m.recorder_stall_ticks = trace_.recorder_stats().stall_ticks;
  m.switches_lost = trace_.recorder_stats().switches_lost;
  if (trace_.has_host_steal())
    m.host_steal_percent = trace::host_steal_percent(trace_.host_steal());
  m.probe_per_event = probe_ticks_;
  m.probe_removed = probe_total_;
  m.runtime_waited = waited_total_;
  m.probe_measured_in_run = probe_in_run_;
  m.runtime_removed = runtime_total_;
  m.runtime_cost_kinds = uint32_t(runtime_costs_.kinds());
  m.runtime_cost_scale = runtime_costs_.speed();
  m.thread_count = trace_.stream_count();
  if (!m.loops_have_chunks)
    m.warnings.push_back(
        "the OpenMP runtime had no dispatch callback (LLVM < 16): each thread's share of a "
        "worksharing loop was seen as a whole and is taken as an even share of the loop's "
        "iterations (a dynamic schedule's real shares, and their imbalance, are not seen)");
  m.losses = trace::describe_losses(
      trace_.has_recorder_stats() ? &trace_.recorder_stats() : nullptr, trace_.has_finish(),
      trace_.has_finish() ? trace_.finish().events_lost : 0,
      trace_.has_finish() ? trace_.finish().reason : 0);
  note_unended(m);  // (its loss, if any, is worded below with the others)
  for (const trace::Loss& loss : m.losses) {
    m.warnings.push_back(loss.message);
    // Events after a failed write are missing: the trace was cut short, though not killed.
    if (loss.cause == "disk_full" || loss.cause == "write_error") m.complete = false;
  }
  if (std::string w = host_steal_warning(m.host_steal_percent); !w.empty())
    m.warnings.push_back(std::move(w));
  if (m.switches_lost > 0)
    m.warnings.push_back(
        std::to_string(m.switches_lost) +
        " context switches were not seen (the kernel's ring for them overflowed): time threads "
        "spent switched out then may count as work; raise the limit of locked perf memory "
        "(sysctl kernel.perf_event_mlock_kb) to see them all");
  if (trace_.has_finish() && (trace_.finish().flags & trace::kFinishThreadsStillRunning))
    m.warnings.push_back(
        "the program exited inside a parallel region: work still running on "
        "other threads at exit is not recorded");
  if (trace_.header().version_major == trace::kVersionMajor &&
      trace_.header().version_minor > trace::kVersionMinor)
    m.warnings.push_back("the trace was written by a newer tasklens (format " +
                         std::to_string(trace_.header().version_major) + "." +
                         std::to_string(trace_.header().version_minor) + "; this one reads " +
                         std::to_string(trace::kVersionMajor) + "." +
                         std::to_string(trace::kVersionMinor) +
                         "): what it recorded that this one does not know was skipped; update "
                         "tasklens to see all of it");
  if (!trace_.complete())
    m.warnings.push_back("the trace is incomplete (" +
                         trace::incomplete_cause(trace_.has_launch_status(),
                                                 trace_.launch_status().exit_code,
                                                 trace_.launch_status().signal) +
                         "): the profile covers what was recorded");
}

void Builder::describe_anomalies(Model& m, uint64_t backward, uint64_t backward_fulfill) {
  if (serialized_undeferred_)
    m.warnings.push_back(
        "tasks ran in one-thread teams, where the runtime cannot tell if(0)/final tasks from "
        "others: they were all taken as deferred; record with 2 or more threads for exact "
        "if(0)/final semantics");
  if (other_initial_tasks_)
    m.warnings.push_back(
        std::to_string(other_initial_tasks_) +
        " thread(s) other than the program's first ran OpenMP constructs without tasklens seeing "
        "them start (threads started before main(), or by a library such as oneTBB): their work "
        "counts as parallel to all of the program's, and time spent waiting for them as work");
  for (const auto& [task, open] : open_regions_)
    if (open.depth > 0) ++region_unclosed_;
  if (region_unclosed_)
    m.warnings.push_back(std::to_string(region_unclosed_) +
                         " region(s) were begun and not ended in the same task: their work "
                         "counts until the task ended");
  if (region_unmatched_)
    m.warnings.push_back(std::to_string(region_unmatched_) +
                         " region end(s) had no matching begin in the same task (or a different "
                         "name) and were ignored");
  if (backward > backward_fulfill)
    m.warnings.push_back(std::to_string(backward - backward_fulfill) +
                         " dependence edges contradicted the program order and were ignored");
  if (backward_fulfill)
    m.warnings.push_back(
        std::to_string(backward_fulfill) +
        " task(s) waiting for a detached task were created before the task that fulfilled its "
        "event: tasklens cannot order them after the fulfilment (they count as starting when "
        "its body ended), so the span may be too short");
  if (anomalies_)
    m.warnings.push_back(std::to_string(anomalies_) +
                         " events did not match the construct they belong to (the trace may "
                         "have started or stopped inside a construct)");
}

void Builder::shares_of_first_chunks(const std::vector<uint64_t*>& firsts, uint64_t trip) {
  uint64_t size = 0;
  for (const uint64_t* c : firsts) size = std::max(size, *c);
  if (size == 0) return;
  const uint64_t threads = firsts.size(), chunks = (trip + size - 1) / size;
  for (uint64_t rank = 0; rank < threads; ++rank) {
    const uint64_t mine = rank < chunks ? (chunks - rank + threads - 1) / threads : 0;
    uint64_t iterations = mine * size;
    if (mine && (chunks - 1) % threads == rank) iterations -= chunks * size - trip;
    *firsts[rank] = iterations;
  }
}

// Model::divisible from the chunks' iteration counts (chunk_iterations_), once the nodes have
// their final ids and strand ranges.
void Builder::find_divisible(Model& m, const std::vector<uint32_t>& node_id) {
  // A static schedule with a chunk size: the runtime reports each thread's first chunk only, and
  // the thread then runs every P-th chunk of the loop in the same strand. Its share follows from
  // the trip count, the chunk size and its rank among the P threads' first chunks.
  std::unordered_map<uint32_t, std::vector<ChunkIterations*>> partly_seen, undispatched;
  // Taskloops' trip counts, by final node id, and how many of their tasks had no dispatch event.
  std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> taskloops;
  std::vector<uint8_t> task_dispatched;  // by final node id, for taskloop tasks
  for (ChunkIterations& c : chunk_iterations_) {
    if (c.piece == Piece::Taskloop) {
      if (node_id[c.node] != kNone) taskloops[node_id[c.node]] = {c.iterations, 0};
      continue;
    }
    if (c.piece == Piece::TaskloopTask) {
      if (task_dispatched.empty()) task_dispatched.assign(m.nodes.size(), 0);
      if (node_id[c.node] != kNone) task_dispatched[node_id[c.node]] = 1;
      continue;
    }
    auto it = loop_coverage_.find(c.instance);
    if (it == loop_coverage_.end()) continue;
    if (c.piece == Piece::Share && it->second.dispatched == 0)
      undispatched[c.instance].push_back(&c);
    else if (c.piece == Piece::FirstChunk && it->second.dispatched > 0 &&
             it->second.dispatched < it->second.trip)
      partly_seen[c.instance].push_back(&c);
  }
  // A loop without dispatch events: the threads' shares split its trip count evenly (exact for
  // one thread, and for a static schedule up to one iteration).
  for (auto& [instance, shares] : undispatched)
    for (ChunkIterations* c : shares) c->iterations /= shares.size();
  // A taskloop's tasks without dispatch events (one-thread teams have none): its trip count
  // shared evenly among those that ran its body (one strand each: libomp may add a task that
  // only creates the others).
  if (!taskloops.empty()) {
    for (const Node& v : m.nodes)
      if (v.kind == NodeKind::Task && v.parent != kNone && v.subtree_size == 1 &&
          v.strand_end == v.strand_begin + 1) {
        auto it = taskloops.find(v.parent);
        if (it != taskloops.end()) ++it->second.second;
      }
    for (uint32_t id = 0; id < m.nodes.size(); ++id) {
      const Node& v = m.nodes[id];
      if (v.kind != NodeKind::Task || v.parent == kNone) continue;
      auto it = taskloops.find(v.parent);
      if (it == taskloops.end() || (!task_dispatched.empty() && task_dispatched[id])) continue;
      const uint64_t iterations = it->second.first / std::max<uint64_t>(it->second.second, 1);
      if (iterations >= 2 && v.subtree_size == 1 && v.strand_end == v.strand_begin + 1)
        m.divisible.push_back(
            {v.strand_begin, static_cast<uint32_t>(std::min<uint64_t>(iterations, 0xffffffffu))});
    }
  }
  for (auto& [instance, firsts] : partly_seen) {
    std::sort(firsts.begin(), firsts.end(), [](const ChunkIterations* a, const ChunkIterations* b) {
      return a->start < b->start;
    });
    std::vector<uint64_t*> ranked;
    for (ChunkIterations* c : firsts) ranked.push_back(&c->iterations);
    shares_of_first_chunks(ranked, loop_coverage_[instance].trip);
  }
  for (const ChunkIterations& c : chunk_iterations_) {
    if (c.piece == Piece::Taskloop || c.iterations < 2 || c.node >= node_id.size() ||
        node_id[c.node] == kNone)
      continue;
    const Node& v = m.nodes[node_id[c.node]];
    // A chunk whose body made constructs (tasks, nested regions) was seen in parts: keep them.
    if (v.subtree_size != 1 || v.strand_end != v.strand_begin + 1) continue;
    m.divisible.push_back(
        {v.strand_begin, static_cast<uint32_t>(std::min<uint64_t>(c.iterations, 0xffffffffu))});
  }
  std::vector<ChunkIterations>().swap(chunk_iterations_);
  std::sort(m.divisible.begin(), m.divisible.end(),
            [](const DivisibleStrand& a, const DivisibleStrand& b) { return a.strand < b.strand; });
  m.divisible.erase(std::unique(m.divisible.begin(), m.divisible.end(),
                                [](const DivisibleStrand& a, const DivisibleStrand& b) {
                                  return a.strand == b.strand;
                                }),
                    m.divisible.end());
}

}  // namespace detail

const char* to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::Program:
      return "program";
    case NodeKind::Parallel:
      return "parallel";
    case NodeKind::Phase:
      return "phase";
    case NodeKind::ImplicitTask:
      return "implicit-task";
    case NodeKind::Task:
      return "task";
    case NodeKind::Taskgroup:
      return "taskgroup";
    case NodeKind::Loop:
      return "loop";
    case NodeKind::Chunk:
      return "chunk";
    case NodeKind::Single:
      return "single";
    case NodeKind::Sections:
      return "sections";
    case NodeKind::Taskloop:
      return "taskloop";
    case NodeKind::Masked:
      return "masked";
  }
  return "unknown";
}

const char* to_string(SiteKind kind) {
  switch (kind) {
    case SiteKind::Program:
      return "program";
    case SiteKind::Parallel:
      return "parallel";
    case SiteKind::Task:
      return "task";
    case SiteKind::Taskloop:
      return "taskloop";
    case SiteKind::Loop:
      return "loop";
    case SiteKind::Sections:
      return "sections";
    case SiteKind::Single:
      return "single";
    case SiteKind::Taskgroup:
      return "taskgroup";
    case SiteKind::Masked:
      return "masked";
    case SiteKind::ParallelFor:
      return "parallel_for";
    case SiteKind::ParallelReduce:
      return "parallel_reduce";
    case SiteKind::ParallelInvoke:
      return "parallel_invoke";
    case SiteKind::ParallelSort:
      return "parallel_sort";
    case SiteKind::TbbAlgorithm:
      return "tbb_algorithm";
    case SiteKind::ArenaExecute:
      return "arena_execute";
    case SiteKind::Thread:
      return "thread";
  }
  return "unknown";
}

std::string metric_of(const trace::TraceFile& trace) { return trace::to_string(trace.metric()); }

uint64_t task_cost_of(const trace::TraceFile& trace) {
  const double ticks_per_second = trace.metric() == trace::Metric::Tsc         ? trace.tsc_hz()
                                  : trace.metric() == trace::Metric::TaskClock ? 1e9
                                                                               : 0;
  if (!trace.has_task_cost() || !(ticks_per_second > 0)) return 0;
  const double ticks = double(trace.task_cost().pico_per_task) * 1e-12 * ticks_per_second + 0.5;
  // A damaged record (or clock) can make it absurd: no cost rather than a value that does not fit.
  return ticks < 0x1p63 ? uint64_t(ticks) : 0;
}

Model build_model(const trace::TraceFile& trace, const BuildOptions& options) {
  return detail::Builder(trace, options).run();
}

Model build_streaming(const trace::TraceFile& trace, StrandSink& sink,
                      const BuildOptions& options) {
  // The sink works on a thread of its own (sink_thread.hpp): the builder's thread is the bound.
  SinkThread threaded(sink, size_t{1} << 15, 8, options.sink_tap);
  Model m = detail::Builder(trace, options, &threaded).run();
  threaded.drain();
  return m;
}

}  // namespace tasklens::model
