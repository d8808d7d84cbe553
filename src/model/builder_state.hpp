// The model builder's state, shared by its two halves: builder_events.cpp (with the loops'
// events in builder_loops.cpp, oneTBB's in builder_tbb.cpp) turns events into provisional
// strands, nodes and edges; builder_finalize.cpp numbers them in serial-elision order and
// produces the Model. Internal to src/model.
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>

#include "model/builder.hpp"
#include "model/builder_records.hpp"
#include "model/builder_stream_state.hpp"
#include "model/dep_table.hpp"
#include "model/off_cpu_stream.hpp"
#include "model/runtime_cost_table.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::model::detail {

using trace::Event;
using trace::EventKind;

class Builder {
 public:
  // `out`: the streaming mode (build_streaming): every strand goes to it once final, and the
  // builder keeps only the live part of the run (builder_stream.cpp).
  Builder(const trace::TraceFile& trace, const BuildOptions& options, StrandSink* out = nullptr)
      : trace_(trace), options_(options), out_(out) {}
  // finalize() frees the tasks' extras; a build that stopped with an error (a damaged trace)
  // never got there.
  ~Builder() {
    for (TaskState& ts : tasks_) delete ts.extra;
  }
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;
  Model run();

 private:
  // ---- id mapping: recorder ids are (thread+1) << 40 | counter, dense per thread. A damaged
  // trace can hold any number: one beyond what the file could have numbered is refused rather
  // than made the size of a vector (which then ran out of memory).
  // (Inlined up to the streaming mode's page cache, which answers nearly every call there.)
  __attribute__((always_inline)) uint32_t& slot(uint64_t id) {
    const uint64_t t = id >> 40;
    if (out_ && id_cache_[t % kIdCaches].key == id / kIdPage)
      return id_cache_[t % kIdCaches].page->task[id % kIdPage];
    return slot_slow(id);
  }
  [[gnu::noinline]] uint32_t& slot_slow(uint64_t id) {
    uint64_t t = (id >> 40);
    uint64_t c = id & ((1ull << 40) - 1);
    if (t > kMaxIdThreads || c > id_limit_) [[unlikely]]
      throw trace::TraceError(trace_.path() + ": corrupted event stream: id " + std::to_string(id) +
                              " is out of range for this trace");
    if (out_) return stream_slot(t, c);
    if (t >= ids_.size()) ids_.resize(t + 1);
    auto& v = ids_[t];
    if (c >= v.size()) {
      // Room for as many ids as the trace has tasks, reserved once for each thread that has
      // a stream (the recorder numbers its threads' ids from 1 << 40): growing by copies
      // took 60% of a large report's page faults. (Only address space until the ids come.)
      if (v.capacity() == 0 && t <= current_.size()) v.reserve(ids_per_thread_);
      v.resize(std::max<size_t>(c + 1, v.size() * 2), kNone);
    }
    return v[c];
  }
  uint32_t task(uint64_t id) {
    uint32_t& s = slot(id);
    if (s == kNone) s = new_task(id);
    return s;
  }
  uint32_t new_task(uint64_t id) {
    if (out_) return stream_new_task(id);
    tasks_.emplace_back();
    return static_cast<uint32_t>(tasks_.size() - 1);
  }
  // Regions are numbered apart from tasks (they are few): in a damaged trace a task's id met as
  // a region's must not index the regions with a task's index.
  uint32_t region(uint64_t id) {
    auto [it, inserted] = region_ids_.try_emplace(id, static_cast<uint32_t>(regions_.size()));
    if (inserted) regions_.emplace_back();
    return it->second;
  }

  uint32_t new_node(NodeKind kind, uint32_t parent) {
    if (out_) return stream_new_node(kind, parent);
    uint32_t n = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(PNode{kind, parent});
    if (parent != kNone) append_item(parent, n | kNodeBit);
    return n;
  }
  // Items are kept in one append-ordered log, not per-node linked lists: finalize() groups them
  // per node with a counting sort, so the depth-first numbering reads them sequentially.
  void append_item(uint32_t node, uint32_t item) {
    PNode& p = nodes_[node];
    ++p.item_count;
    p.last_item = item;
    if (!out_) items_.emplace_back(node, item);
  }
  // Once per construct instance (every task's creation), from a few sites: a small
  // direct-mapped cache in front of the hash map. An address inside the runtime is not cached:
  // its site depends on the scope.
  uint32_t site(uint64_t address, SiteKind kind, uint32_t scope) {
    const uint64_t key = address * 16 + static_cast<uint64_t>(kind);
    SiteSlot& slot = site_cache_[(key * 0x9e3779b97f4a7c15ull) >> 60];  // kSiteCache = 16
    site_code_ = address;
    if (address != 0 && slot.key == key) return slot.site;
    const bool own = address != 0 && !in_runtime(address);
    if (!own) site_code_ = address = enclosing_address(scope);
    const uint64_t site_key = address * 16 + static_cast<uint64_t>(kind);
    auto [it, inserted] = site_ids_.try_emplace(site_key, static_cast<uint32_t>(sites_.size()));
    if (inserted) {
      uint32_t around = 0;
      for (uint32_t v = scope; v != kNone; v = nodes_[v].parent)
        if (nodes_[v].site != kNone) {
          around = nodes_[v].site;
          break;
        }
      sites_.push_back(Site{address, kind, {}, 0, {}, around});
      if (options_.place_site) {
        const uint32_t placed = options_.place_site(sites_.back(), it->second, around);
        if (placed != it->second) {
          sites_.pop_back();
          it->second = placed;
        }
      }
    }
    if (own) slot = {key, it->second};
    return it->second;
  }
  struct SiteSlot {
    uint64_t key = 0;  // 0 never hits: address 0 is never cached
    uint32_t site = 0;
  };
  static constexpr size_t kSiteCache = 16;
  SiteSlot site_cache_[kSiteCache];
  uint64_t enclosing_address(uint32_t node) {
    for (; node != kNone; node = nodes_[node].parent)
      if (nodes_[node].site != kNone && sites_[nodes_[node].site].address)
        return sites_[nodes_[node].site].address;
    return 0;
  }
  bool in_runtime(uint64_t address) const {
    for (const auto& r : runtime_ranges_)
      if (address >= r.first && address < r.second) return true;
    return false;
  }

  // ---- code addresses of strand boundaries (fragments). Few distinct addresses, looked up
  // once per strand end: a small direct-mapped cache in front of the hash map.
  // (The cache's hit inlined: a strand's two codes are nearly always in it.)
  __attribute__((always_inline)) uint32_t code_id(uint64_t address) {
    if (address == 0) return 0;
    const CodeSlot& slot = code_cache_[(address ^ (address >> 13)) & (kCodeCache - 1)];
    if (slot.address == address) return slot.id;
    return code_id_slow(address);
  }
  [[gnu::noinline]] uint32_t code_id_slow(uint64_t address) {
    CodeSlot& slot = code_cache_[(address ^ (address >> 13)) & (kCodeCache - 1)];
    uint32_t id = 0;  // an address inside the OpenMP runtime says nothing about the program
    if (!in_runtime(address)) {
      auto [it, inserted] = code_ids_.try_emplace(address, static_cast<uint32_t>(codes_.size()));
      if (inserted) codes_.push_back(address);
      id = it->second;
    }
    slot = {address, id};
    return id;
  }
  // The streaming mode's sites merge as they come (BuildOptions::place_site), so a node's site
  // may have another's address; its own is kept for the fragments of its strands, which are the
  // DAG's reading's (there sites merge after the build).
  void keep_site_code(uint32_t node) {
    if (out_) sn_[node].code = site_code_;
  }
  uint64_t site_address(uint32_t node) const {
    if (out_ && node != kNone && sn_[node].code != 0) return sn_[node].code;
    uint32_t st = node == kNone ? kNone : nodes_[node].site;
    return st == kNone ? 0 : sites_[st].address;
  }

  // ---- strands
  uint32_t open_strand(uint32_t t, uint32_t thread, uint64_t time) {
    TaskState& ts = tasks_[t];
    if (ts.scope == kNone) [[unlikely]] {  // a task resumed that never began (a damaged trace)
      ts.node = ts.scope = 0;
      ++anomalies_;
    }
    uint32_t s = add_strand(PStrand{0, time, time, thread, ts.scope, code_id(cur_code_), 0});
    append_item(ts.scope, s);
    ts.open = s;
    if (thread < stream_open_.size()) stream_open_[thread].push_back(ss_[s].order);
    if (ts.extra && !ts.extra->next_preds.empty()) {
      for (uint32_t ref : ts.extra->next_preds) {
        if (!out_) {
          edges_.emplace_back(ref, s);
        } else if (ref & kTaskRef) {  // (the streaming mode: see add_next_pred)
          edge_from_task_end(ref & ~kTaskRef, s);
          dep_drop(ref & ~kTaskRef);
        } else {
          edge(ref, s);
          drop(ref);
        }
      }
      ts.extra->next_preds.clear();
    }
    return s;
  }
  // A new provisional strand (in the streaming mode, in a slot a retired one left).
  uint32_t add_strand(const PStrand& p) {
    if (out_) return stream_add_strand(p);
    strands_.push_back(p);
    return static_cast<uint32_t>(strands_.size() - 1);
  }
  uint32_t close_strand(uint32_t t) {
    TaskState& ts = tasks_[t];
    if (ts.open != kNone) {
      strands_[ts.open].end_code = code_id(cur_code_);
      if (strands_[ts.open].thread < stream_open_.size())
        stream_idle_strand_closed(strands_[ts.open], ss_[ts.open].order);
      if (out_) stream_closed(ts.prev, ts.open);
      ts.prev = ts.open;
      ts.open = kNone;
    }
    return ts.prev;
  }
  __attribute__((always_inline)) void edge(uint32_t from, uint32_t to) {
    if (from == kNone || to == kNone) return;
    if (out_)
      stream_edge(from, to);
    else
      dag_edge(from, to);
  }
  [[gnu::noinline]] void dag_edge(uint32_t from, uint32_t to) { edges_.emplace_back(from, to); }
  void edge_from_task_end(uint32_t task, uint32_t to) {
    if (out_)
      stream_edge_from_task_end(task, to);
    else
      edges_.emplace_back(kTaskRef | task, to);
  }
  void add_next_pred(uint32_t t, uint32_t ref) {
    if (out_ && (ref & kTaskRef) && tasks_[ref & ~kTaskRef].done) {
      ref = tasks_[ref & ~kTaskRef].prev;  // its end, held until the next strand takes it
      if (ref == kNone) return;
      hold(ref);
    } else if (out_ && (ref & kTaskRef)) {
      dep_hold(ref & ~kTaskRef);  // not ended yet: its end, once it has, when t goes on
    } else if (out_) {
      hold(ref);
    }
    TaskExtra& x = tasks_[t].more();
    x.next_preds.push_back(ref);
  }
  // Continues task t with a new strand after its previous one.
  uint32_t continue_task(uint32_t t, uint32_t thread, uint64_t time) {
    uint32_t prev = close_strand(t);
    uint32_t s = open_strand(t, thread, time);
    edge(prev, s);
    return s;
  }

  uint32_t phase_node(Region& r, uint32_t region_index, uint32_t k) {
    while (r.phases.size() <= k) {
      uint32_t n = new_node(NodeKind::Phase, r.node);
      nodes_[n].region = region_index;
      r.phases.push_back(n);
    }
    return r.phases[k];
  }

  void handle(const Event& e, uint32_t thread);
  static uint64_t code_of(const Event& e);
  void load_preemptions();
  // Ticks of the thread's off-CPU intervals in [from, to); `split` gets those of each cause but
  // preemption added (builder_off_cpu.cpp).
  struct OffCpuSplit {
    uint64_t blocked = 0, faults = 0;
  };
  // (Inlined up to the common answer: the thread's next interval lies after `to`.)
  __attribute__((always_inline)) uint64_t preempted_between(uint32_t thread, uint64_t from,
                                                            uint64_t to, OffCpuSplit& split) {
    const OffCpuWindow& w = off_cpu_[thread];
    if (w.cursor < w.intervals.size()
            ? (w.intervals[w.cursor].end > from && w.intervals[w.cursor].begin >= to)
            : w.done)
      return 0;
    return preempted_between_slow(thread, from, to, split);
  }
  uint64_t preempted_between_slow(uint32_t thread, uint64_t from, uint64_t to, OffCpuSplit& split);
  void on_implicit_begin(const Event& e, uint32_t thread);
  void on_create(const Event& e, uint32_t thread);
  void on_schedule(const Event& e, uint32_t thread);
  void on_fulfill(uint32_t detached, uint32_t thread, uint64_t time, bool late);
  void on_sync_begin(const Event& e, uint32_t thread);
  void on_sync_end(const Event& e, uint32_t thread);
  void on_work_begin(const Event& e, uint32_t thread);
  void on_work_end(const Event& e, uint32_t thread);
  void on_dispatch(const Event& e, uint32_t thread);
  void on_ordered(const Event& e, uint32_t thread, bool begin);
  void on_dependences(const Event& e);
  void on_tbb_spawn(const Event& e, uint32_t thread);
  void on_tbb_wait(const Event& e, uint32_t thread);
  void on_tbb_node_body(const Event& e);
  uint32_t flow_chain_for(uint32_t body, uint32_t spawner, uint32_t scope, uint64_t group,
                          uint64_t address, uint64_t limit);
  void place_flow_chains(uint64_t group, uint32_t waiting_scope);
  void place_open_flow_chains();
  void on_tbb_pipeline(const Event& e);
  void on_tbb_filter(const Event& e, uint32_t thread);
  uint32_t common_scope(uint32_t a, uint32_t b) const;
  void on_chunk(const Event& e, uint32_t thread);
  void on_user_thread(const Event& e, uint32_t thread);
  // Per trace thread: the task of the program's own thread running there (kNone: none). Its
  // OpenMP initial task, when it enters OpenMP, is that task (builder_threads.cpp).
  std::vector<uint32_t> thread_task_;
  void join_chunks(uint32_t t);
  // Tasks that began and whose end the trace lacks (builder_unended.cpp): each wait that joins
  // one notes when it ended; finalize closes them there, or at the recording's end (OpenAtEnd)
  // or their thread's last event, and says how many were closed each way.
  void note_join(uint32_t t, uint64_t time) {
    TaskState& ts = tasks_[t];
    if (ts.started && !ts.done && ts.origin != kOriginOther && ts.peek().joined_at == ~0ull)
      ts.more().joined_at = time;
  }
  void close_unended(const std::vector<uint32_t>& join_target);
  void extend_strand(uint32_t strand, uint32_t thread, uint64_t from, uint64_t to);
  void note_unended(Model& m) const;
  uint32_t find_task(uint64_t id) const;  // kNone: the trace never named it
  std::vector<uint64_t> last_time_;       // per thread: its last event's time
  struct Unended {
    uint64_t joined[3] = {};  // by TaskOrigin: closed at the wait that joined them
    uint64_t at_end[3] = {};  // at the recording's end, their threads inside them (OpenAtEnd)
    uint64_t lost[3] = {};    // at their threads' last events: what came after is lost
  } unended_;
  uint32_t outside_task(uint32_t thread, uint64_t time);
  std::vector<uint32_t> outside_tasks_;  // per thread (see outside_task)
  Model finalize();
  // What finalize() says of the run beside the DAG (the sites, the metric, what was taken out of
  // the work, the warnings), in two parts around what needs the strands; shared with the
  // streaming mode.
  void describe_run(Model& m);
  void describe_anomalies(Model& m, uint64_t backward, uint64_t backward_fulfill);
  // Model::preempted_in_run and threads_time, from the first strand's start and the last one's
  // end.
  void preemption_in_run(Model& m, uint64_t first, uint64_t last) const;

  // ---- The streaming mode (builder_stream.cpp, its end builder_stream_finish.cpp; loops and
  // taskloops builder_stream_loops.cpp, the tasks builder_stream_tasks.cpp). Strands, nodes and
  // tasks live in slots that are reused once retired, so that the memory follows what is live, not
  // the run:
  //  * a strand is handed to out_ once sealed (closed, or used as a predecessor: a barrier's join)
  //    and its predecessors were; it is retired once handed and no reference to it is left
  //    (hold/drop: a task's previous strand, a child's creator, a region's fork, an edge or a
  //    fold not made yet, a join's owner);
  //  * a node is retired once closed (its construct ended) and its strands and child nodes were;
  //    its instance is then closed;
  //  * a task is retired once ended and its children were (they name it as their parent).
  // What a taskwait, a taskgroup or a barrier waits for is folded into a join as each task ends
  // (StrandSink::open_join), so that no strand holds a predecessor per task. A task's end goes to
  // its parent's join (the next taskwait) and to its innermost taskgroup's or phase's (where it
  // joins if no taskwait of its parent does): the second is redundant when the first joins it,
  // and adds nothing to any path.
  // Its state per strand, node, task and loop: builder_stream_state.hpp.
  std::unordered_map<uint32_t, StreamLoop> stream_loops_;          // by instance id
  std::unordered_map<uint32_t, StreamTaskloop> stream_taskloops_;  // by Taskloop node slot
  void stream_taskloop_task(uint32_t taskloop, uint32_t node);
  void stream_taskloop_dispatch(uint32_t node, uint64_t iterations, uint64_t start);
  void stream_taskloop_closed(uint32_t node);
  void stream_taskloop_resolve(uint32_t taskloop);
  void stream_piece(uint32_t node, uint32_t instance, uint64_t iterations, uint64_t start,
                    Piece piece);
  void stream_share_ended(uint32_t loop_node);
  void stream_loop_ended(uint32_t instance, StreamLoop& loop);
  void release_deferred(uint32_t node, bool alone);
  bool alone(uint32_t node) const {
    return sn_[node].strands_made == 1 && sn_[node].children_made == 0;
  }
  // A partly seen static loop's first chunks (each thread's, in the order of their first
  // iterations: its rank): each becomes the thread's whole share of the trip count.
  static void shares_of_first_chunks(const std::vector<uint64_t*>& firsts, uint64_t trip);
  uint32_t stream_new_task(uint64_t id);
  std::vector<IdPages> id_pages_;
  static constexpr size_t kIdCaches = 8;
  IdCache id_cache_[kIdCaches];
  void uncache_id_page(uint64_t thread, uint64_t page) {
    IdCache& c = id_cache_[thread % kIdCaches];
    if (c.key == ((thread << 40) | (page * kIdPage)) / kIdPage) c = IdCache{};
  }
  uint32_t& stream_slot(uint64_t thread, uint64_t counter);
  void stream_forget_id(uint64_t id);
  uint32_t stream_new_node(NodeKind kind, uint32_t parent);
  uint32_t stream_strand_slot(bool join);
  uint32_t stream_add_strand(const PStrand& p);
  void stream_closed(uint32_t old_prev, uint32_t closed);
  void stream_edge(uint32_t from, uint32_t to);
  void stream_edge_from_task_end(uint32_t task, uint32_t to);
  void hold(uint32_t s) {
    if (out_ && s != kNone) ++ss_[s].refs;
  }
  void drop(uint32_t s) {
    if (out_ && s != kNone && --ss_[s].refs == 0 && ss_[s].state == StreamStrand::Handed)
      stream_retire_strand(s);
  }
  void seal(uint32_t s);
  uint32_t stream_join();
  void fold_into(uint32_t join, uint32_t s);
  uint32_t node_join(uint32_t node);  // the join of a taskgroup or phase node, made if need be
  void stream_hand_over(uint32_t s);
  // Is strand s handed over, or join s with every strand folded into it (and, a join of a
  // task's children, every child ended: LateChild), so that what comes
  // after it can take it as a predecessor?
  bool complete(uint32_t s) const {
    const StreamStrand& x = ss_[s];
    return x.state == StreamStrand::Handed && !(x.join && (x.folds_pending > 0 || x.undone > 0));
  }
  void stream_retire_strand(uint32_t s);
  void close_node(uint32_t n);
  void node_item_done(uint32_t n);
  uint32_t stream_chain(uint32_t n);
  void stream_task_ended(uint32_t t);
  void stream_barrier_join(uint32_t phase, uint32_t join_strand);
  void stream_region_ended(Region& r, uint32_t post_strand);
  void stream_implicit_ended(uint32_t t);
  void stream_taskwait_ended(uint32_t t, uint32_t strand, uint64_t time);
  // The children of `join` not ended when their wait ended (`time`) become late children
  // (stream_settle_late_children); `joined_in_scope`: the wait joins them where they are.
  void stream_late_children(uint32_t join, uint64_t time, bool joined_in_scope);
  void stream_unended(uint32_t t, uint64_t to, uint64_t* count);
  std::vector<LateChild> late_children_;
  uint64_t stream_events_ = 0;
  void stream_settle_late_children();
  void stream_leave_join(uint32_t child);
  void maybe_retire_task(uint32_t t);
  void dep_hold(uint32_t t) {
    if (out_) ++st_[t].dep_refs;
  }
  void dep_drop(uint32_t t) {
    if (out_ && --st_[t].dep_refs == 0) maybe_retire_task(t);
  }
  // Lets go of the tasks t's children's dependences name (t makes no more children, or a
  // taskwait of t has joined them all).
  void release_deps(uint32_t t);
  void stream_flush();
  // stream_flush after every event that brought something (flush_wanted_) while few strands
  // and folds wait; when many do (a one-thread taskloop's tasks wait for its end, and a flush
  // scans every one), once every pending / 4 events: the scans then cost a few steps per
  // event, not O(pending), and at most a quarter more waits. Only when the hand-overs happen
  // changes, not what is handed over.
  void stream_maybe_flush() {
    if (!flush_wanted_) return;
    const size_t pending = sealed_.size() + folds_.size();
    if (pending > kFlushAlways && ++events_since_flush_ * 4 < pending) return;
    events_since_flush_ = 0;
    stream_flush();
  }
  static constexpr size_t kFlushAlways = 4096;
  size_t events_since_flush_ = 0;
  // Something a flush may hand over or fold has come since the last flush: a strand sealed or
  // released, a fold, a join's child ended. Without one a flush would find nothing ready (the
  // last one ran to a fixed point), so the events that bring none skip it.
  bool flush_wanted_ = false;
  void stream_check(const Event& e);
  [[noreturn]] void stream_unsupported(const char* what);
  Model finish_stream();
  std::vector<StreamStrand> ss_;
  std::vector<uint32_t> free_strand_slots_;
  std::vector<StreamNode> sn_;
  std::vector<uint32_t> free_node_slots_;
  std::vector<StreamChain> chains_;
  std::vector<uint32_t> free_chains_;
  std::vector<StreamTask> st_;
  std::vector<uint32_t> free_task_slots_;
  std::vector<uint32_t> sealed_;                      // to hand over, in the order sealed
  std::vector<uint32_t> release_scratch_;             // release_deps' list, kept between calls
  std::vector<std::pair<uint32_t, uint32_t>> folds_;  // (join, strand) once the strand is handed
  std::vector<StrandSink::Strand> scratch_preds_;
  std::vector<uint32_t> chain_path_;  // stream_chain's nodes without a chain yet
  // The first start of a strand that ran (its end is not 0); the last end is one_pass_.last_end.
  uint64_t stream_first_ = ~uint64_t{0};
  uint64_t stream_strands_made_ = 0;  // strands made so far: the next one's Model::strand_order
  // The sink wants tasks (StrandSink::task), and per thread the latest end of the timed strands
  // it ran so far (kNoTime: none yet), for the idle time before a task's first strand.
  bool stream_tasks_ = false;
  bool stream_task_starts_ = false;   // the sink wants_task_starts()
  bool stream_times_ = false;         // the sink wants_times()
  bool stream_task_keys_ = false;     // the sink wants_task_keys()
  uint64_t stream_task_serials_ = 0;  // task keys given so far
  bool stream_regions_ = false;       // the sink wants_regions()
  bool stream_nodes_ = false;         // the sink wants_nodes()
  uint64_t stream_node_keys_ = 0;     // node keys given so far
  // The user regions met in strands handed over: one past the largest id (Model::region_names
  // has that many, as in memory).
  uint32_t stream_region_count_ = 0;
  // Per thread, for idle times (task_samples): the latest end of its strands closed so far, and
  // its strands open now (their order: Model::strand_order, unique).
  std::vector<uint64_t> stream_busy_;
  std::vector<std::vector<uint64_t>> stream_open_;
  std::vector<IdleWait> idle_waits_;
  std::vector<uint32_t> free_idle_waits_;
  std::vector<std::vector<IdleGroup>> idle_groups_;  // per thread
  void stream_idle_begin(uint32_t owner, const PStrand& first);
  void stream_idle_strand_closed(const PStrand& p, uint64_t order);
  void stream_idle_group_done(const IdleGroup& g);
  void stream_task_strand(uint32_t s);   // a strand of a task, handed over
  void stream_task_done(uint32_t node);  // a task's or chunk's node, retired
  Model::OnePass one_pass_;              // what the model read in one pass says instead of its DAG
  // Fragments numbered as strands are handed over (finalize numbers them in memory): the
  // model's fragments, and the (begin, end) code pair of each.
  uint32_t stream_fragment(uint32_t begin_code, uint32_t end_code, uint32_t site);
  std::vector<Fragment> stream_fragments_;
  std::unordered_map<uint64_t, uint32_t> stream_fragment_ids_;
  // The pairs met lately (direct-mapped by the pair): a program's strands take a few pairs
  // over and over, and a hash map's lookup for each is dearer than this slot's test.
  struct FragmentSlot {
    uint64_t pair = ~uint64_t{0};  // (no pair of two code ids is all ones)
    uint32_t id = 0;
  };
  static constexpr size_t kFragmentCache = 64;
  FragmentSlot fragment_cache_[kFragmentCache];
  uint64_t stream_late_ = 0;  // edges or folds into a strand already handed over (dropped)

  const trace::TraceFile& trace_;
  const BuildOptions options_;
  StrandSink* const out_;  // the streaming mode's sink; null: the model is built in memory
  std::vector<std::vector<uint32_t>> ids_;
  std::unordered_map<uint64_t, uint32_t> region_ids_;
  static constexpr uint64_t kMaxIdThreads = uint64_t{1} << 16;
  uint64_t id_limit_ = 0;      // the largest counter the trace could hold (run())
  size_t ids_per_thread_ = 0;  // what each thread's id table reserves (run())
  std::vector<TaskState> tasks_;
  std::vector<Region> regions_;
  std::vector<PNode> nodes_;
  std::vector<PStrand> strands_;
  std::vector<std::pair<uint32_t, uint32_t>> items_;  // (node, item) in append order
  std::vector<uint32_t> fulfill_joins_;  // on_fulfill's strands, in creation order (sorted)
  std::vector<std::pair<uint32_t, uint32_t>> edges_;  // (source or kTaskRef | task, target)
  std::vector<Site> sites_;
  std::unordered_map<uint64_t, uint32_t> site_ids_;
  std::unordered_map<uint64_t, uint32_t> ws_instances_;  // (region, ws_seq) -> instance
  // Per loop instance: its trip count and the iterations its dispatch events covered. libomp
  // reports only each thread's first chunk of a static schedule with a chunk size.
  struct LoopCoverage {
    uint64_t trip = 0, dispatched = 0;
  };
  std::unordered_map<uint32_t, LoopCoverage> loop_coverage_;
  // Loop pieces with their iteration counts, in the order seen: at the end those holding exactly
  // one strand become Model::divisible (their iterations were not seen one by one). Chunks are
  // kept when they hold 2 or more iterations, and each thread's first chunk of a loop (a static
  // schedule with a chunk size reports only that one: its share is worked out from the loop's
  // trip count at the end), so a schedule(dynamic, 1) loop adds one entry per thread, not one
  // per iteration.
  struct ChunkIterations {
    uint32_t node = kNone;      // the Chunk, Loop, Task or Taskloop node
    uint32_t instance = kNone;  // the loop instance (kNone: taskloops)
    uint64_t iterations = 0;
    uint64_t start = 0;  // the chunk's first iteration (to rank the threads' first chunks)
    Piece piece = Piece::Chunk;
  };
  std::vector<ChunkIterations> chunk_iterations_;
  // Per loop instance with `ordered` (on_ordered): the node of its ordered parts, the phase it
  // is in, and the part (strand) that got its turn last.
  struct OrderedChain {
    uint32_t node = kNone, phase = kNone, last = kNone;
  };
  std::unordered_map<uint32_t, OrderedChain> last_ordered_;
  void find_divisible(Model& m, const std::vector<uint32_t>& node_id);
  uint32_t instance_count_ = 0;
  // User regions open in a task (rare: a hash map keeps TaskState small), and the work split
  // off strands into them: (provisional strand, region, work).
  struct OpenRegion {
    uint32_t region = 0;  // the outermost open region's name id
    uint32_t depth = 0;
    uint32_t entry = kNone;  // last region_work_ entry of this task
  };
  std::unordered_map<uint32_t, OpenRegion> open_regions_;
  std::vector<RegionWork> region_work_;
  uint64_t region_unmatched_ = 0;  // ends without a begin in the same task, or wrong name
  uint64_t region_unclosed_ = 0;   // tasks that ended with a region open
  void on_region(const Event& e, uint32_t thread);
  void end_task_regions(uint32_t t) {
    if (!open_regions_.empty() && open_regions_.erase(t)) ++region_unclosed_;
  }
  // The code address of the event being handled (0 if it has none): strands opened or closed
  // by it start or end there.
  uint64_t cur_code_ = 0;
  uint64_t site_code_ = 0;          // the address the last site() looked up (keep_site_code)
  std::vector<uint64_t> codes_{0};  // code id -> address; id 0 is "unknown"
  std::unordered_map<uint64_t, uint32_t> code_ids_;
  struct CodeSlot {
    uint64_t address = 0;
    uint32_t id = 0;
  };
  static constexpr size_t kCodeCache = 256;
  CodeSlot code_cache_[kCodeCache];
  std::vector<std::pair<uint64_t, uint64_t>> runtime_ranges_;
  // oneTBB: per task_group_context address, the tasks spawned into it since its last wait.
  std::unordered_map<uint64_t, std::vector<uint32_t>> tbb_groups_;
  // oneTBB: the group each task was spawned into (0: none), by task index; grown only by oneTBB
  // spawns (a bypassed task takes its spawner's).
  std::vector<uint64_t> tbb_group_of_;
  // Per group: the algorithm call whose tasks are being spawned into it (until its wait ends).
  struct TbbCall {
    uint32_t parent = kNone;
    uint8_t kind = 0;
    uint32_t instance = kNone;
    uint64_t parent_id = 0;  // one pass: the parent's id (its slot may be another task's later)
  };
  std::unordered_map<uint64_t, TbbCall> tbb_calls_;
  // One pass (builder_tbb.cpp): per group, the join of the tasks spawned into it since its last
  // wait; per instance of an algorithm call whose tasks are siblings, its instance in the sink
  // and what holds it (the call until its wait, and each of its nodes).
  std::unordered_map<uint64_t, uint32_t> stream_tbb_joins_;
  std::unordered_map<uint32_t, StreamTbbCall> stream_tbb_calls_;
  void stream_tbb_spawned(uint32_t parent, uint32_t child, uint64_t group);
  void stream_tbb_wait_ended(uint64_t group, uint32_t strand, uint64_t time);
  void stream_tbb_call_node(uint32_t node);
  void stream_tbb_call_over(const TbbCall& call);
  void stream_tbb_call_done(uint32_t instance);
  void stream_tbb_finish();
  // oneTBB flow graphs: a node of limited concurrency (TbbNodeBody) runs at most `limit` bodies
  // at once, and oneTBB need not spawn a body from the one before it. Its bodies go into a
  // chain node of their own (structural, with the site and instance of the graph's tasks) in
  // which each takes a slot and starts after the body that held that slot last. Where their
  // group's wait ends, the chain is placed among the tasks that put the messages, just before
  // the wait (builder_tbb.cpp).
  static constexpr uint64_t kMaxFlowSlots = 1024;  // a larger limit is taken as unlimited
  struct FlowNode {
    uint64_t group = 0;
    uint32_t chain = kNone;       // its bodies since their group's last wait
    std::vector<uint32_t> slots;  // per slot: the body (task) that took it last
    std::vector<uint64_t> taken;  // when (flow_turns_)
  };
  std::unordered_map<uint64_t, FlowNode> flow_nodes_;  // by the node's address
  // Per group: the chains not placed yet, in the order they were made.
  std::unordered_map<uint64_t, std::vector<std::pair<uint64_t, uint32_t>>> flow_chains_;
  // A body announced by TbbNodeBody, until its spawn: task -> (node address, limit).
  std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> flow_bodies_;
  uint64_t flow_turns_ = 0;
  // oneTBB parallel_pipeline calls (TbbPipeline) until their wait ends, by group (the pipeline's
  // task_group_context): the node of the pipeline's root task, which holds the pipeline's other
  // tasks in the order they were spawned, and per serial filter (its address) the strand that
  // ended its last run (builder_tbb.cpp).
  struct Pipeline {
    uint32_t root = kNone;
    std::vector<std::pair<uint64_t, uint32_t>> filters;
  };
  std::unordered_map<uint64_t, Pipeline> pipelines_;
  std::vector<uint32_t> current_;    // per thread: the task it runs (kNone: none)
  std::vector<uint8_t> mutex_wait_;  // per thread: waiting for a critical section or lock
  std::vector<uint64_t> last_metric_;
  // Further metrics (the file's metrics after the primary one, `record --metric a,b,c`): their
  // count, each provisional strand's amounts (extra_work_[s * extra_count_ + m]: one strand's
  // together), each thread's last counter values (likewise), and which metric is the TSC (-1:
  // none; 0: the primary), the one preemptions are taken out of.
  uint32_t extra_count_ = 0;
  std::vector<uint64_t> extra_work_;
  std::vector<uint64_t> last_extra_;
  int tsc_metric_ = -1;
  void add_extra_work(uint32_t strand, const uint64_t* delta) {
    size_t at = size_t(strand) * extra_count_;
    if (extra_work_.size() < at + extra_count_) extra_work_.resize(strands_.size() * extra_count_);
    for (uint32_t m = 0; m < extra_count_; ++m) extra_work_[at + m] += delta[m];
  }
  // What the builder does to a strand's work (runtime start-up is not work) it does to all,
  // and what it took out of that work (preemption, blocking, ... before main(): the program's
  // loading) is no longer taken out of any strand either.
  void clear_work(uint32_t strand) {
    strands_[strand].work = 0;
    size_t at = size_t(strand) * extra_count_;
    for (uint32_t m = 0; m < extra_count_ && at + m < extra_work_.size(); ++m)
      extra_work_[at + m] = 0;
    if (strand != start_up_strand_) return;
    const RemovedTotals now = removed_totals();
    set_removed_totals(now - start_up_removed_);
    start_up_removed_ = {};
    if (out_) ss_[strand].blocked = 0;
    std::erase_if(blocked_work_, [strand](const StrandBlocked& b) { return b.strand == strand; });
  }
  // What was taken out of strands' work, by cause (the model's totals).
  struct RemovedTotals {
    uint64_t stalled = 0, blocked = 0, faults = 0, preempted = 0, probe = 0, waited = 0,
             runtime = 0;
    RemovedTotals operator-(const RemovedTotals& o) const {
      return {stalled - o.stalled, blocked - o.blocked, faults - o.faults,  preempted - o.preempted,
              probe - o.probe,     waited - o.waited,   runtime - o.runtime};
    }
    RemovedTotals& operator+=(const RemovedTotals& o) {
      stalled += o.stalled, blocked += o.blocked, faults += o.faults, preempted += o.preempted;
      probe += o.probe, waited += o.waited, runtime += o.runtime;
      return *this;
    }
  };
  RemovedTotals removed_totals() const {
    return {stalled_total_, blocked_total_, faults_total_, preempted_total_,
            probe_total_,   waited_total_,  runtime_total_};
  }
  void set_removed_totals(const RemovedTotals& t) {
    stalled_total_ = t.stalled, blocked_total_ = t.blocked, faults_total_ = t.faults;
    preempted_total_ = t.preempted, probe_total_ = t.probe, waited_total_ = t.waited;
    runtime_total_ = t.runtime;
  }
  // The program's first strand until main() or its first parallel region (the start-up the
  // builder clears), and what was taken out of it so far.
  uint32_t start_up_strand_ = kNone;
  RemovedTotals start_up_removed_;
  // Per thread: the intervals it was off the CPU (preempted, or blocked unless that counts as
  // work) or in a slow page fault (unless kept), in TSC ticks and time order, read as events
  // reach them (events come in time order); empty when the trace has none.
  std::vector<OffCpuWindow> off_cpu_;
  bool off_cpu_causes_[3] = {};
  MonotonicToTsc monotonic_to_tsc_;
  uint64_t preempted_total_ = 0;
  uint64_t blocked_total_ = 0;
  uint64_t faults_total_ = 0;
  std::vector<StrandBlocked> blocked_work_;  // by provisional strand, in the order seen
  uint64_t stalled_total_ = 0;
  uint64_t probe_ticks_ = 0;  // the recorder's cost per event (trace::ProbeCost), TSC ticks
  uint64_t probe_total_ = 0;
  // Time inside a strand's span its thread spent waiting in the runtime (a lock, the runtime's
  // start-up: mutex_wait_): per thread, what is pending until the strand goes on (then it lies
  // inside the strand's span and goes to waited_total_) and which strand it is pending in.
  std::vector<uint64_t> wait_pending_;
  std::vector<uint32_t> wait_strand_;
  uint64_t waited_total_ = 0;
  // Per thread: recorder cost of its events not yet taken out (see handle()), at most
  // kProbeDebtEvents events' worth.
  std::vector<uint64_t> probe_debt_;
  static constexpr uint64_t kProbeDebtEvents = 4;
  bool probe_in_run_ = false;  // probe_ticks_ was measured during the run (not at start-up)
  // The runtime's own cost per kind of interval (runtime_cost_table.hpp), when taken out or
  // sampled (BuildOptions::interval_sink): each thread's previous event key and the table.
  // builder_runtime_cost.cpp says how much is taken out.
  bool track_keys_ = false;
  std::vector<uint16_t> last_key_;
  RuntimeCostTable runtime_costs_;
  uint64_t runtime_total_ = 0;
  void load_runtime_cost();
  uint64_t last_before_ = 0;
  uint32_t root_task_ = kNone;
  uint64_t root_start_ = 0;
  uint64_t explicit_tasks_ = 0;
  uint64_t anomalies_ = 0;
  uint64_t serialized_undeferred_ = 0;
  uint64_t other_initial_tasks_ = 0;  // initial tasks of threads other than the first
  bool first_parallel_ = true;
  bool main_marked_ = false;
  bool saw_openmp_ = false;
  bool saw_constructs_ = false;  // a parallel region or a task (not just the initial task)
};

}  // namespace tasklens::model::detail
