// End to end: `tasklens export` on recorded examples (fib with OpenMP tasks, and oneTBB's
// tbb_fib). The Perfetto export is validated against a JSON Schema of the Trace Event format
// (tests/fixtures/trace_event.schema.json, with Debian's python3-jsonschema) and its counts are
// checked against the raw DAG export: one slice per timed strand, one track per worker, a spawn
// flow into every task's first slice, every flow's two ends. The json and csv dumps hold the
// same strands and add up to the work of `tasklens report --format json`. Errors on bad input.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

constexpr uint64_t kPreemptionTidBase = 1000000;  // report/export_perfetto.hpp

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tasklens-e2e-export-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

RunResult tl_export(const std::vector<std::string>& args) {
  return tasklens_command("export", args);
}

// Validates `file` against the schema with Debian's python3-jsonschema ("" when valid, else
// the validator's message).
std::string schema_errors(const std::string& file) {
  const std::string schema =
      std::string(TASKLENS_SOURCE_DIR) + "/tests/fixtures/trace_event.schema.json";
  RunResult r = run({"/usr/bin/python3", "-c",
                     "import json, sys, jsonschema\n"
                     "schema = json.load(open(sys.argv[1]))\n"
                     "jsonschema.Draft7Validator.check_schema(schema)\n"
                     "errors = list(jsonschema.Draft7Validator(schema).iter_errors("
                     "json.load(open(sys.argv[2]))))\n"
                     "for e in errors[:5]: print(list(e.absolute_path), e.message[:300])\n"
                     "sys.exit(1 if errors else 0)\n",
                     schema, file});
  return r.exited(0) ? "" : r.describe();
}

json parse_file(const std::string& file) {
  try {
    return json::parse(read_file(file));
  } catch (const std::exception& e) {
    ADD_FAILURE() << file << " is not JSON: " << e.what();
    return json();
  }
}

bool timed(const json& strand) {
  return !strand["thread"].is_null() &&
         (strand["start"].get<uint64_t>() != 0 || strand["end"].get<uint64_t>() != 0);
}

// Records `exe args` and checks its Perfetto export against its DAG export.
void check_perfetto(const std::string& dir, const std::string& exe,
                    const std::vector<std::string>& args) {
  const std::string trace = dir + "/run.tlens", perfetto = dir + "/run.perfetto.json",
                    dag_file = dir + "/run.dag.json";
  RunResult rec = record(exe, args, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  RunResult ex = tl_export({trace, "--format", "perfetto", "-o", perfetto});
  ASSERT_TRUE(ex.exited(0)) << ex.describe();
  EXPECT_TRUE(ex.out.empty()) << "-o: nothing on stdout";
  EXPECT_NE(ex.err.find("tasklens: wrote " + perfetto), std::string::npos) << ex.err;
  RunResult dj = tl_export({trace, "--format", "json", "-o", dag_file});
  ASSERT_TRUE(dj.exited(0)) << dj.describe();

  EXPECT_EQ(schema_errors(perfetto), "");
  // A window read in one pass is as valid (e2e_stream_test: the same events as from the DAG).
  const std::string part = dir + "/run.part.json";
  RunResult win = tl_export({trace, "--stream", "--window", "1us:", "-o", part});
  ASSERT_TRUE(win.exited(0)) << win.describe();
  EXPECT_EQ(schema_errors(part), "");
  const json p = parse_file(perfetto), dag = parse_file(dag_file);
  ASSERT_TRUE(p.is_object() && dag.is_object());

  // The DAG side: timed strands, their workers, and each task's first strand.
  const json& strands = dag["strands"];
  std::set<uint64_t> timed_ids, workers;
  for (const json& s : strands)
    if (timed(s)) {
      timed_ids.insert(s["id"].get<uint64_t>());
      workers.insert(s["thread"].get<uint64_t>());
    }
  std::vector<uint64_t> task_first;
  for (const json& n : dag["nodes"])
    if (n["kind"] == "task" && n["strand_begin"] < n["strand_end"])
      task_first.push_back(n["strand_begin"]);
  ASSERT_GT(task_first.size(), 10u);

  // The Perfetto side.
  std::map<uint64_t, json> slice_of;                     // strand -> X event
  std::set<uint64_t> named_tracks;                       // worker tids with a thread_name
  std::map<uint64_t, std::string> s_kind, f_kind;        // flow id -> name
  std::set<std::pair<uint64_t, double>> spawn_arrivals;  // (tid, ts) of "f" spawn events
  std::string process;
  double last = -1e300;
  for (const json& e : p["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M") {
      const uint64_t tid = e["tid"];
      if (e["name"] == "thread_name" && tid < kPreemptionTidBase) named_tracks.insert(tid);
      if (e["name"] == "process_name") process = e["args"]["name"];
      continue;
    }
    EXPECT_GE(e["ts"].get<double>(), last) << "sorted by ts";
    last = e["ts"];
    if (ph == "X" && e["tid"].get<uint64_t>() < kPreemptionTidBase) {
      const uint64_t s = e["args"]["strand"];
      EXPECT_TRUE(slice_of.emplace(s, e).second) << "strand " << s << " twice";
    } else if (ph == "s") {
      s_kind[e["id"].get<uint64_t>()] = e["name"];
    } else if (ph == "f") {
      f_kind[e["id"].get<uint64_t>()] = e["name"];
      EXPECT_EQ(e["bp"], "e");
      if (e["name"] == "spawn") spawn_arrivals.emplace(e["tid"].get<uint64_t>(), e["ts"]);
    }
  }
  EXPECT_EQ(process, "tasklens: " + std::filesystem::path(exe).filename().string());
  std::set<uint64_t> slice_ids;
  for (const auto& [s, e] : slice_of) slice_ids.insert(s);
  EXPECT_EQ(slice_ids, timed_ids) << "one slice per timed strand";
  EXPECT_EQ(named_tracks, workers) << "one track per worker";
  for (const auto& [s, e] : slice_of) {
    const json& st = strands[s];
    EXPECT_EQ(e["tid"], st["thread"]);
    EXPECT_EQ(e["args"]["work_" + dag["metric"].get<std::string>()], st["work"]);
  }
  EXPECT_EQ(s_kind, f_kind) << "every flow has both ends, with one name";
  EXPECT_EQ(p["otherData"]["slices"], slice_of.size());
  // Every task's first slice receives a spawn arrow (tasks that never ran have no slice).
  size_t spawned = 0;
  for (uint64_t first : task_first) {
    auto it = slice_of.find(first);
    if (it == slice_of.end()) continue;
    ++spawned;
    EXPECT_TRUE(spawn_arrivals.count({it->second["tid"].get<uint64_t>(), it->second["ts"]}))
        << "no spawn flow into strand " << first << ": " << it->second.dump();
  }
  EXPECT_EQ(spawned, task_first.size());
  uint64_t spawns = 0;
  for (const auto& [id, kind] : f_kind) spawns += kind == "spawn";
  EXPECT_GE(spawns, task_first.size());
  EXPECT_EQ(p["otherData"]["flows"]["spawn"], spawns);
}

TEST_F(ExportTest, PerfettoOfOpenMPFibIsAValidTraceWithEveryStrandAndSpawn) {
  check_perfetto(dir_, example("fib", "clang"), {"10", "100"});
}

TEST_F(ExportTest, PerfettoOfOneTbbFibIsAValidTraceWithEveryStrandAndSpawn) {
  check_perfetto(dir_, std::string(TASKLENS_EXAMPLES_DIR) + "/tbb_fib", {"10", "100"});
}

// CSV rows split on commas outside quotes (the labels of these examples have no newlines).
std::vector<std::string> csv_row(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

TEST_F(ExportTest, JsonAndCsvHoldTheReportsWork) {
  const std::string trace = path("run.tlens");
  RunResult rec = record(example("fib", "gcc"), {"9", "100"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  const json report = report_json(trace);
  ASSERT_TRUE(report.is_object());
  const uint64_t work = report["program"]["work"];

  RunResult dj = tl_export({trace, "--format", "json"});  // to stdout
  ASSERT_TRUE(dj.exited(0)) << dj.describe();
  const json dag = json::parse(dj.out);
  uint64_t json_work = 0;
  for (const json& s : dag["strands"]) json_work += s["work"].get<uint64_t>();
  EXPECT_EQ(json_work, work);
  EXPECT_EQ(dag["strands"].size(), report["strands"].get<size_t>());
  EXPECT_EQ(dag["metric"], report["metric"]);
  EXPECT_EQ(dag["tasks"], report["tasks"]);
  // Model invariants, read back: preds before the strand, nodes in preorder.
  for (const json& s : dag["strands"])
    for (const json& p : s["preds"]) EXPECT_LT(p.get<uint64_t>(), s["id"].get<uint64_t>());
  for (const json& n : dag["nodes"])
    if (!n["parent"].is_null()) {
      EXPECT_LT(n["parent"].get<uint64_t>(), n["id"].get<uint64_t>());
    }

  const std::string csv_file = path("run.csv");
  RunResult dc = tl_export({trace, "--format", "csv", "-o", csv_file});
  ASSERT_TRUE(dc.exited(0)) << dc.describe();
  const std::vector<std::string> lines = lines_of(read_file(csv_file));
  ASSERT_EQ(lines.size(), 1 + dag["strands"].size());
  const std::vector<std::string> header = csv_row(lines[0]);
  ASSERT_EQ(header.front(), "strand");
  ASSERT_EQ(header[1], "work");
  ASSERT_EQ(header.back(), "preds");
  uint64_t csv_work = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> row = csv_row(lines[i]);
    ASSERT_EQ(row.size(), header.size()) << lines[i];
    csv_work += std::stoull(row[1]);
    // preds as in the json dump
    std::string want;
    for (const json& p : dag["strands"][i - 1]["preds"])
      want += (want.empty() ? "" : " ") + std::to_string(p.get<uint64_t>());
    EXPECT_EQ(row.back(), want) << lines[i];
  }
  EXPECT_EQ(csv_work, work);
}

TEST_F(ExportTest, BadInputIsOneLineAndLeavesNoFile) {
  const std::string trace = path("run.tlens");
  RunResult rec = record(example("fib", "clang"), {"6", "10"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();

  RunResult bad_format = tl_export({trace, "--format", "svg"});
  EXPECT_TRUE(bad_format.exited(2)) << bad_format.describe();
  EXPECT_EQ(lines_of(bad_format.err).size(), 1u) << bad_format.err;
  EXPECT_NE(bad_format.err.find("perfetto, json or csv"), std::string::npos) << bad_format.err;
  EXPECT_TRUE(bad_format.out.empty());

  // --window: FROM:TO with units; --stream and --window only for the timeline.
  for (const char* window :
       {"1.5", "2ms", "1s:2", "abc:1ms", "3ms:1ms", "-1ms:2ms", "1ms:2ms:3ms"}) {
    RunResult bad_window = tl_export({trace, "--window", window});
    EXPECT_TRUE(bad_window.exited(2)) << window << ": " << bad_window.describe();
    EXPECT_EQ(lines_of(bad_window.err).size(), 1u) << bad_window.err;
    EXPECT_NE(bad_window.err.find(std::string("--window ") + window + ": "), std::string::npos)
        << bad_window.err;
    EXPECT_NE(bad_window.err.find("say 1.2s:1.5s"), std::string::npos) << bad_window.err;
  }
  for (const std::vector<std::string>& flag :
       {std::vector<std::string>{"--stream"}, std::vector<std::string>{"--window", "0ms:1ms"}}) {
    std::vector<std::string> argv = {trace, "--format", "csv"};
    argv.insert(argv.end(), flag.begin(), flag.end());
    RunResult dump = tl_export(argv);
    EXPECT_TRUE(dump.exited(2)) << dump.describe();
    EXPECT_EQ(lines_of(dump.err).size(), 1u) << dump.err;
    EXPECT_NE(dump.err.find(flag[0] + " is for --format perfetto"), std::string::npos) << dump.err;
  }

  RunResult missing = tl_export({path("nope.tlens"), "-o", path("x.json")});
  EXPECT_FALSE(missing.exited(0)) << missing.describe();
  EXPECT_EQ(lines_of(missing.err).size(), 1u) << missing.err;
  EXPECT_NE(missing.err.find("nope.tlens"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(path("x.json"))) << "no half-written output";
  for (const auto& entry : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
        << "temporary left behind: " << entry.path();

  RunResult unwritable = tl_export({trace, "-o", path("no/such/dir/x.json")});
  EXPECT_TRUE(unwritable.exited(2)) << unwritable.describe();
  EXPECT_EQ(lines_of(unwritable.err).size(), 1u) << unwritable.err;
  EXPECT_NE(unwritable.err.find("no/such/dir/x.json"), std::string::npos) << unwritable.err;

  // A directory is refused before any work, not after it (the rename at the end failed).
  RunResult directory = tl_export({trace, "-o", dir_});
  EXPECT_TRUE(directory.exited(2)) << directory.describe();
  EXPECT_EQ(lines_of(directory.err).size(), 1u) << directory.err;
  EXPECT_NE(directory.err.find("is a directory"), std::string::npos) << directory.err;

  RunResult full = tl_export({trace, "-o", "/dev/full/x"});
  EXPECT_FALSE(full.exited(0)) << full.describe();
  EXPECT_EQ(lines_of(full.err).size(), 1u) << full.err;

  // A trace that is not one.
  write_file(path("junk.tlens"), "not a trace at all");
  RunResult junk = tl_export({path("junk.tlens")});
  EXPECT_FALSE(junk.exited(0)) << junk.describe();
  EXPECT_EQ(lines_of(junk.err).size(), 1u) << junk.err;
  EXPECT_TRUE(junk.out.empty());

  // An existing output is replaced only by a complete export.
  write_file(path("keep.json"), "old");
  RunResult again = tl_export({path("junk.tlens"), "-o", path("keep.json")});
  EXPECT_FALSE(again.exited(0));
  EXPECT_EQ(read_file(path("keep.json")), "old");
  RunResult ok = tl_export({trace, "-o", path("keep.json")});
  ASSERT_TRUE(ok.exited(0)) << ok.describe();
  EXPECT_EQ(read_file(path("keep.json")).rfind("{\"displayTimeUnit\":\"ns\"", 0), 0u);
}

// Outputs that are not regular files. Every command's -o goes through one helper
// (src/platform/platform.hpp), exercised here through export and view: a device node is written
// into, never replaced (as root, `export -o /dev/null` replaced the null device with a file),
// and what can take no output (a block device, a socket) is refused with one line.
TEST_F(ExportTest, ADeviceNodeGivenAsOutputStaysADeviceNode) {
  if (geteuid() != 0) GTEST_SKIP() << "making device nodes (mknod) needs root";
  const std::string trace = path("run.tlens");
  RunResult rec = record(example("fib", "clang"), {"6", "10"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  const std::string null_node = path("null"), full_node = path("full"), block = path("loop");
  ASSERT_EQ(mknod(null_node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << strerror(errno);
  ASSERT_EQ(mknod(full_node.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0) << strerror(errno);
  ASSERT_EQ(mknod(block.c_str(), S_IFBLK | 0600, makedev(7, 0)), 0) << strerror(errno);
  const int probe = open(null_node.c_str(), O_WRONLY);
  if (probe < 0)
    GTEST_SKIP() << dir_ << " does not allow device nodes (nodev): " << strerror(errno);
  close(probe);
  const auto is_node = [](const std::string& p, mode_t type, dev_t dev) {
    struct stat st {};
    return lstat(p.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type && st.st_rdev == dev;
  };

  RunResult to_null = tl_export({trace, "-o", null_node});
  EXPECT_TRUE(to_null.exited(0)) << to_null.describe();
  EXPECT_TRUE(is_node(null_node, S_IFCHR, makedev(1, 3))) << "the device node was replaced";
  RunResult view = tasklens_command("view", {trace, "-o", null_node});
  EXPECT_TRUE(view.exited(0)) << view.describe();
  EXPECT_TRUE(is_node(null_node, S_IFCHR, makedev(1, 3))) << "view replaced the device node";

  // A device that refuses the data: one line saying why, and the node stays.
  RunResult to_full = tl_export({trace, "-o", full_node});
  EXPECT_TRUE(to_full.exited(1)) << to_full.describe();
  EXPECT_EQ(lines_of(to_full.err).size(), 1u) << to_full.err;
  EXPECT_NE(to_full.err.find("No space left"), std::string::npos) << to_full.err;
  EXPECT_TRUE(is_node(full_node, S_IFCHR, makedev(1, 7))) << "the device node was replaced";

  RunResult to_block = tl_export({trace, "-o", block});
  EXPECT_TRUE(to_block.exited(2)) << to_block.describe();
  EXPECT_EQ(lines_of(to_block.err).size(), 1u) << to_block.err;
  EXPECT_NE(to_block.err.find("block device"), std::string::npos) << to_block.err;
  EXPECT_TRUE(is_node(block, S_IFBLK, makedev(7, 0))) << "the block device was replaced";
  for (const auto& entry : std::filesystem::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
        << "temporary left behind: " << entry.path();
}

// A symlink is followed, not replaced: its target gets the content (keeping its permissions),
// the link stays. A dangling one is refused.
TEST_F(ExportTest, ASymlinkGivenAsOutputStaysASymlinkToTheNewContent) {
  namespace fs = std::filesystem;
  const std::string trace = path("run.tlens");
  RunResult rec = record(example("fib", "clang"), {"6", "10"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  fs::create_directory(path("results"));
  const std::string target = path("results/real.json"), link = path("latest.json");
  write_file(target, "old");
  ASSERT_EQ(chmod(target.c_str(), 0640), 0);
  fs::create_symlink("results/real.json", link);

  RunResult ex = tl_export({trace, "-o", link});
  ASSERT_TRUE(ex.exited(0)) << ex.describe();
  EXPECT_TRUE(fs::is_symlink(link)) << "the symlink was replaced by a file";
  EXPECT_EQ(fs::read_symlink(link), "results/real.json");
  EXPECT_EQ(read_file(target).rfind("{\"displayTimeUnit\":\"ns\"", 0), 0u);
  struct stat st {};
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u) << "the replaced file keeps its permissions";

  const std::string html_link = path("view.html");
  write_file(path("results/view.html"), "old");
  fs::create_symlink("results/view.html", html_link);
  RunResult view = tasklens_command("view", {trace, "-o", html_link});
  ASSERT_TRUE(view.exited(0)) << view.describe();
  EXPECT_TRUE(fs::is_symlink(html_link)) << "view replaced the symlink by a file";
  EXPECT_GT(read_file(path("results/view.html")).size(), 1000u);

  const std::string dangling = path("dangling.json");
  fs::create_symlink("nowhere/x.json", dangling);
  RunResult bad = tl_export({trace, "-o", dangling});
  EXPECT_TRUE(bad.exited(2)) << bad.describe();
  EXPECT_EQ(lines_of(bad.err).size(), 1u) << bad.err;
  EXPECT_NE(bad.err.find("symbolic link"), std::string::npos) << bad.err;
  EXPECT_TRUE(fs::is_symlink(dangling));
  for (const std::string& d : {dir_, path("results")})
    for (const auto& entry : fs::directory_iterator(d))
      EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
          << "temporary left behind: " << entry.path();
}

// `-o -` is standard output; a FIFO is written into (the reader gets the export); a socket is
// refused.
TEST_F(ExportTest, DashIsStandardOutputAFifoIsWrittenIntoASocketRefused) {
  const std::string trace = path("run.tlens");
  RunResult rec = record(example("fib", "clang"), {"6", "10"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  RunResult plain = tl_export({trace, "--format", "csv"});
  ASSERT_TRUE(plain.exited(0)) << plain.describe();
  RunResult dash = tl_export({trace, "--format", "csv", "-o", "-"});
  ASSERT_TRUE(dash.exited(0)) << dash.describe();
  EXPECT_EQ(dash.out, plain.out);
  EXPECT_GT(dash.out.size(), 100u);
  EXPECT_EQ(dash.err.find("wrote"), std::string::npos) << dash.err;
  EXPECT_FALSE(std::filesystem::exists("-")) << "a file named - was written";

  const std::string fifo = path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // The read end is opened first (without waiting for a writer), so the export's open does not
  // wait; the export (a few KB) fits the pipe's buffer, read once it has ended.
  const int read_end = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(read_end, 0) << strerror(errno);
  RunResult to_fifo = tl_export({trace, "--format", "csv", "-o", fifo});
  std::string received;
  char buf[65536];
  for (ssize_t n; (n = read(read_end, buf, sizeof buf)) > 0;)
    received.append(buf, static_cast<size_t>(n));
  close(read_end);
  EXPECT_TRUE(to_fifo.exited(0)) << to_fifo.describe();
  EXPECT_EQ(received, plain.out);
  EXPECT_TRUE(std::filesystem::is_fifo(fifo)) << "the FIFO was replaced";

  const std::string sock = path("sock");
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << strerror(errno);
  RunResult to_sock = tl_export({trace, "-o", sock});
  close(fd);
  EXPECT_TRUE(to_sock.exited(2)) << to_sock.describe();
  EXPECT_EQ(lines_of(to_sock.err).size(), 1u) << to_sock.err;
  EXPECT_NE(to_sock.err.find("a socket"), std::string::npos) << to_sock.err;
  EXPECT_TRUE(std::filesystem::is_socket(sock)) << "the socket was replaced";
}

}  // namespace
}  // namespace tasklens::e2e
