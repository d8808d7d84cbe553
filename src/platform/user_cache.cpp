// The user's cache directory and the identities its entries are keyed by (platform.hpp).
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "platform/platform.hpp"

namespace tasklens::platform {

std::string cache_dir() {
  if (const char* d = std::getenv("TASKLENS_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tasklens";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tasklens";
  return {};
}

std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path + ":missing";
  return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

uint64_t fnv1a(uint64_t h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull;  // a separator, so that "ab","c" != "a","bc"
}

}  // namespace tasklens::platform
