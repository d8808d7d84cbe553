// oneTBB's parallel_pipeline. It runs inside libtbb: its stage tasks are internal to the library,
// spawned and waited for from its code (the spawn and wait hooks of tbb_hooks.cpp see them), and
// each one runs one filter on one item. A serial filter (serial_in_order or serial_out_of_order)
// runs one item at a time, which libtbb enforces with a token buffer, not with spawns: an item
// whose turn it is runs the filter in whichever stage task reaches it (the item's own, returned
// by its previous stage), and only an item that was already waiting is spawned by the run before
// it. At spawn time nothing tells which filter a task will run, so the runs themselves are
// recorded: libtbb asks the filter tree that the program passes for its filters (create_filter,
// once per call), and the recorder passes a tree of its own whose leaves make the program's
// filters and give each serial one a shadow vtable, like a task's (tbb_hooks.cpp): its
// operator() brackets the run with TbbFilterBegin / TbbFilterEnd (the filter's address) in the
// running task's strand. The call itself is announced by TbbPipeline (its task_group_context),
// before its root task's spawn, so that the model knows the group's tasks for a pipeline's.
//
// Why this way: the filter objects are the only thing of the pipeline that the headers define
// (base_filter's virtual operator() and its vtable's layout, checked below), so nothing depends
// on libtbb's private classes (stage_task, input_buffer); the program's filter tree is only read,
// never modified (it may be shared by concurrent calls); parallel filters are left alone, so the
// hot path costs nothing where there is nothing to order, and two events (a few bytes) per run
// of a serial filter.
#include <cstring>
#include <memory>
#include <new>

#include "recorder/tbb_internal.hpp"

namespace tasklens::recorder {

namespace {

// base_filter's virtual functions in its vtable, in declaration order (Itanium C++ ABI):
// operator() at 0, the destructor's two entries, finalize at 3.
constexpr int kCallSlot = 0, kFinalizeSlot = 3, kFilterSlots = 4;

// A pointer to a virtual member function is 1 + the function's offset in the vtable (Itanium
// C++ ABI): base_filter's functions must be where kCallSlot and kFinalizeSlot say (oneTBB's
// interface version, which tbb_prepare checks, fixes them; this guards a compiler that does
// otherwise, which then runs pipelines untraced).
bool filter_layout_known() {
  struct Pmf {
    uintptr_t ptr;
    ptrdiff_t adjust;
  };
  auto offset = [](auto pmf) {
    static_assert(sizeof pmf == sizeof(Pmf));
    Pmf p;
    std::memcpy(&p, &pmf, sizeof p);
    return p.adjust == 0 ? p.ptr : 0;
  };
  return offset(&d1::base_filter::operator()) == 1 + kCallSlot * sizeof(void*) &&
         offset(&d1::base_filter::finalize) == 1 + kFinalizeSlot * sizeof(void*);
}

// A serial filter's shadow vtable: the filter's vtable pointer points at `slots`, so the two
// words before it are where the ABI expects offset-to-top and the type_info; the filter's real
// vtable pointer comes first. It stays for the filter's life (libtbb destroys its filters
// before parallel_pipeline returns, through the real destructor, which the slots keep).
struct FilterShadow {
  const void* const* real_vptr;
  const void* offset_to_top;
  const void* type_info;
  const void* slots[kFilterSlots];
};

TL_INLINE const FilterShadow* shadow_of(const d1::base_filter* filter) {
  auto* vptr = *reinterpret_cast<const void* const* const*>(filter);
  return reinterpret_cast<const FilterShadow*>(reinterpret_cast<uintptr_t>(vptr) -
                                               offsetof(FilterShadow, slots));
}

TL_INLINE void put_filter_event(ThreadState* t, EventKind kind, const void* filter) {
  if (uint8_t* p = begin_event(t, kind)) {
    p = put_addr(p, filter);
    end_event(t, p);
  }
}

// The end of a run, also when the filter throws (oneTBB cancels the pipeline and rethrows it).
struct FilterRun {
  ThreadState* t;
  const void* filter;
  ~FilterRun() { put_filter_event(t, EventKind::TbbFilterEnd, filter); }
};

using FilterCall = void* (*)(d1::base_filter*, void*);

// A serial filter's operator(), called by libtbb on one item in a stage task.
void* shadow_call(d1::base_filter* filter, void* item) {
  auto real =
      reinterpret_cast<FilterCall>(const_cast<void*>(shadow_of(filter)->real_vptr[kCallSlot]));
  ThreadState* t = tls_state;
  if (!recording(t)) return real(filter, item);
  put_filter_event(t, EventKind::TbbFilterBegin, filter);
  FilterRun run{t, filter};
  return real(filter, item);
}

// A leaf of the tree handed to libtbb: it makes the program's leaf's filter and shadows it if
// serial. It lives in parallel_pipeline's frame, not in libtbb's memory, so it holds a reference
// of its own that keeps the tree's filter_node_ptrs from ever freeing it.
class ShadowLeaf final : public d1::filter_node {
 public:
  ShadowLeaf() { add_ref(); }
  void of(const d1::filter_node* program_leaf) { leaf_ = program_leaf; }
  d1::base_filter* create_filter() const override {
    d1::base_filter* filter = leaf_->create_filter();
    if (filter && filter->is_serial()) shadow(filter);
    return filter;
  }

 private:
  void shadow(d1::base_filter* filter) const {
    auto*& vptr = *reinterpret_cast<const void* const**>(filter);
    shadow_.real_vptr = vptr;
    shadow_.offset_to_top = vptr[-2];
    shadow_.type_info = vptr[-1];
    for (int i = 0; i < kFilterSlots; ++i) shadow_.slots[i] = vptr[i];
    shadow_.slots[kCallSlot] = reinterpret_cast<const void*>(&shadow_call);
    vptr = shadow_.slots;
  }
  const d1::filter_node* leaf_ = nullptr;
  mutable FilterShadow shadow_{};  // made when libtbb asks for the filter (a const call)
};

// An inner node (left's filters, then right's), pinned likewise.
class ShadowJoin final : public d1::filter_node {
 public:
  ShadowJoin() { add_ref(); }
};

// The program's filter tree with ShadowLeaf leaves, in the order libtbb reads them
// (pipeline::fill_pipeline: left subtree, then right): leaf i, then join i + 1's leaves.
class ShadowTree {
 public:
  ShadowTree() = default;
  ShadowTree(const ShadowTree&) = delete;
  ShadowTree& operator=(const ShadowTree&) = delete;
  ~ShadowTree() {
    // The joins' references first, while everything they point at is alive.
    for (size_t i = 0; i + 1 < count_; ++i) {
      joins_[i].left = nullptr;
      joins_[i].right = nullptr;
    }
  }

  // False if the tree cannot be made (no memory, or an absurd tree): run the program's.
  bool build(const d1::filter_node& program) {
    const size_t n = leaves_of(program);
    if (n == 0 || n > kMaxFilters) return false;
    leaves_.reset(new (std::nothrow) ShadowLeaf[n]);
    if (n > 1) joins_.reset(new (std::nothrow) ShadowJoin[n - 1]);
    if (!leaves_ || (n > 1 && !joins_)) return false;
    size_t k = 0;
    collect(program, k);
    count_ = n;
    for (size_t i = 0; i + 1 < n; ++i) {
      joins_[i].left = &leaves_[i];
      if (i + 2 < n)
        joins_[i].right = &joins_[i + 1];
      else
        joins_[i].right = &leaves_[i + 1];
    }
    root_ = n > 1 ? static_cast<d1::filter_node*>(&joins_[0]) : &leaves_[0];
    return true;
  }
  const d1::filter_node& root() const { return *root_; }

 private:
  static constexpr size_t kMaxFilters = 1 << 16;
  static size_t leaves_of(const d1::filter_node& node) {
    return node.left && node.right ? leaves_of(*node.left) + leaves_of(*node.right) : 1;
  }
  void collect(const d1::filter_node& node, size_t& k) {
    if (node.left && node.right) {
      collect(*node.left, k);
      collect(*node.right, k);
    } else {
      leaves_[k++].of(&node);
    }
  }
  std::unique_ptr<ShadowLeaf[]> leaves_;
  std::unique_ptr<ShadowJoin[]> joins_;
  size_t count_ = 0;
  const d1::filter_node* root_ = nullptr;
};

}  // namespace

}  // namespace tasklens::recorder

namespace tbb::detail::r1 {

// The spawns and the wait of the pipeline's tasks come from libtbb's code, where no line is the
// user's, so they counted as code outside any construct. The call site (in the program, where
// the header's parallel_pipeline was inlined) is announced for the pipeline's root (its
// execute_and_wait), as a wrapper would: the pipeline is a construct at the user's line, its
// tasks inside it. Its serial filters' runs are bracketed (see the top of the file).
void parallel_pipeline(d1::task_group_context& ctx, std::size_t max_tokens,
                       const d1::filter_node& filters) {
  using namespace tasklens::recorder;
  const PipelineFn real = real_parallel_pipeline();
  ThreadState* t = tbb_state();
  if (!recording(t)) return real(ctx, max_tokens, filters);
  if (t->tbb_site == 0) {
    t->tbb_site = reinterpret_cast<uint64_t>(__builtin_return_address(0));
    t->tbb_site_kind = static_cast<uint32_t>(tasklens::trace::TbbKind::Other) | kSiteOnce;
  }
  static const bool layout_known = filter_layout_known();
  ShadowTree tree;
  if (!layout_known || !tree.build(filters)) return real(ctx, max_tokens, filters);
  if (uint8_t* p = begin_event(t, EventKind::TbbPipeline)) {
    p = put_addr(p, &ctx);
    end_event(t, p);
  }
  real(ctx, max_tokens, tree.root());
}

}  // namespace tbb::detail::r1
