// src/platform/elf.cpp and src/launch/runtime_compat.hpp: the ELF reader that finds what a program
// links and imports, PATH lookup as execvp does it, and the verdicts on GCC-built programs.
#include "launch/runtime_compat.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace tasklens::launch {
namespace {

using platform::ElfDynamic;
using platform::find_command;
using platform::read_elf_dynamic;

namespace fs = std::filesystem;

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "tasklens-compat-XXXXXX").string();
    if (mkdtemp(t.data())) dir_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  std::string file(const std::string& name, const std::string& bytes, bool executable = false) {
    const std::string p = dir_ + "/" + name;
    std::ofstream(p, std::ios::binary) << bytes;
    if (executable) chmod(p.c_str(), 0755);
    return p;
  }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
};

std::string self_bytes() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ReadElfDynamic, FindsWhatThisTestLinksAndImports) {
  const ElfDynamic info = read_elf_dynamic("/proc/self/exe");
  ASSERT_TRUE(info.elf);
  EXPECT_TRUE(has(info.needed, "libc.so.6"));
  EXPECT_TRUE(has(info.undefined, "getenv") || has(info.undefined, "malloc"));
  EXPECT_FALSE(has(info.undefined, ""));
  EXPECT_FALSE(has(info.undefined, "omp_fulfill_event"));
}

TEST(ReadElfDynamic, AnythingElseIsNotElfAndNeverACrash) {
  TempDir d;
  ASSERT_FALSE(d.path().empty());
  EXPECT_FALSE(read_elf_dynamic(d.file("script", "#!/bin/sh\necho hi\n")).elf);
  EXPECT_FALSE(read_elf_dynamic(d.file("empty", "")).elf);
  EXPECT_FALSE(read_elf_dynamic(d.path() + "/missing").elf);
  EXPECT_FALSE(read_elf_dynamic(d.path()).elf);  // a directory
  const std::string self = self_bytes();
  ASSERT_GT(self.size(), 4096u);
  // Cut anywhere: the header alone, half the file (the section table is at the end).
  EXPECT_FALSE(read_elf_dynamic(d.file("head", self.substr(0, 64))).elf);
  EXPECT_FALSE(read_elf_dynamic(d.file("half", self.substr(0, self.size() / 2))).elf);
  // Every section's offsets pointing outside the file, and string offsets garbled: read as
  // far as it goes, without a crash.
  std::string damaged = self;
  for (size_t i = self.size() / 2; i < self.size(); i += 7) damaged[i] = char(0xff);
  (void)read_elf_dynamic(d.file("damaged", damaged));
}

TEST(FindCommand, SearchesPathLikeExecvp) {
  TempDir d;
  d.file("tool", "#!/bin/sh\n", true);
  d.file("plain", "not executable");
  EXPECT_EQ(find_command("./anything", ""), "./anything");
  EXPECT_EQ(find_command("/bin/true", "/nowhere"), "/bin/true");
  EXPECT_EQ(find_command("tool", "/nowhere:" + d.path()), d.path() + "/tool");
  EXPECT_EQ(find_command("plain", d.path()), "");
  EXPECT_EQ(find_command("no-such-program-here", "/nowhere:" + d.path()), "");
  EXPECT_EQ(find_command("", d.path()), "");
  // An empty entry is the current directory.
  const fs::path cwd = fs::current_path();
  fs::current_path(d.path());
  EXPECT_EQ(find_command("tool", "/nowhere::/else"), "./tool");
  fs::current_path(cwd);
}

TEST(GompIncompatibility, OnlyAGccProgramWithDetachedTasks) {
  ElfDynamic gcc_detach;
  gcc_detach.elf = true;
  gcc_detach.needed = {"libgomp.so.1", "libc.so.6"};
  gcc_detach.undefined = {"GOMP_task", "omp_fulfill_event"};
  const std::string why = gomp_incompatibility("./prog", gcc_detach);
  EXPECT_NE(why.find("./prog"), std::string::npos) << why;
  EXPECT_NE(why.find("detach"), std::string::npos) << why;
  EXPECT_NE(why.find("clang"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;

  ElfDynamic gcc_plain = gcc_detach;
  gcc_plain.undefined = {"GOMP_task"};
  EXPECT_EQ(gomp_incompatibility("./prog", gcc_plain), "");
  ElfDynamic clang_detach = gcc_detach;
  clang_detach.needed = {"libomp.so.5", "libc.so.6"};
  EXPECT_EQ(gomp_incompatibility("./prog", clang_detach), "");
}

TEST(GompCrashNote, OnlyForACrashOfAGccProgram) {
  EXPECT_NE(gomp_crash_note(SIGSEGV, true).find("clang"), std::string::npos);
  EXPECT_NE(gomp_crash_note(SIGABRT, true), "");
  EXPECT_EQ(gomp_crash_note(SIGSEGV, false), "");
  EXPECT_EQ(gomp_crash_note(SIGTERM, true), "");
  EXPECT_EQ(gomp_crash_note(SIGKILL, true), "");
  EXPECT_EQ(gomp_crash_note(0, true), "");
}

}  // namespace
}  // namespace tasklens::launch
