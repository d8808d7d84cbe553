// exec: the program replaces itself (execve and the libc functions around it). Nothing of the
// recorder survives an exec (its buffers, writer threads and atexit handler are gone), so the
// trace is finished just before, with FinishReason::Exec: what ran before the exec is kept and
// the report says the new program was not recorded. The new program is not recorded: the
// recorder's constructor took LD_PRELOAD and TASKLENS_OUTPUT out of the environment, and an
// environment the program passes itself is cleaned of TASKLENS_OUTPUT here, so that nothing it
// starts can write into this trace.
//
// libc's exec* functions call execve internally (not through the PLT), so each is interposed.
// A forked child's exec passes straight through (finish() ignores other processes). If the exec
// fails the program goes on, no longer recorded.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdarg>
#include <cstring>
#include <vector>

#include "recorder/recording.hpp"

namespace tasklens::recorder {
namespace {

template <typename Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

void before_exec() {
  if (g_state.load() == kRecording && getpid() == g_pid) finish(trace::FinishReason::Exec);
}

bool is_output_var(const char* entry) { return std::strncmp(entry, "TASKLENS_OUTPUT=", 16) == 0; }

// envp without TASKLENS_OUTPUT (the same array when it has none, the usual case).
char* const* clean_env(char* const* envp, std::vector<char*>& storage) {
  if (!envp) return envp;
  bool found = false;
  for (char* const* e = envp; *e; ++e) found |= is_output_var(*e);
  if (!found) return envp;
  for (char* const* e = envp; *e; ++e)
    if (!is_output_var(*e)) storage.push_back(*e);
  storage.push_back(nullptr);
  return storage.data();
}

// The arguments of execl and the like, up to their terminating null (and, for execle, the
// environment after it).
std::vector<char*> collect_args(const char* arg0, va_list ap, char* const** envp) {
  std::vector<char*> argv{const_cast<char*>(arg0)};
  if (arg0)
    while (char* a = va_arg(ap, char*)) argv.push_back(a);
  argv.push_back(nullptr);
  if (envp) *envp = va_arg(ap, char* const*);
  return argv;
}

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);

}  // namespace
}  // namespace tasklens::recorder

using namespace tasklens::recorder;

TL_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  static auto fn = real<ExecveFn>("execve");
  before_exec();
  std::vector<char*> storage;
  return fn(path, argv, clean_env(envp, storage));
}

TL_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  static auto fn = real<ExecveFn>("execvpe");
  before_exec();
  std::vector<char*> storage;
  return fn(file, argv, clean_env(envp, storage));
}

TL_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  static auto fn = real<FexecveFn>("fexecve");
  before_exec();
  std::vector<char*> storage;
  return fn(fd, argv, clean_env(envp, storage));
}

TL_EXPORT int execv(const char* path, char* const argv[]) {
  static auto fn = real<ExecvFn>("execv");
  before_exec();
  return fn(path, argv);
}

TL_EXPORT int execvp(const char* file, char* const argv[]) {
  static auto fn = real<ExecvFn>("execvp");
  before_exec();
  return fn(file, argv);
}

TL_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = collect_args(arg, ap, nullptr);
  va_end(ap);
  return execv(path, argv.data());
}

TL_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  std::vector<char*> argv = collect_args(arg, ap, nullptr);
  va_end(ap);
  return execvp(file, argv.data());
}

TL_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char* const* envp = nullptr;
  std::vector<char*> argv = collect_args(arg, ap, &envp);
  va_end(ap);
  return execve(path, argv.data(), envp);
}
