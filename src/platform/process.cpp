// Running a helper program quietly, with a deadline (platform.hpp).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include "platform/platform.hpp"

namespace tasklens::platform {

QuietRun run_quietly(const std::string& program, const std::vector<std::string>& env,
                     double timeout_seconds) {
  QuietRun r;
  std::vector<std::string> env_copy = env;
  std::vector<char*> envp;
  for (std::string& v : env_copy) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string arg0 = program;
  char* argv[] = {arg0.data(), nullptr};
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  for (int f : {0, 1, 2}) posix_spawn_file_actions_addopen(&files, f, "/dev/null", O_RDWR, 0);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, program.c_str(), &files, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&files);
  if (err != 0) {
    r.why = std::string("could not be started: ") + std::strerror(err);
    return r;
  }
  // Polled, not a blocking wait: a helper that hangs must not hang its caller.
  int status = 0;
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      r.why = std::string("could not be waited for: ") + std::strerror(errno);
      return r;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    const double waited =
        double(now.tv_sec - start.tv_sec) + 1e-9 * double(now.tv_nsec - start.tv_nsec);
    if (waited > timeout_seconds) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      r.why = "did not end within " + std::to_string(int(timeout_seconds)) + " s";
      return r;
    }
    timespec nap{0, 2000000};
    nanosleep(&nap, nullptr);
  }
  if (WIFSIGNALED(status)) {
    r.why = "was killed by signal " + std::to_string(WTERMSIG(status));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    r.why = "failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  } else {
    r.ran = true;
  }
  return r;
}

}  // namespace tasklens::platform
