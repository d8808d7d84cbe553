#include "symbols/symbolizer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>

extern char** environ;

namespace tasklens::symbols {

namespace {
std::vector<std::string>& library_paths() {
  static std::vector<std::string> paths = [] {
    std::vector<std::string> from_env;
    if (const char* env = std::getenv("TASKLENS_LIBRARY_PATH")) {
      std::string_view rest = env;
      while (!rest.empty()) {
        const size_t colon = rest.find(':');
        if (colon != 0) from_env.emplace_back(rest.substr(0, colon));
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
      }
    }
    return from_env;
  }();
  return paths;
}
}  // namespace

void set_library_paths(std::vector<std::string> paths) {
  std::vector<std::string>& all = library_paths();
  for (std::string& p : paths)
    if (!p.empty()) all.push_back(std::move(p));
}

bool is_library_file(std::string_view file) {
  if (file.find("/oneapi/tbb/") != std::string_view::npos ||
      file.find("/include/tbb/") != std::string_view::npos ||
      file.find("/include/c++/") != std::string_view::npos)
    return true;
  for (std::string_view system :
       {"/usr/include/", "/usr/local/include/", "/usr/lib/", "/usr/share/", "/opt/"})
    if (file.substr(0, system.size()) == system) return true;
  for (const std::string& p : library_paths()) {
    if (p.front() == '/') {
      if (file.substr(0, p.size()) == p) return true;
      continue;
    }
    std::string component = "/" + p;
    if (component.back() != '/') component += '/';
    if (file.find(component) != std::string_view::npos) return true;
  }
  return false;
}

namespace {

// "file.h:12" of a frame (its file's basename).
std::string fmt_frame(const Location& l) {
  const size_t slash = l.file.rfind('/');
  std::string name = slash == std::string::npos ? l.file : l.file.substr(slash + 1);
  return l.line ? name + ":" + std::to_string(l.line) : name;
}

// Owns a file descriptor so that every early return closes it: a leaked write end would keep an
// addr2line child from ever seeing end of input.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// "0x00000000004011d6" as echoed by -a. addr2line may mask the value to the module's address
// size, so the caller relies on the position of these lines, not on their value.
bool IsAddressLine(std::string_view line) {
  if (line.size() < 3 || line[0] != '0' || line[1] != 'x') return false;
  return std::all_of(line.begin() + 2, line.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// One addr2line process (binutils', or LLVM's, which takes the same arguments and answers in the
// same form) for one module, kept to answer query after query: starting one costs far more
// than a query (it loads the module's debug information), and a one-pass reading meets its
// sites and code fragments one at a time. Both flush after every address they read, so each query
// ends with a sentinel address (0: the file's header, never code) whose echo tells where the
// answers end.
class Addr2lineServer {
 public:
  // nullptr when it could not be started (typically: not installed).
  static std::unique_ptr<Addr2lineServer> start(const std::string& module, const char* program) {
    // stdin is a socket rather than a pipe so that writes can pass MSG_NOSIGNAL: addr2line exits
    // early when it cannot read the module, and a pipe would then raise SIGPIPE in the whole
    // process. CLOEXEC matters as modules are processed from several threads at once: a sibling
    // child inheriting our write end would keep this child's stdin open forever.
    int in_pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_pair) != 0) return nullptr;
    UniqueFd to_child(in_pair[0]);
    UniqueFd child_stdin(in_pair[1]);
    int out_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0) return nullptr;
    UniqueFd from_child(out_pipe[0]);
    UniqueFd child_stdout(out_pipe[1]);

    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0) return nullptr;
    posix_spawn_file_actions_adddup2(&actions, child_stdin.get(), STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, child_stdout.get(), STDOUT_FILENO);
    // Its complaints (no such file, DWARF warnings) would only clutter the report's terminal.
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);

    // -a echoes each address before its answer: with -i an address yields a variable number of
    // (function, file:line) pairs, and the echo is what tells where one answer ends. -i is used
    // so that the innermost frame is explicitly the first pair whatever binutils' default naming.
    std::string args[] = {program, "-f", "-C", "-i", "-a", "-e", module};
    char* argv[std::size(args) + 1];
    for (size_t i = 0; i < std::size(args); ++i) argv[i] = args[i].data();
    argv[std::size(args)] = nullptr;

    pid_t pid = 0;
    const int spawn_error = posix_spawnp(&pid, program, &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawn_error != 0) return nullptr;
    std::unique_ptr<Addr2lineServer> server(new Addr2lineServer);
    server->pid_ = pid;
    server->to_child_ = std::move(to_child);
    server->from_child_ = std::move(from_child);
    return server;
  }

  ~Addr2lineServer() {
    // Closing both ends first: end of input ends it, and a child still writing to a pipe nobody
    // reads would never exit.
    to_child_.reset();
    from_child_.reset();
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  Addr2lineServer(const Addr2lineServer&) = delete;
  Addr2lineServer& operator=(const Addr2lineServer&) = delete;

  // The answers to `input` (`count` address lines), as addr2line printed them; what it printed
  // before it died when it did (a module it cannot read), and nothing after that.
  std::string ask(const std::string& input, size_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string output;
    if (!from_child_.valid()) return output;
    const std::string query = input + "0x0\n";
    size_t written = 0;
    size_t scanned = 0;                   // output's complete lines looked at so far end here
    size_t echoes = 0;                    // address lines among them
    size_t sentinel = std::string::npos;  // where the sentinel's echo starts
    size_t after_sentinel = 0;            // lines after it (its answer is 2: "??" and "??:0")
    char buffer[1 << 16];
    while (from_child_.valid()) {
      const bool writing = written < query.size() && to_child_.valid();
      pollfd fds[2] = {{from_child_.get(), POLLIN, 0}, {to_child_.get(), POLLOUT, 0}};
      if (::poll(fds, writing ? 2 : 1, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      // Write and read at the same time: with all input written first, a large answer would
      // fill the stdout pipe and both sides would block.
      if (writing && fds[1].revents != 0) {
        if (!(fds[1].revents & POLLOUT)) {
          to_child_.reset();  // it stopped reading: keep whatever it answers
        } else {
          const ssize_t n = ::send(to_child_.get(), query.data() + written, query.size() - written,
                                   MSG_NOSIGNAL | MSG_DONTWAIT);
          if (n > 0)
            written += static_cast<size_t>(n);
          else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            to_child_.reset();  // (EPIPE)
        }
      }
      if (fds[0].revents == 0) continue;
      const ssize_t n = ::read(from_child_.get(), buffer, sizeof(buffer));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        from_child_.reset();  // it died: the answers so far
        to_child_.reset();
        break;
      }
      if (n < 0) continue;
      output.append(buffer, static_cast<size_t>(n));
      for (size_t end; (end = output.find('\n', scanned)) != std::string::npos; scanned = end + 1) {
        if (sentinel != std::string::npos) {
          if (++after_sentinel == 2) {
            output.resize(sentinel);
            return output;
          }
          continue;
        }
        if (IsAddressLine(std::string_view(output).substr(scanned, end - scanned)) &&
            ++echoes == count + 1)
          sentinel = scanned;
      }
    }
    if (sentinel != std::string::npos) output.resize(sentinel);
    return output;
  }

 private:
  Addr2lineServer() = default;
  pid_t pid_ = -1;
  UniqueFd to_child_, from_child_;
  std::mutex mutex_;
};

void SetFunction(std::string_view name, Location* location) {
  if (name != "??") location->function = name;
}

// Parses "file:line", "file:line (discriminator N)", "??:0" or "??:?".
void SetFileLine(std::string_view text, Location* location) {
  if (const size_t annotation = text.rfind(" (discriminator ");
      annotation != std::string_view::npos) {
    text = text.substr(0, annotation);
  }
  const size_t colon = text.rfind(':');  // rightmost: the path itself may contain colons
  if (colon == std::string_view::npos) return;
  const std::string_view file = text.substr(0, colon);
  const std::string_view number = text.substr(colon + 1);
  if (file != "??" && !file.empty()) location->file = file;
  unsigned line = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), line);
  if (error == std::errc() && end == number.data() + number.size()) location->line = line;
}

// Whether a line can be a whole "file:line" answer: it ends in ":N" or ":?", with perhaps a
// " (discriminator N)" after it. addr2line prints a source path as it is, so a path holding a
// newline comes as several lines, and only the last one looks like this.
bool LooksLikeFileLine(std::string_view text) {
  if (const size_t annotation = text.rfind(" (discriminator ");
      annotation != std::string_view::npos && text.ends_with(")")) {
    text = text.substr(0, annotation);
  }
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size()) return false;
  const std::string_view number = text.substr(colon + 1);
  return number == "?" ||
         std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string_view TakeLine(std::string_view* output) {
  const size_t newline = output->find('\n');
  const std::string_view line = output->substr(0, newline);
  output->remove_prefix(newline == std::string_view::npos ? output->size() : newline + 1);
  return line;
}

// Code inlined from a library's headers (oneTBB's task_group::run, parallel_for ..., the C++
// library's std::thread constructor, a header-only parallel library) is not where the program
// calls the library: the frame that inlined it is (is_library_file).
bool IsLibraryHeader(std::string_view file) { return is_library_file(file); }

// LLVM's addr2line, if installed (clang's package brings it): binutils' addr2line (2.40) does not
// see the inlined frames in clang's DWARF 5, so an address in code inlined from a library's
// header has only that header's line there, not the program's line that inlined it.
const char* LlvmAddr2line() {
  static const char* const found = []() -> const char* {
    const char* path = std::getenv("PATH");
    std::string_view dirs = path ? path : "/usr/bin:/bin";
    for (const char* name : {"llvm-addr2line", "llvm-addr2line-16", "llvm-addr2line-14"}) {
      for (size_t at = 0; at <= dirs.size();) {
        size_t end = dirs.find(':', at);
        if (end == std::string_view::npos) end = dirs.size();
        const std::string candidate = std::string(dirs.substr(at, end - at)) + "/" + name;
        if (end > at && ::access(candidate.c_str(), X_OK) == 0) return name;
        at = end + 1;
      }
    }
    return nullptr;
  }();
  return found;
}

// Fills targets[i] from the i-th answer of `output`. Answers are: the echoed address, then pairs
// of (function, file:line) lines, innermost inlined frame first. The innermost pair is kept,
// unless it is inside a library's headers: then the innermost pair outside them.
void ParseAnswers(std::string_view output, const std::vector<Location*>& targets) {
  Location* current = nullptr;
  size_t next = 0;       // index of the next answer
  size_t position = 0;   // lines seen since the current answer's address line
  bool settled = false;  // the current answer's frame is chosen
  Location frame;
  std::string joined;  // a file line whose path holds newlines, put back together
  while (!output.empty()) {
    std::string_view line = TakeLine(&output);
    if (position % 2 == 1 && !LooksLikeFileLine(line)) {
      // A path with newlines: its lines up to the one that ends in ":N" (at most 64 of them,
      // and never an address line, so that a malformed answer cannot swallow the next ones).
      joined.assign(line);
      for (int more = 0; more < 64 && !output.empty() && !LooksLikeFileLine(joined); ++more) {
        std::string_view rest = output;
        const std::string_view next = TakeLine(&rest);
        if (IsAddressLine(next)) break;
        output = rest;
        joined += '\n';
        joined += next;
      }
      line = joined;
    }
    // An address line can only come where a function line could: demangled names never look
    // like "0x1f3a", so this cannot be confused with a function.
    if (position % 2 == 0 && IsAddressLine(line)) {
      current = next < targets.size() ? targets[next] : nullptr;
      ++next;
      position = 0;
      settled = false;
      continue;
    }
    ++position;
    if (current == nullptr || settled) continue;
    if (position % 2 == 1) {
      frame = Location();
      SetFunction(line, &frame);
      continue;
    }
    SetFileLine(line, &frame);
    const bool library = IsLibraryHeader(frame.file);
    // The library frames before the chosen one (innermost first): the last, the library's entry
    // point the program called, stays as detail.
    if (library && !frame.file.empty())
      current->library_frame = fmt_frame(frame);
    else if (position == 2)
      current->library_frame.clear();
    current->function = frame.function;
    current->file = frame.file;
    current->line = frame.line;
    current->in_library_header = library;
    settled = !current->in_library_header;
  }
}

std::string HexLine(uint64_t value) {
  char digits[20];
  const auto [end, error] = std::to_chars(digits, digits + sizeof(digits), value, 16);
  std::string line = "0x";
  line.append(digits, end);
  line.push_back('\n');
  return line;
}

// The addresses of one module still to resolve, and where their answers go.
struct ModuleBatch {
  const Module* module = nullptr;
  std::vector<uint64_t> file_addresses;
  std::vector<Location*> targets;
};

}  // namespace

namespace detail {

std::vector<Location> parse_addr2line_output(std::string_view output, size_t count) {
  std::vector<Location> locations(count);
  std::vector<Location*> targets;
  targets.reserve(count);
  for (Location& location : locations) targets.push_back(&location);
  ParseAnswers(output, targets);
  return locations;
}

}  // namespace detail

// The addr2line processes of a Symbolizer, by (program, module); nullptr: could not start.
struct Symbolizer::Servers {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, std::unique_ptr<Addr2lineServer>> running;
  // The server of `module` for `program`, started on first use (counted in *started).
  Addr2lineServer* get(const std::string& module, const char* program,
                       std::atomic<size_t>* started) {
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, inserted] = running.try_emplace({program, module});
    if (inserted) {
      it->second = Addr2lineServer::start(module, program);
      if (it->second) ++*started;
    }
    return it->second.get();
  }
};

Symbolizer::Symbolizer(std::vector<Module> modules)
    : modules_(std::move(modules)), servers_(std::make_unique<Servers>()) {}
Symbolizer::~Symbolizer() = default;
Symbolizer::Symbolizer(Symbolizer&&) noexcept = default;
Symbolizer& Symbolizer::operator=(Symbolizer&&) noexcept = default;

bool Symbolizer::is_runtime_module(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string::npos
                                    ? std::string_view(path)
                                    : std::string_view(path).substr(slash + 1);
  for (const std::string_view prefix : {"libomp", "libgomp", "libiomp", "libtbb"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

namespace {

// Answers with a file and a function but no line: clang gives the runtime call of a construct
// (__kmpc_fork_call of a parallel region, say) line 0, and the site would be named by its
// module offset. The nearest earlier instruction with a line in the same function and file,
// within kLineLookBack bytes, is the construct's own line (its pragma, or the statement that
// sets up the call's arguments).
constexpr uint64_t kLineLookBack = 48;

void find_nearby_lines(const ModuleBatch& batch, Addr2lineServer& server) {
  std::string input;
  std::vector<size_t> asked;  // targets asked about, kLineLookBack addresses each
  for (size_t i = 0; i < batch.targets.size(); ++i) {
    const Location& l = *batch.targets[i];
    if (l.line != 0 || l.file.empty() || l.function.empty()) continue;
    if (batch.file_addresses[i] < kLineLookBack) continue;
    asked.push_back(i);
    for (uint64_t k = 1; k <= kLineLookBack; ++k) input += HexLine(batch.file_addresses[i] - k);
  }
  if (asked.empty()) return;
  const std::string output = server.ask(input, asked.size() * kLineLookBack);
  std::vector<Location> answers(asked.size() * kLineLookBack);
  std::vector<Location*> targets;
  for (Location& a : answers) targets.push_back(&a);
  ParseAnswers(output, targets);
  for (size_t j = 0; j < asked.size(); ++j) {
    Location& l = *batch.targets[asked[j]];
    for (uint64_t k = 0; k < kLineLookBack; ++k) {
      const Location& a = answers[j * kLineLookBack + k];
      if (a.line != 0 && a.file == l.file && a.function == l.function) {
        l.line = a.line;
        break;
      }
    }
  }
}

}  // namespace

std::vector<Location> Symbolizer::resolve(const std::vector<uint64_t>& addresses) const {
  return resolve(addresses, nullptr);
}

std::vector<Location> Symbolizer::resolve(const std::vector<uint64_t>& addresses,
                                          ResolveStats* stats) const {
  // Recorded addresses repeat a lot (one per event): each distinct one is looked up once. Node
  // based map: the batches below keep pointers to its values.
  std::unordered_map<uint64_t, Location> resolved;
  resolved.reserve(addresses.size());
  std::vector<ModuleBatch> batches(modules_.size());
  for (const uint64_t address : addresses) {
    auto [it, inserted] = resolved.try_emplace(address);
    if (!inserted || address == 0) continue;
    // A return address follows the call; the call itself may be the segment's last instruction.
    const uint64_t pc = address - 1;
    // Modules are few (tens) and distinct addresses at most thousands: a scan is cheap and, unlike
    // a binary search, does not assume the recorded ranges never overlap.
    for (size_t m = 0; m < modules_.size(); ++m) {
      const Module& module = modules_[m];
      if (pc < module.begin || pc >= module.end) continue;
      Location& location = it->second;
      location.module = module.path;
      location.in_runtime = is_runtime_module(module.path);
      if (!module.path.empty()) {
        batches[m].module = &module;
        batches[m].file_addresses.push_back(pc - module.base);
        batches[m].targets.push_back(&location);
      }
      break;
    }
  }
  // Only regular files go to addr2line: a trace read on another machine (or a damaged one) may
  // name a directory, a device or a FIFO, which cannot hold symbols (addr2line refuses them, a
  // process each for nothing).
  std::erase_if(batches, [](const ModuleBatch& batch) {
    struct stat st;
    return batch.module == nullptr || ::stat(batch.module->path.c_str(), &st) != 0 ||
           !S_ISREG(st.st_mode);
  });

  // One addr2line per module; they load debug info independently, so run them side by side.
  std::atomic<size_t> next_batch{0};
  std::atomic<size_t> processes{0};
  auto work = [&] {
    for (size_t b = next_batch++; b < batches.size(); b = next_batch++) {
      const ModuleBatch& batch = batches[b];
      std::string input;
      input.reserve(batch.file_addresses.size() * 20);
      for (const uint64_t file_address : batch.file_addresses) input += HexLine(file_address);
      Addr2lineServer* server = servers_->get(batch.module->path, "addr2line", &processes);
      if (!server) continue;  // no addr2line: the locations keep just their module
      ParseAnswers(server->ask(input, batch.file_addresses.size()), batch.targets);
      find_nearby_lines(batch, *server);
      // Answers left inside a library's headers: ask LLVM's addr2line for the frames that
      // inlined them (only those addresses: it starts slower than binutils').
      std::string again;
      std::vector<Location*> retargets;
      for (size_t i = 0; i < batch.targets.size(); ++i)
        if (batch.targets[i]->in_library_header) {
          again += HexLine(batch.file_addresses[i]);
          retargets.push_back(batch.targets[i]);
        }
      const char* llvm = retargets.empty() ? nullptr : LlvmAddr2line();
      if (!llvm) continue;
      Addr2lineServer* inlining = servers_->get(batch.module->path, llvm, &processes);
      if (!inlining) continue;
      std::vector<Location> answers(retargets.size());
      std::vector<Location*> answer_targets;
      for (Location& a : answers) answer_targets.push_back(&a);
      ParseAnswers(inlining->ask(again, retargets.size()), answer_targets);
      for (size_t i = 0; i < retargets.size(); ++i) {
        // Keep binutils' answer unless LLVM's found a frame outside the headers.
        if (answers[i].in_library_header || !answers[i].known()) continue;
        retargets[i]->library_frame =
            answers[i].library_frame.empty() ? fmt_frame(*retargets[i]) : answers[i].library_frame;
        retargets[i]->function = answers[i].function;
        retargets[i]->file = answers[i].file;
        retargets[i]->line = answers[i].line;
        retargets[i]->in_library_header = false;
      }
    }
  };
  const size_t workers =
      std::min<size_t>(batches.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  try {
    for (size_t i = 1; i < workers; ++i) threads.emplace_back(work);
  } catch (const std::system_error&) {
    // Out of threads: this thread alone goes through the remaining batches.
  }
  work();
  for (std::thread& thread : threads) thread.join();

  if (stats != nullptr) {
    stats->distinct = resolved.size();
    stats->looked_up = 0;
    for (const ModuleBatch& batch : batches) stats->looked_up += batch.file_addresses.size();
    stats->processes = processes;
  }
  std::vector<Location> result;
  result.reserve(addresses.size());
  for (const uint64_t address : addresses) result.push_back(resolved.at(address));
  return result;
}

}  // namespace tasklens::symbols
