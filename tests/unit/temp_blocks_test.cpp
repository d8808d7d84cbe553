// analysis/temp_blocks: blocks kept in an unnamed file in $TMPDIR, read back as they were; a
// directory that cannot take them is named, a disk that runs out of room says so, and a block
// changed on disk is refused.
#include "analysis/temp_blocks.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "errors.hpp"

namespace tasklens::analysis {
namespace {

std::vector<char> pattern(size_t bytes, int seed) {
  std::vector<char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<char>((i * 7 + seed) % 13 + (i % 97 == 0));
  return v;
}

// Sets TMPDIR for the test's scope.
class Tmpdir {
 public:
  explicit Tmpdir(const std::string& dir) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old, had_ = true;
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~Tmpdir() { had_ ? setenv("TMPDIR", old_.c_str(), 1) : unsetenv("TMPDIR"); }

 private:
  std::string old_;
  bool had_ = false;
};

// The descriptor of a file this process has open in `dir` (an unnamed one reads
// "dir/#123 (deleted)"), or -1.
int file_open_in(const std::string& dir) {
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind(dir + "/", 0) == 0) return std::stoi(fd.path().filename().string());
  }
  return -1;
}
bool has_file_in(const std::string& dir) { return file_open_in(dir) >= 0; }

// A fresh directory under /tmp, TMPDIR for the scope, removed with what it holds after.
class FreshTmpdir {
 public:
  FreshTmpdir() : dir_(make()), tmpdir_(dir_) {}
  ~FreshTmpdir() { std::filesystem::remove_all(dir_); }
  const std::string& dir() const { return dir_; }

 private:
  static std::string make() {
    char made[] = "/tmp/tasklens_tmpdir_testXXXXXX";
    if (!mkdtemp(made)) throw std::runtime_error("mkdtemp failed");
    return made;
  }
  std::string dir_;
  Tmpdir tmpdir_;
};

TEST(TempBlocks, BlocksComeBackAsTheyWere) {
  for (bool compress : {true, false}) {
    TempBlocks blocks("the test's blocks", compress);
    std::vector<std::vector<char>> put;
    for (int i = 0; i < 5; ++i) {
      put.push_back(pattern(1000 + 3000 * i, i));
      EXPECT_EQ(blocks.put(put.back().data(), put.back().size()), size_t(i));
    }
    EXPECT_EQ(blocks.blocks(), 5u);
    for (size_t i = put.size(); i-- > 0;) {
      std::vector<char> got(blocks.raw_bytes(i));
      blocks.get(i, got.data());
      EXPECT_EQ(got, put[i]) << i << " " << compress;
    }
  }
}

TEST(TempBlocks, TheFileIsMadeInTmpdir) {
  FreshTmpdir tmpdir;
  {
    TempBlocks blocks("the test's blocks");
    const std::vector<char> block = pattern(4096, 1);
    blocks.put(block.data(), block.size());
    EXPECT_TRUE(has_file_in(tmpdir.dir()));
  }
  EXPECT_FALSE(has_file_in(tmpdir.dir()));  // gone with the blocks
  EXPECT_TRUE(std::filesystem::is_empty(tmpdir.dir()));
}

// A block whose bytes changed on disk is refused, never read back wrong: the codecs trust what
// comes back (zstd's checksum guards it).
TEST(TempBlocks, ABlockChangedOnDiskIsRefused) {
  FreshTmpdir tmpdir;
  TempBlocks blocks("the test's blocks");
  // The second block random: zstd stores it as it is, where only the checksum sees a change.
  const std::vector<char> first = pattern(20000, 4);
  std::vector<char> second(30000);
  std::mt19937 rng(7);
  for (char& c : second) c = static_cast<char>(rng());
  blocks.put(first.data(), first.size());
  blocks.put(second.data(), second.size());
  const int fd = file_open_in(tmpdir.dir());  // the blocks' file
  ASSERT_GE(fd, 0);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  ASSERT_GT(size, 40);
  char byte = 0;  // one byte of the second block flipped
  ASSERT_EQ(::pread(fd, &byte, 1, size - 20), 1);
  byte = static_cast<char>(byte ^ 0x10);
  ASSERT_EQ(::pwrite(fd, &byte, 1, size - 20), 1);
  std::vector<char> got(blocks.raw_bytes(0));
  blocks.get(0, got.data());
  EXPECT_EQ(got, first);
  got.resize(blocks.raw_bytes(1));
  EXPECT_THROW(blocks.get(1, got.data()), EnvironmentError);
}

TEST(TempBlocks, ATmpdirThatCannotTakeThemIsNamed) {
  Tmpdir tmpdir("/nonexistent/tasklens");
  TempBlocks blocks("the test's blocks");
  const std::vector<char> block = pattern(100, 2);
  try {
    blocks.put(block.data(), block.size());
    ADD_FAILURE() << "a block was written to a directory that does not exist";
  } catch (const EnvironmentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/nonexistent/tasklens"), std::string::npos) << what;
    EXPECT_NE(what.find("TMPDIR"), std::string::npos) << what;
  }
}

// A disk that fills up while a block is written: the error says why (a file size limit stands
// for the full disk here), not "Success" from a short write.
TEST(TempBlocks, RunningOutOfRoomSaysWhy) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64 * 1024, 64 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    TempBlocks blocks("the test's blocks", false);
    const std::vector<char> block = pattern(100 * 1024, 3);
    try {
      blocks.put(block.data(), block.size());
    } catch (const EnvironmentError& e) {
      const std::string what = e.what();
      _exit(what.find("File too large") != std::string::npos &&
                    what.find("the test's blocks") != std::string::npos
                ? 0
                : 1);
    }
    _exit(2);  // written past the limit
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the message does not say why; 2: no error";
}

}  // namespace
}  // namespace tasklens::analysis
