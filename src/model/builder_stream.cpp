// The builder's streaming mode (build_streaming): the same events, the same strands, their work
// and their edges, handed to a StrandSink as they become final instead of kept (see
// builder_state.hpp, "The streaming mode", and docs/design-scale.md, step 1b).
#include <algorithm>

#include "model/builder_state.hpp"
#include "model/slots.hpp"

namespace tasklens::model::detail {

// What the streaming mode cannot read yet: refused at the first such event.
void Builder::stream_check(const Event& e) {
  switch (e.kind) {
    case EventKind::TbbNodeBody:
      stream_unsupported("oneTBB flow graph nodes of limited concurrency");
    case EventKind::TbbPipeline:
    case EventKind::TbbFilterBegin:
    case EventKind::TbbFilterEnd:
      stream_unsupported("oneTBB parallel_pipeline calls");
    default:
      break;
  }
}

void Builder::stream_unsupported(const char* what) {
  throw NotInOnePass(trace_.path() + ": the recording has " + what +
                         ", which tasklens cannot read in one pass yet (it reads OpenMP tasks "
                         "with or without depend, taskwait, taskgroup, taskloops, parallel "
                         "regions, barriers, worksharing loops, sections, single and masked, "
                         "oneTBB's tasks, task groups and algorithms, user regions and the "
                         "program's own threads that way); "
                         "read it without --stream on a machine with the memory for its DAG",
                     what);
}

uint32_t Builder::stream_new_task(uint64_t id) {
  const uint32_t t = take_slot(st_, free_task_slots_);
  if (t == tasks_.size())
    tasks_.emplace_back();
  else
    tasks_[t] = TaskState{};
  st_[t] = StreamTask{};
  st_[t].id = id;
  st_[t].live = true;
  if (t < tbb_group_of_.size()) tbb_group_of_[t] = 0;  // (a oneTBB task's before)
  ++id_pages_[id >> 40].pages[(id & ((uint64_t{1} << 40) - 1)) / kIdPage]->live;
  return t;
}

uint32_t& Builder::stream_slot(uint64_t thread, uint64_t counter) {
  if (thread >= id_pages_.size()) id_pages_.resize(thread + 1);
  IdPages& ids = id_pages_[thread];
  const uint64_t page = counter / kIdPage;
  if (page >= ids.pages.size()) ids.pages.resize(page + 1);
  if (!ids.pages[page]) {
    ids.pages[page] = std::make_unique<IdPage>();
    std::fill(std::begin(ids.pages[page]->task), std::end(ids.pages[page]->task), kNone);
  }
  if (page > ids.top) {  // the thread's ids went past its last page: free it if nothing is left
    std::unique_ptr<IdPage>& last = ids.pages[ids.top];
    if (last && last->live == 0) {
      uncache_id_page(thread, ids.top);
      last.reset();
    }
    ids.top = page;
  }
  id_cache_[thread % kIdCaches] =
      IdCache{(thread << 40 | counter) / kIdPage, ids.pages[page].get()};
  return ids.pages[page]->task[counter % kIdPage];
}

void Builder::stream_forget_id(uint64_t id) {
  const uint64_t thread = id >> 40, counter = id & ((uint64_t{1} << 40) - 1);
  IdPages& ids = id_pages_[thread];
  std::unique_ptr<IdPage>& page = ids.pages[counter / kIdPage];
  page->task[counter % kIdPage] = kNone;
  // (The page being filled stays: the thread's next ids are in it.)
  if (--page->live == 0 && counter / kIdPage < ids.top) {
    uncache_id_page(thread, counter / kIdPage);
    page.reset();
  }
}

uint32_t Builder::stream_new_node(NodeKind kind, uint32_t parent) {
  // A construct inside one that has ended and was retired (a damaged trace: its slot may be
  // another node's now, even this one's): under the program's node instead.
  if (parent != kNone && !sn_[parent].live) {
    ++anomalies_;
    parent = 0;
  }
  const uint32_t n = take_slot(sn_, free_node_slots_);
  if (n == nodes_.size())
    nodes_.push_back(PNode{kind, parent});
  else
    nodes_[n] = PNode{kind, parent};
  sn_[n] = StreamNode{};
  sn_[n].pending = 1;  // itself, until its construct ends (close_node)
  sn_[n].live = true;
  if (stream_tasks_) {  // its innermost task or loop chunk (analysis/tasks.cpp's task_owners)
    const bool chunk =
        kind == NodeKind::Chunk && parent != kNone && nodes_[parent].kind == NodeKind::Loop;
    sn_[n].owner = kind == NodeKind::Task || chunk ? n
                   : parent == kNone               ? kNone
                                                   : sn_[parent].owner;
  }
  if (stream_task_keys_)
    sn_[n].sim_task = kind == NodeKind::Task || kind == NodeKind::ImplicitTask ||
                              kind == NodeKind::Chunk || kind == NodeKind::Program ||
                              parent == kNone
                          ? stream_task_serials_++
                          : sn_[parent].sim_task;
  if (parent != kNone) {
    PNode& p = nodes_[parent];
    ++p.item_count;
    p.last_item = n | kNodeBit;
    ++sn_[parent].pending;
    ++sn_[parent].children_made;  // (a loop piece with a construct inside is seen in parts)
    if (sn_[parent].deferred != kNone) release_deferred(parent, false);
    const bool joins = p.kind == NodeKind::Taskgroup || p.kind == NodeKind::Phase;
    sn_[n].join_node = joins ? parent : sn_[parent].join_node;
  }
  return n;
}

// A strand slot for a new strand or join, its state as new (its list of predecessors keeps the
// capacity it had).
uint32_t Builder::stream_strand_slot(bool join) {
  const uint32_t s = take_slot(ss_, free_strand_slots_);
  if (s == strands_.size()) strands_.emplace_back();
  StreamStrand& x = ss_[s];
  x.refs = 0;
  x.state = join ? StreamStrand::Handed : StreamStrand::Open;
  x.join = join;
  x.folds_pending = 0;
  x.blocked = 0;
  x.deferred = false;
  x.iterations = 1;
  x.eff_end = 0;
  x.first_of_task = false;
  x.task_start = false;
  x.pred_count = 0;
  x.more_preds.clear();
  x.regions.clear();
  return s;
}

uint32_t Builder::stream_add_strand(const PStrand& strand) {
  PStrand p = strand;
  if (!sn_[p.node].live) {  // (a damaged trace, as in stream_new_node)
    ++anomalies_;
    p.node = 0;
  }
  const uint32_t s = stream_strand_slot(false);
  strands_[s] = p;
  ss_[s].order = stream_strands_made_++;  // as a strand's provisional id in memory
  StreamNode& v = sn_[p.node];
  ++v.pending;
  ++v.strands_made;
  // The first strand made in a task's node is the one its begin opened (in memory, the node's
  // strand_begin).
  ss_[s].task_start =
      stream_task_starts_ && v.strands_made == 1 && nodes_[p.node].kind == NodeKind::Task;
  if (stream_tasks_ && v.owner != kNone && !sn_[v.owner].ran) {
    // Its task's first strand: the time its thread was idle before it (task_samples).
    StreamNode& task = sn_[v.owner];
    task.ran = true;
    ss_[s].first_of_task = true;
    if (p.thread < stream_busy_.size() && p.start != 0) {
      const uint64_t busy = stream_busy_[p.thread];
      if (!stream_open_[p.thread].empty())
        stream_idle_begin(v.owner, p);  // strands of its thread still open: their ends to come
      else if (busy != StrandSink::kNoTime)
        task.idle = p.start > busy ? p.start - busy : 0;
    }
  }
  if (v.deferred != kNone) release_deferred(p.node, false);  // a piece seen in parts
  return s;
}

uint32_t Builder::stream_join() {
  const uint32_t j = stream_strand_slot(true);
  ss_[j].out = out_->open_join();
  return j;
}

void Builder::seal(uint32_t s) {
  if (ss_[s].state != StreamStrand::Open) return;
  ss_[s].state = StreamStrand::Sealed;
  // A loop piece's only strand so far: held back until it is known to stay the only one and
  // how many iterations it stands for. It joins the strands to hand over once released: a
  // one-thread taskloop holds all its tasks' strands, which every flush would scan again.
  const uint32_t n = strands_[s].node;
  StreamNode& v = sn_[n];
  if (v.piece != StreamNode::NoPiece && alone(n)) {
    if (v.closed && v.piece == StreamNode::Known) {
      ss_[s].iterations = std::max<uint64_t>(v.iterations, 1);
    } else {
      v.deferred = s;
      ss_[s].deferred = true;
      return;
    }
  }
  sealed_.push_back(s);
  flush_wanted_ = true;
}

void Builder::release_deferred(uint32_t node, bool alone_in_it) {
  const uint32_t s = sn_[node].deferred;
  if (s == kNone) return;
  sn_[node].deferred = kNone;
  ss_[s].deferred = false;
  ss_[s].iterations = alone_in_it ? std::max<uint64_t>(sn_[node].iterations, 1) : 1;
  sealed_.push_back(s);  // (sealed, held back until now)
  flush_wanted_ = true;
}

void Builder::stream_closed(uint32_t old_prev, uint32_t closed) {
  if (stream_tasks_) {
    const PStrand& p = strands_[closed];
    if (p.thread < stream_busy_.size() && (p.start != 0 || p.end != 0))
      stream_busy_[p.thread] = stream_busy_[p.thread] == StrandSink::kNoTime
                                   ? p.end
                                   : std::max(stream_busy_[p.thread], p.end);
  }
  hold(closed);
  drop(old_prev);
  seal(closed);
}

void Builder::stream_edge(uint32_t from, uint32_t to) {
  if (from == to) return;
  StreamStrand& t = ss_[to];
  if (t.join) {  // folded once `from` is handed over (stream_flush)
    hold(from);
    hold(to);
    folds_.emplace_back(to, from);
    ++t.folds_pending;
    flush_wanted_ = true;
    return;
  }
  if (t.state == StreamStrand::Handed) {  // it cannot take a predecessor any more
    ++stream_late_;
    return;
  }
  hold(from);
  if (t.pred_count < std::size(t.preds))
    t.preds[t.pred_count] = from;
  else
    t.more_preds.push_back(from);
  ++t.pred_count;
}

void Builder::stream_edge_from_task_end(uint32_t task, uint32_t to) {
  const TaskState& ts = tasks_[task];
  if (ts.done && ts.prev != kNone)
    edge(ts.prev, to);
  else
    ++stream_late_;  // its end was not recorded before the wait
}

uint32_t Builder::node_join(uint32_t n) {
  if (sn_[n].join != kNone) return sn_[n].join;
  const uint32_t j = stream_join();
  sn_[n].join = j;
  hold(j);
  // A phase whose barrier's join strand exists already: the tasks ending in it join there too.
  if (nodes_[n].kind == NodeKind::Phase && nodes_[n].join_strand != kNone)
    edge(j, nodes_[n].join_strand);
  return j;
}

uint32_t Builder::stream_chain(uint32_t n) {
  if (sn_[n].chain != kNone) return sn_[n].chain;
  // The nodes up to the nearest one with its chain, then down from there (no recursion: a deep
  // tree of tasks would be a deep stack).
  std::vector<uint32_t>& path = chain_path_;  // (a member: one allocation, not one per node)
  path.clear();
  for (uint32_t v = n; v != kNone && sn_[v].chain == kNone; v = nodes_[v].parent) path.push_back(v);
  for (size_t i = path.size(); i-- > 0;) {
    const uint32_t v = path[i];
    const PNode& node = nodes_[v];
    const uint32_t parent_chain = node.parent == kNone ? kNone : sn_[node.parent].chain;
    const uint32_t outer = node.parent == kNone ? 0 : sn_[node.parent].site;
    // A construct in a library's code counts for the one around it, in its instance (the DAG's
    // reading does so after the build: report::attribute_library_sites).
    const bool folded =
        node.site != kNone && options_.folds_into_enclosing &&
        options_.folds_into_enclosing(
            node.site, outer < sites_.size() && sites_[outer].kind == SiteKind::Program);
    sn_[v].site = node.site != kNone && !folded ? node.site : outer;
    uint32_t chain = parent_chain;
    if (node.site != kNone && !sn_[v].inherits_instance && !folded) {
      StrandSink::Instance instance;
      if (sn_[v].tbb_call) {  // one instance for the tasks of a oneTBB algorithm's call
        StreamTbbCall& call = stream_tbb_calls_[node.instance];
        if (!call.opened) {
          call.instance = out_->open_instance(node.site);
          call.opened = true;
        }
        instance = call.instance;
      } else if (sn_[v].shared_instance) {  // one instance for the team's shares of a loop
        StreamLoop& loop = stream_loops_[node.instance];
        if (!loop.opened) {
          loop.instance = out_->open_instance(node.site);
          loop.opened = true;
        }
        instance = loop.instance;
      } else {
        instance = out_->open_instance(node.site);
        sn_[v].instance = instance;
        sn_[v].has_instance = true;
      }
      const bool nested =
          parent_chain != kNone &&
          std::find(chains_[parent_chain].sites.begin(), chains_[parent_chain].sites.end(),
                    node.site) != chains_[parent_chain].sites.end();
      if (nested) {
        out_->not_outermost(instance);
      } else {
        chain = take_slot(chains_, free_chains_);
        StreamChain& c = chains_[chain];
        c.sites.clear();
        c.instances.clear();
        c.refs = 0;
        if (parent_chain != kNone) {
          c.sites = chains_[parent_chain].sites;
          c.instances = chains_[parent_chain].instances;
        }
        c.sites.push_back(node.site);
        c.instances.push_back(instance);
      }
    }
    if (chain != kNone) ++chains_[chain].refs;
    sn_[v].chain = chain;
    // Every node gets its chain once, its parent's first, before a strand inside it is handed
    // over (node_item_done asks for the chain of a node without strands too): the sink is told
    // of it here.
    if (stream_nodes_ && sn_[v].key == StrandSink::kNoNode) {  // (a chain may stay kNone)
      sn_[v].key = stream_node_keys_++;
      // (report::attribute_library_sites's instance: of the nearest node around with a site.)
      sn_[v].model_instance = node.instance;
      if (folded) {
        uint32_t up = node.parent;
        while (up != kNone && nodes_[up].site == kNone) up = nodes_[up].parent;
        if (up != kNone) sn_[v].model_instance = sn_[up].model_instance;
      }
      out_->node(sn_[v].key, node.parent == kNone ? StrandSink::kNoNode : sn_[node.parent].key,
                 static_cast<uint8_t>(node.kind),
                 node.site == kNone ? StrandSink::kNoSite : sn_[v].site,  // (folded)
                 sn_[v].model_instance == kNone ? StrandSink::kNoInstance : sn_[v].model_instance);
    }
  }
  return sn_[n].chain;
}

void Builder::close_node(uint32_t n) {
  if (n == kNone || sn_[n].closed) return;
  sn_[n].closed = true;
  if (sn_[n].piece == StreamNode::Known) release_deferred(n, alone(n));
  if (sn_[n].taskloop != kNone || nodes_[n].kind == NodeKind::Taskloop) stream_taskloop_closed(n);
  node_item_done(n);
}

void Builder::node_item_done(uint32_t n) {
  while (n != kNone && --sn_[n].pending == 0) {
    stream_chain(n);  // (its instance counts even without strands)
    StreamNode& x = sn_[n];
    if (x.has_instance) out_->close_instance(x.instance);
    if (x.tbb_call) stream_tbb_call_done(nodes_[n].instance);
    if (x.shared_instance) {  // the last share of its loop closes the loop's instance
      auto it = stream_loops_.find(nodes_[n].instance);
      if (it != stream_loops_.end() && --it->second.live == 0 &&
          it->second.ended >= it->second.team) {
        if (it->second.opened) out_->close_instance(it->second.instance);
        stream_loops_.erase(it);
      }
    }
    if (x.join != kNone) {
      const uint32_t j = x.join;
      x.join = kNone;
      drop(j);
    }
    if (x.owner == n && x.ran) stream_task_done(n);
    if (x.chain != kNone && --chains_[x.chain].refs == 0) free_chains_.push_back(x.chain);
    if (stream_nodes_) out_->node_done(x.key);
    x.live = false;
    free_node_slots_.push_back(n);
    n = nodes_[n].parent;
  }
}

uint32_t Builder::stream_fragment(uint32_t begin_code, uint32_t end_code, uint32_t site) {
  if (stream_fragments_.empty()) {  // fragment 0 is the empty pair, as in memory
    stream_fragments_.push_back(Fragment{});
    stream_fragment_ids_.emplace(0, 0);
    if (options_.place_fragment) options_.place_fragment(Fragment{}, 0, site);
  }
  const uint64_t pair = uint64_t{begin_code} << 32 | end_code;
  static_assert(kFragmentCache == 64);
  FragmentSlot& cached = fragment_cache_[(pair * 0x9e3779b97f4a7c15ull) >> 58];
  if (cached.pair == pair) return cached.id;
  const auto [it, inserted] =
      stream_fragment_ids_.try_emplace(pair, static_cast<uint32_t>(stream_fragments_.size()));
  if (inserted) {
    stream_fragments_.push_back(Fragment{codes_[begin_code], codes_[end_code]});
    if (options_.place_fragment)
      options_.place_fragment(stream_fragments_.back(), it->second, site);
  }
  cached = FragmentSlot{pair, it->second};
  return it->second;
}

void Builder::stream_hand_over(uint32_t s) {
  const PStrand& p = strands_[s];
  const uint32_t chain = stream_chain(p.node);
  StreamStrand& x = ss_[s];
  scratch_preds_.clear();
  for (uint32_t k = 0; k < x.pred_count; ++k)
    scratch_preds_.push_back(ss_[k < std::size(x.preds) ? x.preds[k] : x.more_preds[k - 3]].out);
  const std::vector<StrandSink::Instance>* instances =
      chain == kNone ? nullptr : &chains_[chain].instances;
  if (x.task_start) out_->task_start();
  if (stream_times_) out_->times(p.start, p.end, p.thread);
  if (stream_task_keys_) out_->task_key(sn_[p.node].sim_task);
  if (stream_nodes_) out_->strand_node(sn_[p.node].key);
  for (const auto& [region, work] : x.regions) {
    if (work == 0) continue;
    out_->region_work(region, work);
    stream_region_count_ = std::max(stream_region_count_, region + 1);
  }
  x.out = out_->strand(p.work, p.work, sn_[p.node].site, scratch_preds_.data(),
                       static_cast<uint32_t>(scratch_preds_.size()),
                       instances ? instances->data() : nullptr,
                       instances ? static_cast<uint32_t>(instances->size()) : 0, x.iterations,
                       stream_fragment(p.begin_code, p.end_code, sn_[p.node].site), x.order);
  x.state = StreamStrand::Handed;
  ++one_pass_.strands;
  if (stream_tasks_) stream_task_strand(s);
  if (x.blocked) {
    std::vector<uint64_t>& by_site = one_pass_.blocked_by_site;
    const uint32_t site = sn_[p.node].site;
    if (by_site.size() <= site) by_site.resize(site + 1, 0);
    by_site[site] += x.blocked;
  }
  if (p.thread != kNone) {
    std::vector<uint8_t>& ran = one_pass_.threads_with_strands;
    if (ran.size() <= p.thread) ran.resize(p.thread + 1, 0);
    ran[p.thread] = 1;
  }
  if (p.end != 0) {
    stream_first_ = std::min(stream_first_, p.start);
    one_pass_.last_end = std::max(one_pass_.last_end, p.end);
  }
  if (p.start != 0 && (one_pass_.first_start == 0 || p.start < one_pass_.first_start))
    one_pass_.first_start = p.start;
  const uint32_t count = x.pred_count;
  x.pred_count = 0;
  for (uint32_t k = 0; k < count; ++k)
    drop(k < std::size(ss_[s].preds) ? ss_[s].preds[k] : ss_[s].more_preds[k - 3]);
  ss_[s].more_preds.clear();
  node_item_done(strands_[s].node);
  if (ss_[s].refs == 0) stream_retire_strand(s);
}

void Builder::stream_retire_strand(uint32_t s) {
  StreamStrand& x = ss_[s];
  out_->release(x.out);
  x.state = StreamStrand::Free;
  free_strand_slots_.push_back(s);
}

void Builder::stream_flush() {
  flush_wanted_ = false;  // (what this flush changes itself, it sees: it runs to a fixed point)
  // A pass over the folds adds none (a fold only completes strands): it reads them through a
  // pointer and a count the calls cannot move. A pass over the sealed strands may seal a
  // barrier's join, which joins them at the end: that one reads the vector itself.
  for (bool progress = true; progress && (!folds_.empty() || !sealed_.empty());) {
    progress = false;
    // Folds first: a join is complete before the strand after it is handed over.
    std::pair<uint32_t, uint32_t>* const folds = folds_.data();
    const size_t fold_count = folds_.size();
    size_t w = 0;
    for (size_t i = 0; i < fold_count; ++i) {
      const auto [join, s] = folds[i];
      if (!complete(s)) {
        folds[w++] = folds[i];
        continue;
      }
      out_->fold(ss_[join].out, ss_[s].out);
      ss_[join].eff_end = std::max(ss_[join].eff_end, ss_[s].eff_end);
      --ss_[join].folds_pending;
      progress = true;
      drop(s);
      drop(join);
    }
    folds_.resize(w);
    w = 0;
    for (size_t i = 0; i < sealed_.size(); ++i) {
      const uint32_t s = sealed_[i];
      const StreamStrand& x = ss_[s];
      bool ready = !x.deferred;
      for (uint32_t k = 0; k < x.pred_count; ++k) {
        const uint32_t q = k < std::size(x.preds) ? x.preds[k] : x.more_preds[k - 3];
        if (complete(q)) continue;
        ready = false;
        // A barrier's join strand is sealed when a strand after it is to be handed over: by
        // then every thread has arrived and every task of its phase has ended (at the same
        // time stamp, events of two threads may come in either order).
        if (ss_[q].state == StreamStrand::Open && strands_[q].thread == kNone) {
          seal(q);
          progress = true;
        }
      }
      if (!ready) {
        sealed_[w++] = s;
        continue;
      }
      stream_hand_over(s);
      progress = true;
    }
    sealed_.resize(w);
  }
}

void Builder::release_deps(uint32_t t) {
  TaskExtra* x = tasks_[t].extra;
  if (!x || !x->deps || x->deps->empty()) return;
  // (A scratch vector kept between calls: a drop below may retire a task and come back here,
  // which then finds the member empty and makes its own.)
  std::vector<uint32_t> named = std::move(release_scratch_);
  named.clear();
  x->deps->for_each([&named](uint64_t, const DepEntry& d) {
    if (d.last_out != kNone) named.push_back(d.last_out);
    named.insert(named.end(), d.readers.begin(), d.readers.end());
  });
  x->deps->clear();
  for (uint32_t c : named) dep_drop(c);  // (may retire t: nothing of it is read after)
  release_scratch_ = std::move(named);
}

void Builder::stream_task_ended(uint32_t t) {
  if (st_[t].ended) return;  // (closed at a wait before its end came)
  st_[t].ended = true;
  release_deps(t);  // (it makes no more children)
  const uint32_t end = tasks_[t].prev;
  const uint32_t node = tasks_[t].node;
  if (const uint32_t j = st_[t].parent_join; j != kNone) {  // its parent's taskwait after it
    st_[t].parent_join = kNone;
    --ss_[j].undone;
    flush_wanted_ = true;
    if (end != kNone) edge(end, j);
    drop(j);
  }
  // Its innermost taskgroup's or phase's end, where it joins if no taskwait of its parent does
  // (a thread of the program's own joins nothing but pthread_join: joined_in_scope).
  if (end != kNone && node != kNone && node != 0 && !tasks_[t].joined_in_scope &&
      sn_[node].join_node != kNone)
    edge(end, node_join(sn_[node].join_node));
  if (node != kNone && node != 0 && !st_[t].node_closed) {
    st_[t].node_closed = true;
    close_node(node);
  }
  maybe_retire_task(t);
}

void Builder::stream_taskwait_ended(uint32_t t, uint32_t strand, uint64_t time) {
  drop(tasks_[t].pre_wait);
  tasks_[t].pre_wait = kNone;
  const uint32_t j = st_[t].join;
  if (j == kNone) return;
  st_[t].join = kNone;
  stream_late_children(j, time, false);
  edge(j, strand);
  drop(j);
}

void Builder::stream_late_children(uint32_t join, uint64_t time, bool joined_in_scope) {
  // Children not ended: their ends come a little later, or were lost (LateChild). The strand
  // after the wait waits for them. Rare: the live tasks are searched for them.
  if (ss_[join].undone == 0) return;
  for (uint32_t c = 0; c < tasks_.size(); ++c)
    if (st_[c].live && st_[c].parent_join == join && !st_[c].ended) {
      if (joined_in_scope) tasks_[c].joined_in_scope = true;
      note_join(c, time);  // (if begun: the wait's end bounds its end from above)
      late_children_.push_back(LateChild{c, st_[c].id, stream_events_});
    }
}

void Builder::stream_settle_late_children() {
  size_t w = 0;
  for (size_t i = 0; i < late_children_.size(); ++i) {
    const LateChild late = late_children_[i];
    const uint32_t c = late.task;
    if (!st_[c].live || st_[c].id != late.id || st_[c].ended) continue;  // it ended
    const TaskState& ts = tasks_[c];
    const bool too_long = stream_events_ - late.events_at > options_.late_end_events;
    if (!ts.started || ts.open == kNone || ts.waiting) {
      // Not begun, or suspended: its begin or its return may come a little after the wait too.
      if (too_long)
        stream_leave_join(c);
      else
        late_children_[w++] = late;
      continue;
    }
    const uint32_t thread = strands_[ts.open].thread;
    const bool moved_on = thread >= current_.size() || current_[thread] != c;
    if (moved_on || too_long)
      stream_unended(c, ts.peek().joined_at, unended_.joined);
    else
      late_children_[w++] = late;
  }
  late_children_.resize(w);
}

// Child c of a wait that has ended, not ended itself, no longer awaited: what it did so far
// joins the wait, as its end would have (in memory, the edge from its last strand).
void Builder::stream_leave_join(uint32_t c) {
  const uint32_t j = st_[c].parent_join;
  if (j == kNone) return;
  st_[c].parent_join = kNone;
  --ss_[j].undone;
  flush_wanted_ = true;
  if (tasks_[c].prev != kNone) edge(tasks_[c].prev, j);
  drop(j);
}

// Task t, begun and not ended, ends at `to` (kNoTime: where it is), counted in `count` by its
// origin (close_unended's rule, for one task).
void Builder::stream_unended(uint32_t t, uint64_t to, uint64_t* count) {
  TaskState& ts = tasks_[t];
  if (ts.open != kNone && !ts.waiting) {
    const uint32_t thread = strands_[ts.open].thread;
    const bool running = thread < current_.size() && current_[thread] == t && !mutex_wait_[thread];
    if (running && to != ~uint64_t{0} && to > last_time_[thread])
      extend_strand(ts.open, thread, last_time_[thread], to);
  }
  if (ts.origin != kOriginOther) ++count[ts.origin];
  // No event of its own closes the strand: no code address, as close_unended has it (its
  // fragment ends nowhere, not at the wait that joins it).
  const uint64_t code = cur_code_;
  cur_code_ = 0;
  close_strand(t);
  cur_code_ = code;
  ts.done = true;
  stream_task_ended(t);
}

void Builder::stream_barrier_join(uint32_t phase, uint32_t join_strand) {
  hold(join_strand);  // the phase's, until its region ends
  if (sn_[phase].join != kNone) edge(sn_[phase].join, join_strand);
}

void Builder::stream_region_ended(Region& r, uint32_t post_strand) {
  for (uint32_t it : r.implicit) {
    if (!st_[it].node_closed && tasks_[it].node != kNone && tasks_[it].node != 0) {
      st_[it].node_closed = true;
      close_node(tasks_[it].node);
    }
    st_[it].region_ended = true;
  }
  for (uint32_t ph : r.phases) {
    const uint32_t j = nodes_[ph].join_strand;
    if (j != kNone) {
      seal(j);
      drop(j);
    } else if (sn_[ph].join != kNone && post_strand != kNone) {
      edge(sn_[ph].join, post_strand);  // the tasks that ended in a phase without a barrier
    }
    close_node(ph);
  }
  close_node(r.node);
  drop(r.fork_strand);
  r.fork_strand = kNone;
  // The team's tasks go once ended (a worker's end may come after the region's).
  const std::vector<uint32_t> team = std::move(r.implicit);
  r.implicit.clear();
  for (uint32_t it : team) maybe_retire_task(it);
}

void Builder::stream_implicit_ended(uint32_t t) {
  release_deps(t);
  if (tasks_[t].peek().region == kNone || !regions_[tasks_[t].peek().region].ended) return;
  st_[t].region_ended = true;
  maybe_retire_task(t);
}

void Builder::maybe_retire_task(uint32_t t) {
  while (t != kNone) {
    TaskState& ts = tasks_[t];
    StreamTask& x = st_[t];
    if (!x.live || !ts.done || x.children != 0 || x.dep_refs != 0 || t == root_task_ ||
        (ts.implicit && !x.region_ended))
      return;
    if (!x.node_closed && ts.node != kNone && ts.node != 0) close_node(ts.node);
    if (x.join != kNone) drop(x.join);
    if (x.parent_join != kNone) drop(x.parent_join);
    if (x.loop_join != kNone) drop(x.loop_join);
    if (ts.extra) drop(ts.extra->loop_fork);
    drop(ts.prev);
    drop(ts.pre_wait);
    drop(ts.creator_strand);
    if (ts.extra) {  // (oneTBB: chunks of a task whose end never came)
      drop(ts.extra->chunk_fork);
      if (ts.extra->chunks)
        for (uint32_t c : *ts.extra->chunks) drop(c);
    }
    std::vector<uint32_t> waited_for;  // tasks not ended its next strand would have waited for
    if (ts.extra) {
      for (uint32_t ref : ts.extra->next_preds) {
        if (ref & kTaskRef)
          waited_for.push_back(ref & ~kTaskRef);
        else
          drop(ref);
      }
    }
    const uint32_t parent = ts.parent;
    // A region still open in it (a task that never ended): counted as finalize counts it, before
    // its slot is another task's.
    if (!open_regions_.empty()) {
      const auto open = open_regions_.find(t);
      if (open != open_regions_.end()) {
        if (open->second.depth > 0) ++region_unclosed_;
        open_regions_.erase(open);
      }
    }
    stream_forget_id(x.id);
    if (x.initial_id != 0) stream_forget_id(x.initial_id);
    delete ts.extra;
    tasks_[t] = TaskState{};
    st_[t] = StreamTask{};
    free_task_slots_.push_back(t);
    for (uint32_t w : waited_for) dep_drop(w);
    if (parent == kNone) return;
    --st_[parent].children;
    t = parent;
  }
}

}  // namespace tasklens::model::detail
