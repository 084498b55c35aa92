#include "diagnostics.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "toolchain.hpp"  // find_nvcc

namespace grader {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count_severity(const std::vector<CompilerMessage>& ms, const std::string& severity) {
  return std::count_if(ms.begin(), ms.end(), [&](const CompilerMessage& m) { return m.severity == severity; });
}

// Sources live under an absolute temporary path, as the grader's build
// directory does; the formatted output must not show it.
class RealCompiler : public ::testing::Test {
 protected:
  void SetUp() override {
    nvcc_ = find_nvcc().value_or(fs::path());
    if (nvcc_.empty()) GTEST_SKIP() << "nvcc not found (CUDACXX, PATH, /usr/local/cuda/bin): cannot compile";
    std::string tmpl = (fs::temp_directory_path() / "diagnostics_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    lab_ = root_ / "lab99-demo";
    fs::create_directory(lab_);
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }

  // Runs a shell command in the lab folder; returns its exit status, and its
  // stdout and stderr together in `output`.
  int run(const std::string& command, std::string& output) {
    const fs::path log = root_ / "log.txt";
    const int status =
        std::system(("cd '" + lab_.string() + "' && " + command + " > '" + log.string() + "' 2>&1").c_str());
    output = slurp(log);
    return status;
  }
  int nvcc(const std::string& args, std::string& output) { return run("'" + nvcc_.string() + "' " + args, output); }
  void write(const std::string& name, const std::string& text) { std::ofstream(lab_ / name) << text; }
  std::vector<std::pair<std::string, std::string>> rewrites() const { return {{lab_.string(), "lab99-demo"}}; }

  fs::path nvcc_, root_, lab_;
};

TEST_F(RealCompiler, FirstErrorFirstWithTheShortPath) {
  write("kernel.cu",
        "__global__ void k(float* out, int n) {\n"
        "  int a = 1.5e40;\n"                       // warning
        "  for (unsigned i = 0; i < -1; ++i) {}\n"  // warning
        "  out[0] = undefined_thing;\n"             // error
        "  int* p = out;\n"                         // error
        "}\n");
  std::string raw;
  ASSERT_NE(nvcc("-arch=sm_90 -c '" + (lab_ / "kernel.cu").string() + "' -o kernel.o", raw), 0);

  const auto messages = parse_compiler_output(raw);
  EXPECT_EQ(count_severity(messages, "error"), 2u) << raw;
  EXPECT_EQ(count_severity(messages, "warning"), 2u) << raw;
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0].severity, "warning") << "nvcc itself reports the warnings first";
  EXPECT_EQ(messages[0].file, (lab_ / "kernel.cu").string());

  const std::string out = format_compiler_output(raw, rewrites());
  EXPECT_EQ(out.rfind("lab99-demo/kernel.cu:4: error: identifier \"undefined_thing\" is undefined\n"
                      "    out[0] = undefined_thing;\n",
                      0),
            0u)
      << out;
  const auto second = out.find("lab99-demo/kernel.cu:5: error: ");
  const auto warning = out.find("lab99-demo/kernel.cu:2: warning: ");
  EXPECT_NE(second, std::string::npos) << out;
  EXPECT_NE(warning, std::string::npos) << out;
  EXPECT_LT(second, warning);
  EXPECT_EQ(out.find(root_.string()), std::string::npos) << out;
  EXPECT_EQ(out.find("detected in the compilation"), std::string::npos) << out;
  EXPECT_EQ(out.find("-diag-suppress"), std::string::npos) << out;

  const std::string one = format_compiler_output(raw, rewrites(), 1);
  EXPECT_NE(one.find("... and 1 more error\n"), std::string::npos) << one;
  EXPECT_EQ(one.find("kernel.cu:5: error"), std::string::npos) << one;
}

TEST_F(RealCompiler, WarningsOnlyMeansNoErrors) {
  write("kernel.cu",
        "__global__ void k(float* out, int n) {\n"
        "  int unused = 3;\n"
        "  out[0] = n;\n"
        "}\n");
  std::string raw;
  ASSERT_EQ(nvcc("-arch=sm_90 -c '" + (lab_ / "kernel.cu").string() + "' -o kernel.o", raw), 0) << raw;
  const auto messages = parse_compiler_output(raw);
  EXPECT_EQ(count_severity(messages, "error"), 0u) << raw;
  ASSERT_EQ(count_severity(messages, "warning"), 1u) << raw;
  EXPECT_EQ(messages[0].line, 2);
  EXPECT_EQ(format_compiler_output(raw, rewrites()).rfind("lab99-demo/kernel.cu:2: warning: variable \"unused\"", 0),
            0u);
}

TEST_F(RealCompiler, LinkWithoutTheLauncherNamesIt) {
  write("main.cu",
        "#include <cuda_runtime.h>\n"
        "void launch_transpose(float* out, const float* in, int rows, int cols, cudaStream_t s);\n"
        "int main() { launch_transpose(nullptr, nullptr, 1, 1, 0); }\n");
  std::string raw;
  ASSERT_EQ(nvcc("-arch=sm_90 -c main.cu -o main.o", raw), 0) << raw;
  ASSERT_NE(nvcc("-arch=sm_90 main.o -o runner", raw), 0);

  EXPECT_EQ(missing_symbol(raw),
            "launch_transpose(float*, float const*, int, int, cudaStream_t) is called but never defined.")
      << raw;
  const std::string out = format_compiler_output(raw, rewrites());
  EXPECT_EQ(out.rfind("ld: error: undefined reference to `launch_transpose(", 0), 0u) << out;
  EXPECT_EQ(out.find("collect2"), std::string::npos) << out;
  EXPECT_EQ(out.find("in function"), std::string::npos) << out;
}

TEST_F(RealCompiler, UndefinedDeviceFunctionIsAMissingSymbol) {
  write("kernel.cu",
        "__device__ float helper(float x);\n"
        "__global__ void k(float* p) { p[0] = helper(p[1]); }\n");
  std::string raw;
  ASSERT_NE(nvcc("-arch=sm_90 -c kernel.cu -o kernel.o", raw), 0);
  EXPECT_EQ(missing_symbol(raw), "helper(float) is called but never defined.") << raw;
}

TEST_F(RealCompiler, PtxasErrorNamesTheKernelPlainly) {
  write("kernel.cu",
        "__global__ void too_big(float* out) {\n"
        "  __shared__ float s[20000];\n"
        "  s[threadIdx.x] = 1; __syncthreads(); out[threadIdx.x] = s[threadIdx.x + 1];\n"
        "}\n");
  std::string raw;
  ASSERT_NE(nvcc("-arch=sm_90 -c kernel.cu -o kernel.o", raw), 0);
  const auto messages = parse_compiler_output(raw);
  ASSERT_EQ(messages.size(), 1u) << raw;
  EXPECT_EQ(messages[0].file, "ptxas");
  EXPECT_EQ(messages[0].text.rfind("Entry function 'too_big(float*)' uses too much shared data", 0), 0u)
      << messages[0].text;
  EXPECT_FALSE(missing_symbol(raw));
}

TEST_F(RealCompiler, HostCompilerFormat) {
  write("host.cpp",
        "#include <vector>\n"
        "void f() { std::vector<int> v; v.push_back(\"x\"); }\n");
  std::string raw;
  ASSERT_NE(run("g++ -c '" + (lab_ / "host.cpp").string() + "' -o host.o", raw), 0);
  const auto messages = parse_compiler_output(raw);
  ASSERT_FALSE(messages.empty()) << raw;
  const auto first_error =
      std::find_if(messages.begin(), messages.end(), [](const CompilerMessage& m) { return m.severity == "error"; });
  ASSERT_NE(first_error, messages.end());
  EXPECT_EQ(first_error->file, (lab_ / "host.cpp").string());
  EXPECT_EQ(first_error->line, 2);
  EXPECT_GT(count_severity(messages, "note"), 0u);
  const std::string out = format_compiler_output(raw, rewrites());
  EXPECT_EQ(out.rfind("lab99-demo/host.cpp:2: error: ", 0), 0u) << out;
  EXPECT_EQ(out.find("In file included from"), std::string::npos) << out;
}

// ---- Text-only tests -------------------------------------------------------

TEST(Diagnostics, ToolMessages) {
  const auto ms = parse_compiler_output(
      "nvcc fatal   : Unsupported gpu architecture 'compute_99'\n"
      "nvlink error   : Undefined reference to '_Z5devfnf' in 'kernel.o'\n"
      "/usr/bin/ld: cannot find -lmissing: No such file or directory\n"
      "/usr/bin/ld: warning: creating DT_TEXTREL in a PIE\n");
  ASSERT_EQ(ms.size(), 4u);
  EXPECT_EQ(ms[0].file, "nvcc");
  EXPECT_EQ(ms[0].severity, "error");
  EXPECT_EQ(ms[1].text, "Undefined reference to 'devfn(float)' in 'kernel.o'");
  EXPECT_EQ(ms[2].file, "ld");
  EXPECT_EQ(ms[2].text, "cannot find -lmissing: No such file or directory");
  EXPECT_EQ(ms[3].severity, "warning");
  EXPECT_EQ(missing_symbol("nvlink error   : Undefined reference to '_Z5devfnf' in 'kernel.o'"),
            "devfn(float) is called but never defined.");
}

TEST(Diagnostics, LinkFailureWithoutDetailsIsStillAnError) {
  const auto ms = parse_compiler_output("collect2: error: ld returned 1 exit status\n");
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].severity, "error");
}

TEST(Diagnostics, SeveralMissingSymbols) {
  EXPECT_EQ(missing_symbol("a.o:(.text+0x1): undefined reference to `launch_a(CUstream_st*)'\n"
                           "a.o:(.text+0x9): undefined reference to `launch_b(int)'\n"
                           "a.o:(.text+0xf): undefined reference to `launch_a(CUstream_st*)'\n"),
            "launch_a(cudaStream_t) and launch_b(int) are called but never defined.");
  EXPECT_FALSE(missing_symbol("kernel.cu(3): error: expected a \";\"\n"));
}

TEST(Diagnostics, LimitsErrorsAndWarnings) {
  std::string raw;
  for (int i = 1; i <= 5; ++i)
    raw += "/build/lab/kernel.cu(" + std::to_string(i) + "): warning #1-D: w" + std::to_string(i) + "\n";
  for (int i = 10; i <= 16; ++i)
    raw += "/build/lab/kernel.cu(" + std::to_string(i) + "): error: e" + std::to_string(i) + "\n";
  raw += "/build/lab/kernel.cu(10): error: e10\n";  // reported twice
  const std::string out = format_compiler_output(raw, {{"/build/lab", ""}}, 5);
  EXPECT_EQ(out,
            "kernel.cu:10: error: e10\n\n"
            "kernel.cu:11: error: e11\n\n"
            "kernel.cu:12: error: e12\n\n"
            "kernel.cu:13: error: e13\n\n"
            "kernel.cu:14: error: e14\n\n"
            "... and 2 more errors\n\n"
            "kernel.cu:1: warning: w1\n\n"
            "kernel.cu:2: warning: w2\n\n"
            "kernel.cu:3: warning: w3\n\n"
            "... and 2 more warnings\n");
}

TEST(Diagnostics, RewritesOnlyWholePathComponents) {
  const std::string raw =
      "/tmp/lab05/kernel.cu(3): error: bad\n"
      "    #include \"/tmp/lab/lab.cuh\"\n"
      "/tmp/lab/kernel.cu(4): error: worse\n";
  const std::string out = format_compiler_output(raw, {{"/tmp/lab", "lab"}, {"/tmp/lab/lab.cuh", "lab.cuh"}});
  EXPECT_EQ(out,
            "/tmp/lab05/kernel.cu:3: error: bad\n"
            "    #include \"lab.cuh\"\n\n"
            "lab/kernel.cu:4: error: worse\n");
}

TEST(Diagnostics, NotesStayWithTheirError) {
  const std::string raw =
      "k.cpp:2:5: warning: unused variable 'q'\n"
      "k.cpp:3:5: error: no matching function\n"
      "    3 | f(1);\n"
      "/usr/include/x.h:9:1: note: candidate: f(char*)\n"
      "/usr/include/x.h:9:1: note: candidate: f(void*)\n"
      "/usr/include/x.h:9:1: note: candidate: f(long*)\n";
  const std::string out = format_compiler_output(raw, {});
  EXPECT_EQ(out,
            "k.cpp:3: error: no matching function\n"
            "    3 | f(1);\n"
            "/usr/include/x.h:9: note: candidate: f(char*)\n"
            "/usr/include/x.h:9: note: candidate: f(void*)\n\n"
            "k.cpp:2: warning: unused variable 'q'\n");
}

TEST(Diagnostics, HugeLinesAreCut) {
  const std::string raw = "kernel.cu(7): error: " + std::string(1 << 20, 'x') + "\n" + "undefined reference to `" +
                          std::string(1 << 20, 'y') + "'\n";
  const auto ms = parse_compiler_output(raw);
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].line, 7);
  EXPECT_LT(ms[0].text.size(), 2100u);
  EXPECT_FALSE(missing_symbol(raw));
}

TEST(Diagnostics, UnrecognisedOutputIsShownNotSwallowed) {
  const std::string raw = "Segmentation fault in /opt/build/cicc\nsomething odd\n";
  EXPECT_TRUE(parse_compiler_output(raw).empty());
  EXPECT_EQ(format_compiler_output(raw, {{"/opt/build", "build"}}),
            "Segmentation fault in build/cicc\nsomething odd\n");
  EXPECT_EQ(format_compiler_output("", {}), "");
}

// With #line naming it, g++ quoted a solution's line under a #warning, and
// cudafe++ and g++ an error's: a message about a file that is not shown goes
// with every line it quotes, and so does a line that names such a file.
TEST(Diagnostics, MessagesAboutFilesNotShownGoWithTheLinesTheyQuote) {
  const std::string raw =
      "/w/src/kernel.cu:3:2: warning: #warning mine [-Wcpp]\n"
      "    3 | #warning mine\n"
      "      |  ^~~~~~~\n"
      "/course/solutions/kernel.cu:22:2: warning: #warning hello [-Wcpp]\n"
      "   22 |       out[row] = tile[threadIdx.x][threadIdx.y + j];\n"
      "      |  ^    ~~\n"
      "In file included from /proc/self/exe:4:\n"
      "/proc/self/exe(5): error: expected a \";\"\n"
      "  \177ELF\x02\x01\n"
      "  ^\n"
      "\n"
      "/proc/self/exe: In function 'void f()':\n"
      "ptxas info    : 0 bytes gmem\n"
      "/w/src/kernel.cu(7): error: identifier \"x\" is undefined\n"
      "      x = 1;\n"
      "      ^\n";
  const std::string shown = without_messages_about(raw, [](const std::string& f) { return f == "/w/src/kernel.cu"; });
  EXPECT_EQ(shown,
            "/w/src/kernel.cu:3:2: warning: #warning mine [-Wcpp]\n"
            "    3 | #warning mine\n"
            "      |  ^~~~~~~\n"
            "ptxas info    : 0 bytes gmem\n"
            "/w/src/kernel.cu(7): error: identifier \"x\" is undefined\n"
            "      x = 1;\n"
            "      ^\n");
  EXPECT_EQ(without_messages_about(raw, [](const std::string&) { return true; }), raw);
}

}  // namespace
}  // namespace grader
