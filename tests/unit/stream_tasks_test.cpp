// analysis/stream_tasks.hpp fed tasks directly: the types, counts, totals and findings that
// compute_tasks would give for the same tasks, the sites that are not task types left out. (Every
// trace the model tests build is also read this way and compared with compute_tasks:
// tests/support/trace_builder.hpp.)
#include "analysis/stream_tasks.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "model/model.hpp"

namespace tasklens::analysis {
namespace {

using model::SiteKind;

model::Model sites_and_threads() {
  model::Model m;
  for (SiteKind kind : {SiteKind::Program, SiteKind::Task, SiteKind::Loop, SiteKind::Parallel}) {
    model::Site site;
    site.kind = kind;
    m.sites.push_back(site);
  }
  m.one_pass.threads_with_strands = {1, 0, 1};  // two workers
  return m;
}

model::StrandSink::Task task(uint32_t site, bool chunk, uint64_t size, uint64_t wait,
                             uint64_t idle) {
  model::StrandSink::Task t;
  t.site = site;
  t.chunk = chunk;
  t.size = size;
  t.wait = wait;
  t.idle = idle;
  return t;
}

TEST(StreamTasks, TypesCountsAndFindingsAsComputeTasksHasThem) {
  const model::Model m = sites_and_threads();
  TaskOptions opt;
  opt.tiny_size = 100;
  StreamTasks sink(opt.tiny_size);
  sink.strand(5000, 5000, 0, nullptr, 0, nullptr, 0, 1, 0, 0);
  for (uint64_t k = 0; k < 10; ++k)  // ten tiny tasks at site 1, 10..19 ticks
    sink.task(task(1, false, 10 + k, 50, model::StrandSink::kNoTime));
  sink.task(task(2, true, 3000, model::StrandSink::kNoTime, 7));  // one chunk of the loop
  sink.task(task(3, false, 400, 1, 1));  // a region's implicit task: no task type
  const TaskProfile p = sink.finish(m, opt);
  EXPECT_EQ(p.work, 5000u);
  EXPECT_EQ(p.workers, 2u);
  EXPECT_EQ(p.tasks, 11u);
  EXPECT_EQ(p.task_work, 145u + 3000u);
  EXPECT_TRUE(p.timestamps);
  EXPECT_GT(p.sketch_error, 0);
  ASSERT_EQ(p.types.size(), 2u);
  const TaskType &loop = p.types[0], &tiny = p.types[1];  // by total size
  EXPECT_EQ(loop.site, 2u);
  EXPECT_TRUE(loop.chunks);
  EXPECT_EQ(loop.size.samples, 1u);
  EXPECT_EQ(loop.wait.samples, 0u);
  EXPECT_EQ(loop.idle.total, 7u);
  EXPECT_EQ(tiny.site, 1u);
  EXPECT_EQ(tiny.size.samples, 10u);
  EXPECT_EQ(tiny.size.min, 10u);
  EXPECT_EQ(tiny.size.max, 19u);
  EXPECT_EQ(tiny.size.median, 14u);  // exact below 256
  EXPECT_EQ(tiny.tiny, 10u);
  EXPECT_EQ(tiny.wait.total, 500u);
  EXPECT_EQ(tiny.size_octaves[4], 6u);  // 10..15
  EXPECT_EQ(tiny.size_octaves[5], 4u);  // 16..19
  ASSERT_FALSE(p.findings.empty());
  EXPECT_EQ(p.findings[0].kind, FindingKind::FewLargeTasks);  // the loop's one chunk: 58% of work
  bool many_tiny = false;
  for (const Finding& f : p.findings)
    many_tiny |= f.kind == FindingKind::ManyTinyTasks && p.types[f.type].site == 1;
  EXPECT_TRUE(many_tiny);
}

}  // namespace
}  // namespace tasklens::analysis
