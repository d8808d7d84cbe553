#include "symbols/symbolizer.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tasklens::symbols {
namespace {

// The module map of this very process, built the way the recorder builds it at exit.
std::vector<Module> OwnModules() {
  std::vector<Module> modules;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        Module module;
        module.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (module.path.empty()) {  // the main executable
          char exe[4096];
          const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
          if (n > 0) module.path.assign(exe, static_cast<size_t>(n));
        }
        module.base = info->dlpi_addr;
        bool executable = false;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
          if (phdr.p_type != PT_LOAD || (phdr.p_flags & PF_X) == 0) continue;
          const uint64_t begin = module.base + phdr.p_vaddr;
          const uint64_t end = begin + phdr.p_memsz;
          module.begin = executable ? std::min(module.begin, begin) : begin;
          module.end = executable ? std::max(module.end, end) : end;
          executable = true;
        }
        if (executable) static_cast<std::vector<Module>*>(data)->push_back(module);
        return 0;
      },
      &modules);
  return modules;
}

std::string OwnExecutable() {
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  return n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
}

bool Addr2lineInstalled() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (access((dir + "/addr2line").c_str(), X_OK) == 0) return true;
  }
  return false;
}

#define REQUIRE_ADDR2LINE() \
  if (!Addr2lineInstalled()) GTEST_SKIP() << "addr2line is not installed"

// Returns the address its call returns to, as OMPT's codeptr_ra would be.
[[gnu::noinline]] uint64_t ReturnAddress() {
  asm volatile("");  // keeps the function a real call site
  return reinterpret_cast<uint64_t>(__builtin_return_address(0));
}

struct CallSite {
  uint64_t address;
  unsigned line;
};

// The call and __LINE__ share one line, so the recorded line is the call's line.
[[gnu::noinline]] CallSite CallFromKnownLine() {
  const CallSite site{ReturnAddress(), static_cast<unsigned>(__LINE__)};
  // An opaque use after the call: clang, having propagated the constant line into the callers,
  // otherwise turns the call into a tail jump and the return address lands in our caller.
  asm volatile("" : : "g"(&site) : "memory");
  return site;
}

void ExpectEmpty(const Location& location) {
  EXPECT_TRUE(location.file.empty()) << location.file;
  EXPECT_EQ(location.line, 0u);
  EXPECT_TRUE(location.function.empty()) << location.function;
  EXPECT_TRUE(location.module.empty()) << location.module;
  EXPECT_FALSE(location.in_runtime);
  EXPECT_FALSE(location.known());
}

TEST(SymbolizerTest, ResolvesCallSiteInThisFile) {
  REQUIRE_ADDR2LINE();
  const CallSite site = CallFromKnownLine();
  const Symbolizer symbolizer(OwnModules());
  const std::vector<Location> locations = symbolizer.resolve({site.address});
  ASSERT_EQ(locations.size(), 1u);
  const Location& location = locations[0];
  EXPECT_TRUE(location.file.ends_with("symbolizer_test.cpp")) << location.file;
  EXPECT_EQ(location.line, site.line);
  EXPECT_NE(location.function.find("CallFromKnownLine"), std::string::npos) << location.function;
  EXPECT_EQ(location.module, OwnExecutable());
  EXPECT_FALSE(location.in_runtime);
  EXPECT_TRUE(location.known());
}

uint64_t LibcPrintf() {
  // Through libc's own handle: in a non-PIE executable &printf could be a PLT stub in the
  // executable rather than libc's code.
  void* libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  void* printf_address = libc != nullptr ? dlsym(libc, "printf") : nullptr;
  if (libc != nullptr) dlclose(libc);
  return reinterpret_cast<uint64_t>(printf_address);
}

TEST(SymbolizerTest, AddressInLibcNamesLibcModule) {
  const uint64_t printf_address = LibcPrintf();
  ASSERT_NE(printf_address, 0u);
  const Symbolizer symbolizer(OwnModules());
  // +1: resolve() takes return addresses and looks at the byte before.
  const std::vector<Location> locations = symbolizer.resolve({printf_address + 1});
  ASSERT_EQ(locations.size(), 1u);
  EXPECT_NE(locations[0].module.find("libc"), std::string::npos) << locations[0].module;
  EXPECT_FALSE(locations[0].in_runtime);
  // libc may come without debug info; when it has symbols, the name is printf's (or an alias).
  if (!locations[0].function.empty()) {
    EXPECT_NE(locations[0].function.find("printf"), std::string::npos) << locations[0].function;
  }
}

TEST(SymbolizerTest, AddressOutsideAllModulesIsEmpty) {
  const Symbolizer symbolizer(OwnModules());
  const std::vector<Location> locations = symbolizer.resolve({0, 1, 0xffffffffffff0000ull});
  ASSERT_EQ(locations.size(), 3u);
  for (const Location& location : locations) ExpectEmpty(location);
}

TEST(SymbolizerTest, EmptyInputAndNoModules) {
  EXPECT_TRUE(Symbolizer(OwnModules()).resolve({}).empty());
  const std::vector<Location> locations = Symbolizer({}).resolve({0x401000});
  ASSERT_EQ(locations.size(), 1u);
  ExpectEmpty(locations[0]);
}

TEST(SymbolizerTest, DuplicatesAreLookedUpOnceAndKeepInputOrder) {
  REQUIRE_ADDR2LINE();
  const CallSite site = CallFromKnownLine();
  const uint64_t in_libc = LibcPrintf() + 1;
  const std::vector<uint64_t> input = {site.address, in_libc, site.address, 0,
                                       site.address, in_libc};
  ResolveStats stats;
  const std::vector<Location> locations = Symbolizer(OwnModules()).resolve(input, &stats);
  ASSERT_EQ(locations.size(), input.size());
  EXPECT_EQ(stats.distinct, 3u);
  EXPECT_EQ(stats.looked_up, 2u);  // 0 is in no module
  EXPECT_EQ(stats.processes, 2u);  // the executable and libc
  for (size_t i : {2u, 4u}) {
    EXPECT_EQ(locations[i].file, locations[0].file);
    EXPECT_EQ(locations[i].line, locations[0].line);
    EXPECT_EQ(locations[i].function, locations[0].function);
    EXPECT_EQ(locations[i].module, locations[0].module);
  }
  EXPECT_EQ(locations[0].line, site.line);
  EXPECT_EQ(locations[5].module, locations[1].module);
  EXPECT_EQ(locations[5].function, locations[1].function);
  EXPECT_NE(locations[1].module.find("libc"), std::string::npos);
  ExpectEmpty(locations[3]);
}

// A reading that meets its sites one at a time (one pass) asks the same Symbolizer again and
// again: its addr2line processes stay up, so later calls start none and answer the same, even
// after a call whose addresses had no answer (the sentinel that ends each query is not an
// answer of the next).
TEST(SymbolizerTest, LaterCallsAskTheSameProcesses) {
  REQUIRE_ADDR2LINE();
  const CallSite site = CallFromKnownLine();
  const Symbolizer symbolizer(OwnModules());
  ResolveStats first, later;
  const std::vector<Location> once = symbolizer.resolve({site.address}, &first);
  EXPECT_EQ(first.processes, 1u);
  for (int i = 0; i < 3; ++i) {
    const uint64_t no_code = OwnModules()[0].begin + 1;  // the segment's start: no call there
    symbolizer.resolve({no_code}, &later);
    const std::vector<Location> again = symbolizer.resolve({site.address, site.address}, &later);
    EXPECT_EQ(later.processes, 0u);
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[1].line, site.line);
    EXPECT_EQ(again[0].file, once[0].file);
    EXPECT_EQ(again[0].function, once[0].function);
  }
}

TEST(SymbolizerTest, RuntimeModuleIsFlaggedEvenWithoutItsFile) {
  const Module libomp{"/x/libomp.so.5", 0x7f0000000000, 0x7f0000001000, 0x7f0000002000};
  ResolveStats stats;
  const std::vector<Location> locations =
      Symbolizer({libomp}).resolve({0x7f0000001500, 0x7f0000002000, 0x7f0000002001}, &stats);
  ASSERT_EQ(locations.size(), 3u);
  EXPECT_TRUE(locations[0].in_runtime);
  EXPECT_EQ(locations[0].module, "/x/libomp.so.5");
  EXPECT_FALSE(locations[0].known());
  EXPECT_TRUE(locations[0].file.empty());
  // A return address exactly at `end` still belongs to the module (the call is the byte before);
  // one byte further is outside.
  EXPECT_TRUE(locations[1].in_runtime);
  EXPECT_EQ(locations[1].module, "/x/libomp.so.5");
  ExpectEmpty(locations[2]);
  EXPECT_EQ(stats.looked_up, 0u);  // no file, nothing for addr2line
  EXPECT_EQ(stats.processes, 0u);
}

TEST(SymbolizerTest, RuntimeModuleNames) {
  EXPECT_TRUE(Symbolizer::is_runtime_module("/usr/lib/llvm-14/lib/libomp.so.5"));
  EXPECT_TRUE(Symbolizer::is_runtime_module("/usr/lib/x86_64-linux-gnu/libgomp.so.1"));
  EXPECT_TRUE(Symbolizer::is_runtime_module("/opt/intel/lib/libiomp5.so"));
  EXPECT_TRUE(Symbolizer::is_runtime_module("/usr/lib/libtbb.so.12"));
  EXPECT_TRUE(Symbolizer::is_runtime_module("libomp.so"));
  EXPECT_FALSE(Symbolizer::is_runtime_module("/usr/lib/libc.so.6"));
  EXPECT_FALSE(Symbolizer::is_runtime_module("/home/u/libomp/app"));  // only the file name counts
  EXPECT_FALSE(Symbolizer::is_runtime_module("/usr/lib/mylibomp.so"));
  EXPECT_FALSE(Symbolizer::is_runtime_module(""));
}

TEST(SymbolizerTest, NonexistentModuleGivesUnknownLocations) {
  const Module missing{"/nonexistent dir/with spaces/libfoo.so", 0x10000, 0x11000, 0x12000};
  std::vector<Location> locations;
  ASSERT_NO_THROW(locations = Symbolizer({missing}).resolve({0x11100, 0x11200, 0x11100}));
  ASSERT_EQ(locations.size(), 3u);
  for (const Location& location : locations) {
    EXPECT_EQ(location.module, missing.path);
    EXPECT_FALSE(location.known());
    EXPECT_TRUE(location.file.empty());
    EXPECT_FALSE(location.in_runtime);
  }
}

// A trace read elsewhere (or damaged) may name a FIFO, a device or a directory as a module:
// none can hold symbols, and each cost an addr2line process that refused it. Only regular files
// are looked up.
TEST(SymbolizerTest, ModulesThatAreNotFilesAreNotOpened) {
  char dir[] = "/tmp/tasklens_symbolizer_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<Module> modules = {{fifo, 0x10000, 0x11000, 0x12000},
                                       {"/dev/zero", 0x20000, 0x21000, 0x22000},
                                       {dir, 0x30000, 0x31000, 0x32000}};
  ResolveStats stats;
  const std::vector<Location> locations =
      Symbolizer(modules).resolve({0x11100, 0x21100, 0x31100}, &stats);
  ASSERT_EQ(locations.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(locations[i].module, modules[i].path);
    EXPECT_FALSE(locations[i].known());
  }
  EXPECT_EQ(stats.processes, 0u);
  unlink(fifo.c_str());
  rmdir(dir);
}

TEST(SymbolizerTest, MissingAddr2lineLeavesOnlyModules) {
  const CallSite site = CallFromKnownLine();
  const char* saved = std::getenv("PATH");
  const std::optional<std::string> old_path =
      saved ? std::optional<std::string>(saved) : std::nullopt;
  setenv("PATH", "/nonexistent-tasklens-path", 1);
  ResolveStats stats;
  const std::vector<Location> locations = Symbolizer(OwnModules()).resolve({site.address}, &stats);
  if (old_path) {
    setenv("PATH", old_path->c_str(), 1);
  } else {
    unsetenv("PATH");
  }
  ASSERT_EQ(locations.size(), 1u);
  EXPECT_EQ(locations[0].module, OwnExecutable());
  EXPECT_FALSE(locations[0].known());
  EXPECT_EQ(stats.processes, 0u);
}

// Enough addresses that addr2line's answers overflow a pipe buffer many times over: resolve()
// must read while it writes, or this test hangs.
TEST(SymbolizerTest, ManyAddressesInOneModule) {
  REQUIRE_ADDR2LINE();
  const std::vector<Module> modules = OwnModules();
  const std::string exe = OwnExecutable();
  const Module* main_module = nullptr;
  for (const Module& module : modules) {
    if (module.path == exe) main_module = &module;
  }
  ASSERT_NE(main_module, nullptr);
  constexpr size_t kCount = 20000;
  const uint64_t step = std::max<uint64_t>(1, (main_module->end - main_module->begin) / kCount);
  std::vector<uint64_t> addresses;
  for (uint64_t a = main_module->begin + 1; a <= main_module->end && addresses.size() < kCount;
       a += step) {
    addresses.push_back(a);
  }
  ResolveStats stats;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<Location> locations = Symbolizer(modules).resolve(addresses, &stats);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("us_per_address", std::to_string(seconds * 1e6 / addresses.size()));
  ASSERT_EQ(locations.size(), addresses.size());
  EXPECT_EQ(stats.looked_up, addresses.size());
  // binutils' addr2line, and LLVM's for the answers inlined from library headers (gtest's and
  // the C++ library's code is in this executable).
  EXPECT_GE(stats.processes, 1u);
  EXPECT_LE(stats.processes, 2u);
  size_t known = 0;
  for (const Location& location : locations) known += location.known() ? 1 : 0;
  // The executable keeps its symbol table: nearly every code byte belongs to a named function.
  EXPECT_GT(known, addresses.size() * 9 / 10);
}

// addr2line prints a source path as it is: a directory named with a newline splits the answer's
// file line in two, or more. The parts are put back together, and the next answer still
// parses.
TEST(Addr2lineOutputTest, SourcePathsWithNewlinesArePutBackTogether) {
  const std::string output =
      "0x0000000000001155\n"
      "work\n"
      "/src/odd\nname/t.c:12\n"
      "0x0000000000001160\n"
      "inner\n"
      "/a\nb\nc:5/u.c:7 (discriminator 2)\n"
      "outer\n"
      "/src/v.c:3\n"
      "0x0000000000001170\n"
      "next\n"
      "/src/w.c:9\n"
      // A malformed answer (a file line that never ends in :N) does not swallow the next one.
      "0x0000000000001180\n"
      "broken\n"
      "/src/no-line-number\n"
      "0x0000000000001190\n"
      "after\n"
      "/src/x.c:1\n";
  const std::vector<Location> locations = detail::parse_addr2line_output(output, 5);
  ASSERT_EQ(locations.size(), 5u);
  EXPECT_EQ(locations[0].function, "work");
  EXPECT_EQ(locations[0].file, "/src/odd\nname/t.c");
  EXPECT_EQ(locations[0].line, 12u);
  EXPECT_EQ(locations[1].function, "inner");
  EXPECT_EQ(locations[1].file, "/a\nb\nc:5/u.c");
  EXPECT_EQ(locations[1].line, 7u);
  EXPECT_EQ(locations[2].function, "next");
  EXPECT_EQ(locations[2].file, "/src/w.c");
  EXPECT_EQ(locations[2].line, 9u);
  EXPECT_EQ(locations[3].function, "broken");
  EXPECT_EQ(locations[3].line, 0u);
  EXPECT_EQ(locations[4].function, "after");
  EXPECT_EQ(locations[4].file, "/src/x.c");
  EXPECT_EQ(locations[4].line, 1u);
}

TEST(Addr2lineOutputTest, ParsesFramesUnknownsAndDiscriminators) {
  const std::string output =
      "0x0000000000001155\n"
      "helper(int)\n"
      "/src/dir:with:colons/t.c:4 (discriminator 3)\n"
      "main\n"
      "/src/t.c:9\n"
      "0x0000000000000001\n"
      "??\n"
      "??:0\n"
      "0x0000000000002000\n"
      "frobnicate\n"
      "??:?\n"
      "0x0000000000003000\n"
      "??\n"
      "/src/u.c:?\n";
  const std::vector<Location> locations = detail::parse_addr2line_output(output, 5);
  ASSERT_EQ(locations.size(), 5u);
  // The innermost (inlined) frame wins.
  EXPECT_EQ(locations[0].function, "helper(int)");
  EXPECT_EQ(locations[0].file, "/src/dir:with:colons/t.c");
  EXPECT_EQ(locations[0].line, 4u);
  EXPECT_FALSE(locations[1].known());
  EXPECT_TRUE(locations[1].file.empty());
  EXPECT_TRUE(locations[1].function.empty());
  EXPECT_EQ(locations[2].function, "frobnicate");
  EXPECT_TRUE(locations[2].file.empty());
  EXPECT_EQ(locations[2].line, 0u);
  EXPECT_TRUE(locations[3].function.empty());
  EXPECT_EQ(locations[3].file, "/src/u.c");
  EXPECT_EQ(locations[3].line, 0u);
  // Truncated output (addr2line died): the missing answer stays empty.
  EXPECT_FALSE(locations[4].known());
  EXPECT_TRUE(locations[4].file.empty());
}

}  // namespace
}  // namespace tasklens::symbols
