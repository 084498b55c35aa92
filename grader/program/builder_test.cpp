// The build's defences that need no compiler: which included files a
// submission may use, and which host assembly it may not hold; and the build
// cache's entries, made once.
#include "builder.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <thread>

#include "builder_steps.hpp"
#include "text.hpp"

namespace grader {
namespace {

TEST(DependencyRule, ReadsEveryFileAfterTheTarget) {
  const auto files =
      parse_dependency_rule("kernel.o : /w/src/kernel.cu \\\n    /usr/include/stdio.h \\\n    /w/src/lab/lab.cuh\n");
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0], "/w/src/kernel.cu");
  EXPECT_EQ(files[2], "/w/src/lab/lab.cuh");
}

TEST(DependencyRule, KeepsEscapedSpacesInANameAndAcceptsAGluedColon) {
  const auto files = parse_dependency_rule("k.o: /a\\ b/x.h /c.h");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], "/a b/x.h");
}

TEST(ForeignIncludes, TheStagedFilesAndSystemHeadersAreAllowed) {
  EXPECT_EQ(
      foreign_includes({"/w/src/kernel.cu", "/w/src/lab/lab.cuh", "/usr/include/stdio.h"}, {"/w/src", "/usr/include"}),
      "");
}

TEST(ForeignIncludes, ASolutionOrAnyOtherFileIsRefusedWithoutQuotingIt) {
  const std::string why =
      foreign_includes({"/w/src/kernel.cu", "/course/solutions/lab07/kernel.cu"}, {"/w/src", "/usr/include"});
  EXPECT_NE(why.find("kernel.cu"), std::string::npos);
  EXPECT_EQ(why.find("/course"), std::string::npos) << "the message names the file, not where it lives";
}

TEST(ForeignIncludes, APrefixThatIsNotAFolderDoesNotCount) {
  EXPECT_NE(foreign_includes({"/w/src-evil/x.h"}, {"/w/src"}), "");
}

TEST(ForeignIncludes, DotDotCannotClimbOutOfAnAllowedFolder) {
  EXPECT_NE(foreign_includes({"/w/src/../../etc/passwd"}, {"/w/src"}), "");
}

// The include rule for libraries, on nvcc -M lists as CUDA 13.0 writes them
// (cub and thrust under include/cccl/, the others beside cuda_runtime.h).
const std::vector<std::filesystem::path> kHeaderRoots = {"/cuda", "/usr/include"};
const std::filesystem::path kStaged = "/w/src";

TEST(LibraryIncludes, TheRuntimeCooperativeGroupsLibcuxxAndNvtxAreAllowed) {
  EXPECT_EQ(library_includes({"/w/src/kernel.cu", "/w/src/lab/lab.cuh", "/cuda/include/cuda_runtime.h",
                              "/cuda/include/cooperative_groups.h", "/cuda/include/cooperative_groups/reduce.h",
                              "/cuda/include/cccl/cuda/barrier", "/cuda/include/cccl/cuda/pipeline",
                              "/cuda/include/cccl/cuda/std/atomic", "/cuda/include/cccl/nv/target",
                              "/cuda/include/nvtx3/nvToolsExt.h", "/cuda/include/mma.h", "/usr/include/stdio.h"},
                             kHeaderRoots, kStaged, "#include <cooperative_groups.h>\n"),
            "");
}

TEST(LibraryIncludes, CubThrustAndTheLibrariesWithAnApiAreRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/cuda/include/cccl/cub/cub.cuh", "cub/cub.cuh (CUB)"},
      {"/cuda/include/cub/device/device_reduce.cuh", "cub/device/device_reduce.cuh (CUB)"},  // before CCCL moved
      {"/cuda/include/cccl/thrust/reduce.h", "thrust/reduce.h (Thrust)"},
      {"/cuda/include/cublas_v2.h", "cublas_v2.h (cuBLAS)"},
      {"/cuda/include/cublasLt.h", "cublasLt.h (cuBLASLt)"},
      {"/cuda/include/cusparse.h", "cusparse.h (cuSPARSE)"},
      {"/cuda/include/cufftXt.h", "cufftXt.h (cuFFT)"},
      {"/cuda/include/curand_kernel.h", "curand_kernel.h (cuRAND)"},
      {"/cuda/include/cusolverDn.h", "cusolverDn.h (cuSOLVER)"},
      {"/cuda/include/nppi_arithmetic_and_logical_operations.h", "nppi_arithmetic_and_logical_operations.h (NPP)"},
      {"/cuda/include/nvblas.h", "nvblas.h (nvBLAS)"},
      {"/cuda/include/cudnn.h", "cudnn.h (cuDNN)"},
      {"/usr/include/cutlass/gemm/device/gemm.h", "cutlass/gemm/device/gemm.h (CUTLASS)"},
      {"/usr/include/cute/tensor.hpp", "cute/tensor.hpp (CUTLASS)"},
      {"/cuda/include/cublasdx.hpp", "cublasdx.hpp (cuBLASDx)"},
  };
  for (const auto& [file, named] : cases) {
    const std::string why = library_includes({"/w/src/kernel.cu", file}, kHeaderRoots, kStaged, "");
    EXPECT_NE(why.find("kernel.cu includes " + named + ":"), std::string::npos) << file << ": " << why;
    EXPECT_NE(why.find("your own kernels do the lab's work"), std::string::npos) << why;
    EXPECT_NE(why.find("timed by the grader beside yours"), std::string::npos) << why;
  }
}

TEST(LibraryIncludes, TheHeadersKernelCuNamesAreNamedNotTheirInsides) {
  const std::vector<std::string> read = {"/w/src/kernel.cu",
                                         "/cuda/include/cccl/thrust/execution_policy.h",
                                         "/cuda/include/cccl/thrust/detail/config.h",
                                         "/cuda/include/cccl/cub/util_debug.cuh",
                                         "/cuda/include/cccl/thrust/inner_product.h",
                                         "/w/src/lab/lab.cuh"};
  const std::string why =
      library_includes(read, kHeaderRoots, kStaged,
                       "#include <thrust/execution_policy.h>\n  #  include <thrust/inner_product.h>\n"
                       "#include \"lab.cuh\"\n#include <cub/cub.cuh>  // not read: in #if 0\n");
  EXPECT_NE(why.find("kernel.cu includes thrust/execution_policy.h (Thrust) and thrust/inner_product.h (Thrust):"),
            std::string::npos)
      << why;
  EXPECT_EQ(why.find("util_debug"), std::string::npos) << "read through Thrust, not named by kernel.cu: " << why;
  EXPECT_EQ(why.find("cub/cub.cuh"), std::string::npos) << "named, but never read: " << why;
}

TEST(LibraryIncludes, AHeaderNamedByAMacroOrThroughAnotherIsTheFirstLibraryHeaderRead) {
  const std::string why =
      library_includes({"/w/src/kernel.cu", "/cuda/include/cuda_runtime.h", "/cuda/include/cccl/thrust/reduce.h",
                        "/cuda/include/cccl/cub/util_debug.cuh"},
                       kHeaderRoots, kStaged, "#define LIBRARY(h) <thr##ust/h>\n#include LIBRARY(reduce.h)\n");
  EXPECT_NE(why.find("kernel.cu includes thrust/reduce.h (Thrust):"), std::string::npos) << why;
}

// Whoever reads a library's header, it is refused: an allowed toolkit header
// that pulled one in would hand the library to the submission (none does in
// CUDA 13.0), and a course file named like one is the course's own.
TEST(LibraryIncludes, ReadThroughAnAllowedHeaderStillCountsButTheCoursesOwnFilesDoNot) {
  EXPECT_NE(
      library_includes({"/w/src/kernel.cu", "/cuda/include/cccl/cuda/algorithm", "/cuda/include/cccl/cub/cub.cuh"},
                       kHeaderRoots, kStaged, "#include <cuda/algorithm>\n"),
      "");
  EXPECT_EQ(library_includes({"/w/src/kernel.cu", "/w/src/lab/curand_helpers.cuh", "/w/src/common/cub/x.cuh"},
                             kHeaderRoots, kStaged, "#include \"curand_helpers.cuh\"\n"),
            "");
  EXPECT_EQ(library_includes({"/cub/cuda/include/cuda_runtime.h"}, {"/cub/cuda"}, kStaged, ""), "")
      << "a folder above the include root is not the library's";
}

TEST(LibraryIncludes, AMissingLibraryHeaderIsRefusedByItsName) {
  const auto why = library_of_header("cutlass/gemm/device/gemm.h");
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("kernel.cu includes cutlass/gemm/device/gemm.h (CUTLASS):"), std::string::npos) << *why;
  EXPECT_FALSE(library_of_header("cuda/barrier").has_value());
  EXPECT_FALSE(library_of_header("lab.cuh").has_value());
}

TEST(LibraryCalls, ALibrarysFunctionsAreNamedWithWhyTheProgramDoesNotLinkThem) {
  const std::string why = library_calls({"cublasCreate_v2", "launch_x(float*)", "cublasSgemm_v2"});
  EXPECT_NE(why.find("kernel.cu calls cuBLAS (cublasCreate_v2 and cublasSgemm_v2)"), std::string::npos) << why;
  EXPECT_NE(why.find("does not link"), std::string::npos) << why;
  EXPECT_NE(why.find("your own kernels do the lab's work"), std::string::npos) << why;
  EXPECT_EQ(library_calls({"launch_matmul_static(float*, float const*, float const*, int, int, int, cudaStream_t)"}),
            "")
      << "a launcher kernel.cu forgot is not a library's";
}

TEST(ForbiddenAssembly, OrdinaryCompilerOutputIsClean) {
  EXPECT_EQ(forbidden_assembly("\t.file\t\"kernel.cu\"\n\t.text\n_Z6launchPf:\n\tmovl\t$1, %eax\n\tret\n"
                               "\t.section\t.rodata\n.LC0:\n\t.string\t\"use .include or .incbin\"\n"),
            "");
}

TEST(ForbiddenAssembly, IncbinAndIncludeAreRefused) {
  EXPECT_NE(forbidden_assembly("\t.section .rodata\nleak:\n\t.incbin \"/course/solutions/lab07/kernel.cu\"\n"), "");
  EXPECT_NE(forbidden_assembly("  .include \"/etc/passwd\"\n"), "");
  EXPECT_NE(forbidden_assembly("x: .incbin \"f\"\n"), "");
  EXPECT_NE(forbidden_assembly("nop; .incbin \"f\"\n"), "");
}

TEST(ForbiddenAssembly, DirectivesThatBuildOtherDirectivesAreRefused) {
  EXPECT_NE(forbidden_assembly(".irp x,bin\n.inc\\x \"f\"\n.endr\n"), "");
  EXPECT_NE(forbidden_assembly(".macro m\n.endm\n"), "");
  EXPECT_NE(forbidden_assembly(".rept 1\n.endr\n"), "");
  EXPECT_NE(forbidden_assembly(".altmacro\n"), "");
}

TEST(ForbiddenAssembly, ACommentMentioningADirectiveIsNotOne) {
  EXPECT_EQ(forbidden_assembly("\tnop # .incbin here would be bad\n"), "");
}

// common/'s units compile side by side in one folder: each failing compile
// keeps its own errors (they once shared one log file, and a clean-up erased
// another compile's errors, so "does not build (common)" came with no reason).
TEST(ToolRuns, SideBySideInOneFolderEachKeepsItsOwnErrors) {
  const std::filesystem::path work =
      std::filesystem::temp_directory_path() / ("builder_test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(work);
  std::vector<std::future<std::pair<bool, std::string>>> runs;
  for (int i = 0; i < 8; ++i)
    runs.push_back(std::async(std::launch::async, [&, i] {
      std::string log;
      const bool ok = builder_detail::run_tool(
          {"/bin/sh", "-c",
           "sleep 0.0" + std::to_string(i) + "; echo error in unit " + std::to_string(i) + " >&2; exit 1"},
          work, log, false);
      return std::make_pair(ok, log);
    }));
  for (int i = 0; i < 8; ++i) {
    const auto [ok, log] = runs[i].get();
    EXPECT_FALSE(ok);
    EXPECT_NE(log.find("error in unit " + std::to_string(i)), std::string::npos) << i << ": " << log;
  }
  std::filesystem::remove_all(work);
}

// Two threads of one grader needing the same entry at once (`grader check`'s
// items of one lab) build it once; the second finds it complete.
TEST(CachedBuild, OneEntryNeededTwiceAtOnceIsBuiltOnce) {
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / ("cached_build_test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(cache);
  std::atomic<int> builds{0};
  const auto make = [&](const std::filesystem::path& work, std::string&) {
    ++builds;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ofstream(work / "worker") << "built\n";
    return true;
  };
  auto first = std::async(std::launch::async, [&] { return builder_detail::cached_build(cache, "worker", "k", make); });
  auto second =
      std::async(std::launch::async, [&] { return builder_detail::cached_build(cache, "worker", "k", make); });
  const auto a = first.get(), b = second.get();
  EXPECT_EQ(builds.load(), 1);
  EXPECT_TRUE(a.ok && b.ok);
  EXPECT_NE(a.cached, b.cached) << "one built it, the other found it";
  EXPECT_TRUE(std::filesystem::exists(cache / "worker-k" / "worker"));
  std::filesystem::remove_all(cache);
}

// Two graders (processes) needing the same entry at once build it once: the
// second waits for the first's build and finds it complete.
TEST(CachedBuild, OneEntryNeededByTwoProcessesAtOnceIsBuiltOnce) {
  namespace fs = std::filesystem;
  const fs::path cache = fs::temp_directory_path() / ("cached_build_procs-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  fs::create_directories(cache);
  const fs::path builds = cache / "builds.txt";
  const auto make = [&](const fs::path& work, std::string&) {
    std::ofstream(builds, std::ios::app) << ::getpid() << "\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::ofstream(work / "referee") << "built\n";
    return true;
  };
  const pid_t child = ::fork();
  if (child == 0) {
    const bool ok = builder_detail::cached_build(cache, "referee", "k", make).ok;
    ::_exit(ok ? 0 : 1);
  }
  const auto mine = builder_detail::cached_build(cache, "referee", "k", make);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(mine.ok);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::ifstream in(builds);
  std::size_t lines = 0;
  for (std::string l; std::getline(in, l);) ++lines;
  EXPECT_EQ(lines, 1u) << "built by both processes";
  fs::remove_all(cache);
}

// An entry changed after it was built (the attack of a program that could write
// the cache: a script where the referee was) is rebuilt, never used; so is one
// that others may write, one with a planted link and one from an older grader.
TEST(CachedBuild, ATamperedEntryIsRebuiltNeverUsed) {
  namespace fs = std::filesystem;
  const fs::path cache = fs::temp_directory_path() / ("cached_build_tamper-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  int builds = 0;
  const auto make = [&](const fs::path& work, std::string&) {
    ++builds;
    fs::create_directories(work / "bin");
    std::ofstream(work / "bin" / "referee") << "the real referee\n";
    return true;
  };
  const fs::path referee = cache / "referee-k" / "bin" / "referee";
  const auto expect_rebuilt = [&](const char* what) {
    const int before = builds;
    const auto e = builder_detail::cached_build(cache, "referee", "k", make);
    EXPECT_TRUE(e.ok && !e.cached) << what;
    EXPECT_EQ(builds, before + 1) << what;
    EXPECT_EQ(read_file(referee).value_or(""), "the real referee\n") << what;
    EXPECT_TRUE(builder_detail::cached_build(cache, "referee", "k", make).cached) << what << ": then kept";
  };
  ASSERT_TRUE(builder_detail::cached_build(cache, "referee", "k", make).ok);
  EXPECT_TRUE(builder_detail::cached_build(cache, "referee", "k", make).cached);

  std::ofstream(referee, std::ios::trunc) << "#!/bin/sh\necho forged\n";
  expect_rebuilt("a file's content changed");
  fs::permissions(referee, fs::perms::others_write, fs::perm_options::add);
  expect_rebuilt("a file others may write");
  fs::remove(referee);
  fs::create_symlink("/bin/true", referee);
  expect_rebuilt("a file replaced by a link");
  std::ofstream(cache / "referee-k" / "bin" / "extra") << "planted";
  expect_rebuilt("a file added");
  std::ofstream(cache / "referee-k" / ".complete", std::ios::trunc) << "ok\n";
  expect_rebuilt("an entry of an older grader");
  std::size_t left = 0;
  for (const auto& f : fs::directory_iterator(cache)) left += f.path().extension() != ".lock";
  EXPECT_EQ(left, 1u) << "nothing set aside is left";
  fs::remove_all(cache);
}

}  // namespace
}  // namespace grader
