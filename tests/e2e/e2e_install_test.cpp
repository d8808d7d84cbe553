// End-to-end tests of the install (cmake/install.cmake): `cmake --install` into a temporary
// prefix gives a tasklens that records and reports from any directory with its own recorder and
// OpenMP runtime, find_package(tasklens) gives the annotation header to a consumer project, the
// man page and the completion are there, and `cpack -G DEB` makes a package whose files work
// wherever they are unpacked.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

namespace fs = std::filesystem;

// Only the system's tools: nothing of the build tree on PATH or LD_LIBRARY_PATH.
EnvOverrides clean_env() {
  EnvOverrides env = default_env();
  env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  env["LD_LIBRARY_PATH"] = std::nullopt;
  env["TASKLENS_RECORDER"] = std::nullopt;
  return env;
}

std::string build_dir() { return TASKLENS_BUILD_DIR; }

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class Install : public E2E {
 protected:
  // Runs `cmd` in `dir` through the shell, with the clean environment.
  RunResult sh(const std::string& dir, const std::string& cmd) {
    return run({"/bin/sh", "-c", "cd '" + dir + "' && " + cmd}, clean_env());
  }
  // The installed tasklens records fib from another directory and reports it; what it preloads
  // into the program is its own (under `prefix`), not the build tree's.
  void expect_working(const std::string& prefix) {
    const std::string work = path("elsewhere");
    fs::create_directories(work);
    const std::string tl = prefix + "/bin/tasklens";
    RunResult rec = sh(work, "'" + tl + "' record -- '" + example("fib", "clang") + "' 10 100");
    ASSERT_TRUE(rec.exited(0)) << rec.describe();
    EXPECT_NE(rec.err.find("tasklens.data"), std::string::npos) << rec.err;
    RunResult rep = sh(work, "'" + tl + "' report --format json");
    ASSERT_TRUE(rep.exited(0)) << rep.describe();
    json j = json::parse(rep.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << rep.out;
    EXPECT_EQ(j["tasks"], 176) << "fib(10): 2 F(11) - 2 tasks";
    // The libraries mapped into a recorded program (the recorder takes itself out of the
    // program's environment, so /proc's maps are where to look).
    RunResult env =
        sh(work, "'" + tl +
                     "' record -o env.tlens -- /bin/sh -c 'grep -o \"/[^ ]*[.]so[.0-9]*\" "
                     "/proc/$$/maps | sort -u'");
    ASSERT_TRUE(env.exited(0)) << env.describe();
    EXPECT_NE(env.out.find(prefix + "/lib/tasklens/libtasklens_recorder.so"), std::string::npos)
        << env.out;
    EXPECT_NE(env.out.find(prefix + "/lib/tasklens/libomp.so.5"), std::string::npos) << env.out;
    EXPECT_EQ(env.out.find(build_dir()), std::string::npos) << env.out;
  }
};

TEST_F(Install, AnInstalledTasklensWorksFromAnyDirectory) {
  const std::string prefix = path("prefix");
  RunResult inst = run({TASKLENS_CMAKE, "--install", build_dir(), "--prefix", prefix}, clean_env());
  ASSERT_TRUE(inst.exited(0)) << inst.describe();
  expect_working(prefix);
  // The man page and the completion, from the commands' help.
  const std::string man = slurp(prefix + "/share/man/man1/tasklens.1");
  EXPECT_NE(man.find(".TH TASKLENS 1"), std::string::npos);
  for (const char* cmd : {"record", "report", "whatif", "view"})
    EXPECT_NE(man.find(std::string(".SS ") + cmd), std::string::npos) << cmd;
  EXPECT_NE(man.find("--metric"), std::string::npos);
  const std::string completion = slurp(prefix + "/share/bash-completion/completions/tasklens");
  EXPECT_NE(completion.find("complete -o filenames -F _tasklens tasklens"), std::string::npos);
  EXPECT_NE(completion.find("record) options=\""), std::string::npos) << completion;
  EXPECT_NE(completion.find("--compression"), std::string::npos) << completion;
  // bash loads it and completes a command and an option.
  RunResult bash = run({"/bin/bash", "-c",
                        "source '" + prefix +
                            "/share/bash-completion/completions/tasklens'; COMP_WORDS=(tasklens "
                            "rep); COMP_CWORD=1; _tasklens; echo ${COMPREPLY[@]}; "
                            "COMP_WORDS=(tasklens record --comp); COMP_CWORD=2; _tasklens; "
                            "echo ${COMPREPLY[@]}"},
                       clean_env());
  ASSERT_TRUE(bash.exited(0)) << bash.describe();
  EXPECT_EQ(bash.out, "report\n--compression\n");
}

// A consumer project: find_package(tasklens) and the annotation header.
TEST_F(Install, FindPackageGivesTheAnnotationHeader) {
  const std::string prefix = path("prefix");
  RunResult inst = run({TASKLENS_CMAKE, "--install", build_dir(), "--prefix", prefix}, clean_env());
  ASSERT_TRUE(inst.exited(0)) << inst.describe();
  const std::string src = path("consumer"), bin = path("consumer-build");
  fs::create_directories(src);
  std::ofstream(src + "/CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.20)\n"
         "project(consumer C)\n"
         "find_package(tasklens 0.1 REQUIRED)\n"
         "add_executable(app app.c)\n"
         "target_link_libraries(app PRIVATE tasklens::headers)\n";
  std::ofstream(src + "/app.c") << "#include <stdio.h>\n#include <tasklens/tasklens.h>\n"
                                   "int main(void) {\n  TASKLENS_REGION_BEGIN(\"setup\");\n"
                                   "  puts(\"consumer\");\n  TASKLENS_REGION_END(\"setup\");\n"
                                   "  return 0;\n}\n";
  RunResult conf =
      run({TASKLENS_CMAKE, "-S", src, "-B", bin, "-DCMAKE_PREFIX_PATH=" + prefix}, clean_env());
  ASSERT_TRUE(conf.exited(0)) << conf.describe();
  RunResult build = run({TASKLENS_CMAKE, "--build", bin}, clean_env());
  ASSERT_TRUE(build.exited(0)) << build.describe();
  RunResult app = run({bin + "/app"}, clean_env());
  ASSERT_TRUE(app.exited(0)) << app.describe();
  EXPECT_EQ(app.out, "consumer\n");
}

// `cpack -G DEB`: the package holds the command, the recorder, the runtime, the header, the
// man page and the completion, depends on what they need, and its files work where unpacked.
TEST_F(Install, TheDebianPackageHoldsAWorkingTasklens) {
  const std::string out = path("deb");
  fs::create_directories(out);
  RunResult pack =
      run({TASKLENS_CPACK, "-G", "DEB", "--config", build_dir() + "/CPackConfig.cmake", "-B", out},
          clean_env());
  ASSERT_TRUE(pack.exited(0)) << pack.describe();
  std::string deb;
  for (const auto& e : fs::directory_iterator(out))
    if (e.path().extension() == ".deb") deb = e.path().string();
  ASSERT_FALSE(deb.empty()) << pack.out;
  RunResult contents = run({"/usr/bin/dpkg-deb", "-c", deb}, clean_env());
  ASSERT_TRUE(contents.exited(0)) << contents.describe();
  for (const char* f :
       {"./usr/bin/tasklens", "./usr/lib/tasklens/libtasklens_recorder.so",
        "./usr/lib/tasklens/libomp.so.5", "./usr/include/tasklens/tasklens.h",
        "./usr/share/man/man1/tasklens.1", "./usr/share/bash-completion/completions/tasklens"})
    EXPECT_NE(contents.out.find(f), std::string::npos) << f << " not in\n" << contents.out;
  RunResult info = run({"/usr/bin/dpkg-deb", "-f", deb, "Depends"}, clean_env());
  EXPECT_NE(info.out.find("binutils"), std::string::npos) << info.out;
  const std::string root = path("unpacked");
  RunResult x = run({"/usr/bin/dpkg-deb", "-x", deb, root}, clean_env());
  ASSERT_TRUE(x.exited(0)) << x.describe();
  expect_working(root + "/usr");
}

}  // namespace
}  // namespace tasklens::e2e
