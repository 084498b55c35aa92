#include "compiler_report.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "toolchain.hpp"  // find_nvcc

namespace grader {
namespace {

namespace fs = std::filesystem;

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// One kernel per fact the labs check. Compiled once, exactly as the grader
// compiles a submission, and read back through both parsers.
const char* const kKernels = R"cu(
#include <cstdio>
#include <cuda_runtime.h>
#define TILE 32

__global__ void transpose_kernel(float* out, const float* in, int n) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  if (x < n && y < n) out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

// Writes through a runtime index: the array cannot live in registers.
__global__ void local_array_kernel(float* out, const float* in, const int* idx, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  float a[32];
  for (int i = 0; i < 32; ++i) a[i] = in[t * 32 + i];
  for (int j = 0; j < 8; ++j) a[idx[j] & 31] += 1.f;
  float s = 0;
  for (int i = 0; i < 32; ++i) s += a[i] * i;
  out[t] = s;
}

// The same array with compile-time indices only: registers.
__global__ void register_array_kernel(float* out, const float* in, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  float a[32];
  for (int i = 0; i < 32; ++i) a[i] = in[t * 32 + i];
  for (int j = 0; j < 8; ++j) a[j * 3 & 31] += 1.f;
  float s = 0;
  for (int i = 0; i < 32; ++i) s += a[i] * i;
  out[t] = s;
}

__global__ void ldg_kernel(float* out, const float* in, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) out[t] = __ldg(&in[t]) * 2.f;
}

__global__ void restrict_kernel(float* __restrict__ out, const float* __restrict__ in, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) out[t] = in[t] * 2.f;
}

__global__ void plain_kernel(float* out, const float* in, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) out[t] = in[t] * 2.f;
}

__constant__ float coeffs[16];
__global__ void constant_kernel(float* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  float x = out[t], acc = 0.f;
  for (int i = 0; i < 16; ++i) acc = acc * x + coeffs[i];
  out[t] = acc;
}

__device__ float dev_arr[1024];
__global__ void device_array_kernel(int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) dev_arr[t] += 1.f;
}

namespace ns { __device__ int counters[4]; }
// printf's format string becomes a module .global too, but not a student's.
__global__ void printf_kernel(int n) {
  printf("n = %d\n", n);
  ns::counters[n & 3] += 1;
}

static __global__ void file_local_kernel(float* p) { p[0] = 1.f; }
void launch_file_local(float* p) { file_local_kernel<<<1, 1>>>(p); }

extern __shared__ float dyn_tile[];
__global__ void extern_shared_kernel(float* out) {
  int t = threadIdx.x;
  dyn_tile[t] = out[t];
  __syncthreads();
  out[t] = dyn_tile[(t + 1) % blockDim.x];
}

__global__ void texture_kernel(float* out, cudaTextureObject_t tex, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}

__device__ __noinline__ float pick(const float* p, int i) {
  float b[16];
  for (int j = 0; j < 16; ++j) b[j] = p[j];
  return b[i & 15];
}
__global__ void calls_helper_kernel(float* p) { p[0] = pick(p, threadIdx.x); }

namespace ns {
template <int N> __global__ void scale(float* p) { p[threadIdx.x] *= N; }
template __global__ void scale<2>(float*);
template __global__ void scale<3>(float*);
}

extern "C" __global__ void c_atomic_kernel(float* p) { atomicAdd(p, 1.f); }

__global__ void shuffle_kernel(float* p) {
  float v = p[threadIdx.x];
  v += __shfl_down_sync(0xffffffffu, v, 1);
  p[threadIdx.x] = v;
}
)cu";

class RealCompile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto nvcc = find_nvcc();
    if (!nvcc) return;
    std::string tmpl = (fs::temp_directory_path() / "compiler_report_test.XXXXXX").string();
    dir_ = new fs::path(::mkdtemp(tmpl.data()));
    fs::create_directories(*dir_ / "keep");
    std::ofstream(*dir_ / "kernel.cu") << kKernels;
    const std::string cmd = "cd '" + dir_->string() + "' && '" + nvcc->string() +
                            "' -O3 -lineinfo -Xptxas -v -arch=sm_90 --keep --keep-dir keep"
                            " -c kernel.cu -o kernel.o 2> ptxas.txt";
    status_ = std::system(cmd.c_str());
    report_ = new std::map<std::string, KernelResources>(parse_ptxas_report(slurp(*dir_ / "ptxas.txt")));
    module_ = new PtxModule(parse_ptx(slurp(*dir_ / "keep" / "kernel.ptx")));
  }
  static void TearDownTestSuite() {
    if (dir_) fs::remove_all(*dir_);
    delete dir_;
    delete report_;
    delete module_;
    dir_ = nullptr;
    report_ = nullptr;
    module_ = nullptr;
  }
  void SetUp() override {
    if (!dir_) GTEST_SKIP() << "nvcc not found (CUDACXX, PATH, /usr/local/cuda/bin): cannot compile";
    ASSERT_EQ(status_, 0) << slurp(*dir_ / "ptxas.txt");
  }
  static const KernelResources& res(const std::string& name) {
    auto it = report_->find(name);
    if (it == report_->end()) throw std::runtime_error("no ptxas report for " + name);
    return it->second;
  }
  static const PtxKernel& ptx(const std::string& name) {
    auto it = module_->kernels.find(name);
    if (it == module_->kernels.end()) throw std::runtime_error("no PTX entry for " + name);
    return it->second;
  }

  static fs::path* dir_;
  static int status_;
  static std::map<std::string, KernelResources>* report_;
  static PtxModule* module_;
};

fs::path* RealCompile::dir_ = nullptr;
int RealCompile::status_ = -1;
std::map<std::string, KernelResources>* RealCompile::report_ = nullptr;
PtxModule* RealCompile::module_ = nullptr;

TEST_F(RealCompile, BothParsersSeeTheSameKernels) {
  std::vector<std::string> from_ptxas, from_ptx;
  for (const auto& [name, r] : *report_) from_ptxas.push_back(name);
  for (const auto& [name, k] : module_->kernels) from_ptx.push_back(name);
  EXPECT_EQ(from_ptxas, from_ptx);
  EXPECT_EQ(from_ptxas.size(), 16u);
  EXPECT_EQ(report_->count("file_local_kernel"), 1u) << "a static kernel is still an entry";
  // pick() is a device function: ptxas reports its properties, but it is no kernel.
  EXPECT_EQ(report_->count("pick"), 0u);
  EXPECT_EQ(module_->kernels.count("pick"), 0u);
}

TEST_F(RealCompile, SharedTransposeUsesSharedMemoryAndOneBarrier) {
  const auto& r = res("transpose_kernel");
  EXPECT_EQ(r.mangled, "_Z16transpose_kernelPfPKfi");
  EXPECT_EQ(r.shared_bytes, 32 * 33 * 4);
  EXPECT_EQ(r.barriers, 1);
  EXPECT_EQ(r.stack_frame, 0);
  EXPECT_GT(r.registers, 0);

  const auto& k = ptx("transpose_kernel");
  EXPECT_TRUE(has_instruction(k, "ld.shared"));
  EXPECT_TRUE(has_instruction(k, "st.shared"));
  // nvcc 13 for sm_90 writes __syncthreads() as "bar.sync 0", not barrier.sync.
  EXPECT_TRUE(contains(k.instructions, "bar.sync"));
  EXPECT_EQ(count_instruction(k, "bar.sync"), 1);
  EXPECT_TRUE(has_instruction(k, "ld.global"));
  EXPECT_TRUE(has_instruction(k, "st.global"));
  EXPECT_FALSE(has_instruction(k, "ld.local"));
  EXPECT_FALSE(has_instruction(k, "extern_shared"));
}

TEST_F(RealCompile, RuntimeIndexedArrayGetsAStackFrame) {
  const auto& r = res("local_array_kernel");
  EXPECT_EQ(r.stack_frame, 32 * 4);
  EXPECT_EQ(r.spill_stores, 0);
  EXPECT_TRUE(has_instruction(ptx("local_array_kernel"), "ld.local"));
  EXPECT_TRUE(has_instruction(ptx("local_array_kernel"), "st.local"));

  EXPECT_EQ(res("register_array_kernel").stack_frame, 0);
  EXPECT_FALSE(has_instruction(ptx("register_array_kernel"), "ld.local"));
  EXPECT_FALSE(has_instruction(ptx("register_array_kernel"), "st.local"));
}

// The line of kKernels that holds `text`, counted as nvcc counts them (1: the first).
int line_of(const std::string& text) {
  const std::string source = kKernels;
  const auto at = source.find(text);
  if (at == std::string::npos) throw std::runtime_error("not in kKernels: " + text);
  return 1 + static_cast<int>(std::count(source.begin(), source.begin() + at, '\n'));
}

TEST_F(RealCompile, LocalMemoryIsTracedToItsLines) {
  const auto& k = ptx("local_array_kernel");
  const std::set<int> array_lines = {line_of("a[i] = in[t * 32 + i]"), line_of("a[idx[j] & 31] += 1.f"),
                                     line_of("s += a[i] * i")};
  for (const char* cls : {"ld.local", "st.local"}) {
    const auto lines = source_lines_of(*module_, k, cls, "kernel.cu");
    ASSERT_FALSE(lines.empty()) << cls << ": no line from -lineinfo";
    for (int n : lines) EXPECT_EQ(array_lines.count(n), 1u) << cls << " at line " << n;
  }
  // The runtime index is where the array must leave registers: it is named.
  const auto stores = source_lines_of(*module_, k, "st.local", "kernel.cu");
  EXPECT_NE(std::find(stores.begin(), stores.end(), line_of("a[idx[j] & 31] += 1.f")), stores.end());
  EXPECT_TRUE(source_lines_of(*module_, k, "ld.local", "other.cu").empty());
  EXPECT_TRUE(source_lines_of(*module_, ptx("register_array_kernel"), "ld.local", "kernel.cu").empty());
}

TEST(Ptx, LocationsComeFromLocDirectivesAndInlinedCodeFromWhereItWasInlined) {
  const auto m = parse_ptx(R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry _Z1kPf(.param .u64 p)
{
	.loc	1 5 3
	ld.local.f32 	%f1, [%rd1];
	.loc	2 10 1, function_name $L__info_string0, inlined_at 1 7 2
	st.local.f32 	[%rd1], %f1;
	.loc	1 0 3
	ld.local.f32 	%f2, [%rd1];
	.loc	3 9 1
	ld.local.f32 	%f3, [%rd1];
	ld.param.u64 	%rd2, [p];
	.loc	1 12 2
	ld.global.f32 	%f4, [%rd2];
	ret;
}
	.file	1 "src/kernel.cu"
	.file	2 "src/lab/lab.cuh", 1700000000, 300
	.file	3 "src/notkernel.cu"
)");
  ASSERT_EQ(m.kernels.count("k"), 1u);
  const auto& k = m.kernels.at("k");
  ASSERT_EQ(k.locations.size(), k.instructions.size());
  EXPECT_EQ(m.files.at(2), "src/lab/lab.cuh");
  // Line 0 (code of no one line) is not named; nor is another file whose name ends the same way.
  EXPECT_EQ(source_lines_of(m, k, "ld.local", "kernel.cu"), std::vector<int>{5});
  // Code inlined from a header: the kernel.cu line it was inlined at.
  EXPECT_EQ(source_lines_of(m, k, "st.local", "kernel.cu"), std::vector<int>{7});
  EXPECT_EQ(source_lines_of(m, k, "st.local", "lab.cuh"), std::vector<int>{10});
  EXPECT_TRUE(source_lines_of(m, k, "ld.shared", "kernel.cu").empty());
  // A load through the pointer the kernel was handed.
  EXPECT_EQ(source_lines_of(m, k, "pointer_access", "kernel.cu"), std::vector<int>{12});
  EXPECT_EQ(source_lines_of(m, k, "ld.global", "kernel.cu"), std::vector<int>{12});
  // Where the kernel is: every kernel.cu line any of its instructions came from.
  EXPECT_EQ(kernel_lines_of(m, k, "kernel.cu"), (std::vector<int>{5, 7, 12}));
  EXPECT_EQ(kernel_lines_of(m, k, "lab.cuh"), std::vector<int>{10});
}

TEST_F(RealCompile, ReadOnlyPathIsItsOwnClass) {
  const auto& ldg = ptx("ldg_kernel");
  EXPECT_TRUE(has_instruction(ldg, "ld.global.nc"));
  EXPECT_FALSE(has_instruction(ldg, "ld.global")) << "ld.global must not match ld.global.nc";
  EXPECT_TRUE(has_instruction(ptx("restrict_kernel"), "ld.global.nc"));
  EXPECT_FALSE(has_instruction(ptx("plain_kernel"), "ld.global.nc"));
  EXPECT_TRUE(has_instruction(ptx("plain_kernel"), "ld.global"));
}

TEST_F(RealCompile, ConstantTableIsReadWithLdConst) {
  EXPECT_EQ(module_->const_variables, std::vector<std::string>{"coeffs"});
  const auto& k = ptx("constant_kernel");
  EXPECT_EQ(count_instruction(k, "ld.const"), 16);
  EXPECT_TRUE(contains(k.variables, "coeffs"));
  EXPECT_FALSE(has_instruction(ptx("plain_kernel"), "ld.const"));
}

TEST_F(RealCompile, DeviceArraysAreModuleGlobals) {
  auto globals = module_->global_variables;
  std::sort(globals.begin(), globals.end());
  EXPECT_EQ(globals, (std::vector<std::string>{"dev_arr", "ns::counters"}));
  EXPECT_TRUE(contains(ptx("device_array_kernel").variables, "dev_arr"));
  EXPECT_FALSE(contains(ptx("plain_kernel").variables, "dev_arr"));
  EXPECT_EQ(ptx("printf_kernel").variables, std::vector<std::string>{"ns::counters"});
}

TEST_F(RealCompile, ExternSharedIsDeclaredAndReferenced) {
  EXPECT_EQ(module_->extern_shared, std::vector<std::string>{"dyn_tile"});
  const auto& k = ptx("extern_shared_kernel");
  EXPECT_TRUE(has_instruction(k, "extern_shared"));
  EXPECT_TRUE(has_instruction(k, "ld.shared"));
  EXPECT_TRUE(has_instruction(k, "bar.sync"));
  // Dynamic shared memory is sized at launch, so ptxas reports none.
  EXPECT_EQ(res("extern_shared_kernel").shared_bytes, 0);
}

TEST_F(RealCompile, TextureFetchIsTex) {
  const auto& k = ptx("texture_kernel");
  EXPECT_TRUE(has_instruction(k, "tex"));
  EXPECT_TRUE(std::any_of(k.instructions.begin(), k.instructions.end(),
                          [](const std::string& op) { return op.rfind("tex.2d.", 0) == 0; }));
  EXPECT_FALSE(has_instruction(ptx("ldg_kernel"), "tex"));
}

// A gather and a surface read go through the texture unit as a fetch does: each
// is "tex", so a step that forbids the texture path forbids them too.
TEST(Ptx, TextureGatherAndSurfaceReadsAreTheTexturePath) {
  const auto m = parse_ptx(R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry _Z6gatherPf(.param .u64 p)
{
	tld4.r.2d.v4.f32.f32 	{%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];
	ret;
}
.visible .entry _Z7surfacePf(.param .u64 p)
{
	suld.b.2d.b32.trap 	{%r1}, [%rd1, {%r2, %r3}];
	ret;
}
.visible .entry _Z5plainPf(.param .u64 p)
{
	ld.global.nc.f32 	%f1, [%rd1];
	ret;
}
)");
  ASSERT_EQ(m.kernels.count("gather"), 1u);
  EXPECT_TRUE(has_instruction(m.kernels.at("gather"), "tex"));
  EXPECT_TRUE(has_instruction(m.kernels.at("surface"), "tex"));
  EXPECT_FALSE(has_instruction(m.kernels.at("plain"), "tex"));
}

TEST_F(RealCompile, CalledDeviceFunctionCountsForItsKernel) {
  // The local array lives in pick(); the kernel's own body only calls it.
  EXPECT_TRUE(has_instruction(ptx("calls_helper_kernel"), "ld.local"));
  EXPECT_GT(res("calls_helper_kernel").stack_frame, 0);
}

TEST_F(RealCompile, NamespacedTemplateAndExternCNames) {
  ASSERT_EQ(report_->count("ns::scale"), 1u);
  EXPECT_EQ(module_->kernels.count("ns::scale"), 1u);
  // Two instantiations merge into one entry holding both bodies.
  EXPECT_EQ(count_instruction(ptx("ns::scale"), "st.global"), 2);
  EXPECT_EQ(res("c_atomic_kernel").mangled, "c_atomic_kernel");
  EXPECT_TRUE(has_instruction(ptx("c_atomic_kernel"), "atom"));
  EXPECT_TRUE(has_instruction(ptx("shuffle_kernel"), "shfl"));
  EXPECT_FALSE(has_instruction(ptx("shuffle_kernel"), "atom"));
}

// ---- Text-only tests: formats and corner cases nvcc 13 does not produce here.

TEST(PtxasReport, OlderFormatWithCmemAndNoBarriers) {
  const auto r = parse_ptxas_report(
      "ptxas info    : 0 bytes gmem, 64 bytes cmem[3]\n"
      "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_70'\n"
      "ptxas info    : Function properties for _Z1kPf\n"
      "    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, 360 bytes cmem[0], 4 bytes cmem[2]\n");
  ASSERT_EQ(r.count("k"), 1u);
  const auto& k = r.at("k");
  EXPECT_EQ(k.registers, 255);
  EXPECT_EQ(k.stack_frame, 16);
  EXPECT_EQ(k.spill_stores, 8);
  EXPECT_EQ(k.spill_loads, 12);
  EXPECT_EQ(k.shared_bytes, 0);
  EXPECT_EQ(k.barriers, 0);
  EXPECT_EQ(k.cmem, (std::map<int, int>{{0, 360}, {2, 4}}));
}

TEST(PtxasReport, DeviceFunctionPropertiesDoNotOverwriteTheKernel) {
  const auto r = parse_ptxas_report(
      "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1kPf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers\n"
      "ptxas info    : Function properties for _Z6helperPfi\n"
      "    72 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 99 registers\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r.at("k").stack_frame, 0);
  EXPECT_EQ(r.at("k").registers, 10);
}

TEST(PtxasReport, InstantiationsMergeToTheWorstOfEach) {
  const auto r = parse_ptxas_report(
      "ptxas info    : Compiling entry function '_Z4tileILi16EEvPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z4tileILi16EEvPf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 2048 bytes smem\n"
      "ptxas info    : Compiling entry function '_Z4tileILi32EEvPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z4tileILi32EEvPf\n"
      "    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 8192 bytes smem\n");
  ASSERT_EQ(r.size(), 1u);
  const auto& k = r.at("tile");
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.stack_frame, 8);
  EXPECT_EQ(k.shared_bytes, 8192);
}

TEST(PtxasReport, HugeForeignLinesAreSkipped) {
  const auto r = parse_ptxas_report(
      "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'\n"
      "ptxas info    : Used 10 registers, used 0 barriers\n"
      "Compiling entry function '" +
      std::string(1 << 20, 'x') + "'\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r.at("k").registers, 10);
}

TEST(Ptx, CommentsLabelsPredicatesAndMultiLineCalls) {
  const auto m = parse_ptx(R"(
.version 9.0
.target sm_90
.address_size 64
.global .align 4 .b8 table[8] = {1, 0, 0, 0, 2, 0, 0, 0};
.global .align 4 .u32 x;
.extern .shared .align 16 .b8 smem[];
.func (.param .b32 func_retval0) _Z3getv();
.func (.param .b32 func_retval0) _Z3getv()
{
	ld.volatile.shared.u32 	%r1, [smem];
	st.param.b32 	[func_retval0+0], %r1;
	ret;
}
.visible .entry k(
	.param .u64 k_param_0
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<2>;
	// ld.local.f32 	%f1, [%rd1];
	/* st.local.f32 [%rd1], %f1;
	   tex.2d.v4.f32.f32 */
	.loc	1 3 0
	mov.u32 	%r9, %ctaid.x;
	ld.global.u32 	%r2, [table];
$L__BB0_1: @%p1 bra 	$L__BB0_2;
	{ // callseq 0, 0
	.param .b32 retval0;
	call.uni (retval0),
	_Z3getv,
	(
	);
	ld.param.b32 	%r3, [retval0+0];
	} // callseq 0
	@!%p1 barrier.sync.aligned 	0;
	bar.warp.sync 	-1;
$L__BB0_2:
	ret;
}
.section	.debug_str
{
$L__info_string0:
.b8 95,90,0
}
)");
  ASSERT_EQ(m.kernels.size(), 1u);
  const auto& k = m.kernels.at("k");
  EXPECT_EQ(k.instructions, (std::vector<std::string>{"mov.u32", "ld.global.u32", "bra", "call.uni", "ld.param.b32",
                                                      "barrier.sync.aligned", "bar.warp.sync", "ret",
                                                      "ld.volatile.shared.u32", "st.param.b32", "ret"}));
  EXPECT_FALSE(has_instruction(k, "ld.local"));
  EXPECT_FALSE(has_instruction(k, "st.local"));
  EXPECT_EQ(count_instruction(k, "bar.sync"), 1) << "bar.warp.sync is __syncwarp, not __syncthreads";
  EXPECT_TRUE(has_instruction(k, "ld.shared"));
  EXPECT_TRUE(has_instruction(k, "extern_shared"));
  EXPECT_EQ(m.global_variables, (std::vector<std::string>{"table", "x"}));
  EXPECT_EQ(m.extern_shared, std::vector<std::string>{"smem"});
  EXPECT_EQ(k.variables, (std::vector<std::string>{"table", "smem"}));
}

TEST(Ptx, ClassMatching) {
  PtxKernel k;
  k.instructions = {"ld.global.nc.v4.f32",          "ld.shared::cta.f32", "ld.sharedx.f32",    "tld4.r.2d.v4.f32.f32",
                    "ld.global.L1::evict_last.f32", "bar.cta.sync",       "red.global.add.f32"};
  EXPECT_EQ(count_instruction(k, "ld.global.nc"), 1);
  EXPECT_EQ(count_instruction(k, "ld.global"), 1);
  EXPECT_EQ(count_instruction(k, "ld.shared"), 1);
  EXPECT_TRUE(has_instruction(k, "tex")) << "a gather (tld4) reads through the texture unit";
  EXPECT_TRUE(has_instruction(k, "bar.sync"));
  EXPECT_TRUE(has_instruction(k, "red"));
  EXPECT_FALSE(has_instruction(k, "atom"));
  EXPECT_FALSE(has_instruction(k, "extern_shared"));
  EXPECT_TRUE(contains(known_instruction_classes(), "ld.global.nc"));
}

TEST(Ptx, GenericAccessesAndSharedMemoryAreClassesOfTheirOwn) {
  PtxKernel k;
  k.instructions = {"ld.f32",          "ld.v4.u32",          "ld.param.u64",       "ld.global.f32",
                    "st.volatile.b64", "cvta.to.shared.u64", "atom.shared.add.u32"};
  EXPECT_EQ(count_instruction(k, "ld.generic"), 2);  // not the param or global load
  EXPECT_EQ(count_instruction(k, "st.generic"), 1);
  EXPECT_EQ(count_instruction(k, "shared"), 2);  // the conversion to a shared address, the shared atomic
  EXPECT_EQ(count_instruction(k, "ld.shared"), 0);
  PtxKernel plain;
  plain.instructions = {"ld.global.f32", "st.global.f32"};
  EXPECT_FALSE(has_instruction(plain, "shared"));
  plain.uses_extern_shared = true;  // an extern array it names counts as using shared memory
  EXPECT_TRUE(has_instruction(plain, "shared"));
}

// A class is what an instruction does to memory: an asynchronous copy into shared
// memory stores the tile (an honest cp.async or TMA tile has no st.shared) and reads
// global memory; an atomic reads what it changes; ldmatrix reads shared; ldu is a load.
TEST(Ptx, AsyncCopiesAtomicsAndUniformLoadsCountForWhatTheyDoToMemory) {
  PtxKernel copies;
  copies.instructions = {"cp.async.ca.shared.global",
                         "cp.async.cg.shared.global.L2::128B",
                         "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
                         "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                         "cp.async.bulk.global.shared::cta.bulk_group",
                         "cp.async.commit_group",
                         "cp.async.wait_group",
                         "cp.async.mbarrier.arrive.noinc.shared.b64"};
  EXPECT_EQ(count_instruction(copies, "st.shared"), 4) << "the four copies into shared memory, not the one out of it";
  EXPECT_EQ(count_instruction(copies, "ld.global"), 4);
  EXPECT_EQ(count_instruction(copies, "st.global"), 0);
  PtxKernel reads;
  reads.instructions = {"atom.global.add.f32",
                        "atom.relaxed.gpu.global.or.b32",
                        "atom.add.f32",
                        "atom.shared.add.u32",
                        "red.global.add.f32",
                        "ldu.global.f32",
                        "ldu.f32",
                        "ldmatrix.sync.aligned.m8n8.x4.shared.b16"};
  EXPECT_EQ(count_instruction(reads, "ld.global"), 3) << "two atomics on global memory and ldu.global";
  EXPECT_EQ(count_instruction(reads, "ld.generic"), 2) << "the generic atomic and the generic ldu";
  EXPECT_EQ(count_instruction(reads, "ld.shared"), 1) << "ldmatrix";
  EXPECT_EQ(count_instruction(reads, "ld.global.nc"), 0);
  EXPECT_EQ(count_instruction(reads, "atom"), 4);
  PtxKernel barriers;  // __syncthreads_or waits as __syncthreads does; a bare arrive waits for nobody
  barriers.instructions = {"bar.red.or.pred", "barrier.cta.red.popc.u32", "bar.arrive", "barrier.cta.arrive"};
  EXPECT_EQ(count_instruction(barriers, "bar.sync"), 2);
}

// lab11's classes: the copies alone (not the commits, waits and arrivals that
// share their prefix), and a wait that leaves copies in flight, as nvcc 13.0
// writes each honest spelling of it: __pipeline_wait_prior(1) and
// cuda::pipeline_consumer_wait_prior<1> as cp.async.wait_group 1; a
// thread-scope cuda::pipeline's consumer_wait() as a switch over wait_group 0
// to 8; a block-scope cuda::pipeline and bulk copies as mbarrier waits.
TEST(Ptx, AsyncCopyClassesAreTheCopiesAndAPartialWaitLeavesOneInFlight) {
  const PtxModule m = parse_ptx(R"(
.version 9.0
.target sm_90
.address_size 64
.visible .entry pipelined()
{
	.reg .b32 %r<9>;
	.reg .b64 %rd<4>;
	cp.async.ca.shared.global [%r1], [%rd1], 4, %r2;
	cp.async.cg.shared.global [%r3], [%rd2], 16;
	cp.async.commit_group;
	cp.async.wait_group 1;
	cp.async.mbarrier.arrive.noinc.shared.b64 [%r4];
	ret;
}
.visible .entry drained()
{
	.reg .b32 %r<9>;
	.reg .b64 %rd<4>;
	cp.async.ca.shared.global [%r1], [%rd1], 4, %r2;
	cp.async.commit_group;
	cp.async.wait_group 0;
	cp.async.wait_all;
	ret;
}
.visible .entry bulk()
{
	.reg .b32 %r<9>;
	.reg .b64 %rd<4>;
	mbarrier.init.shared.b64 [%r5], %r6;
	cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r7], [%rd3], %r8, [%r5];
	mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r5], %r8;
	{
	.reg .pred p;
	mbarrier.try_wait.shared.b64 p, [%r5], %rd1;
	}
	ret;
}
)");
  const auto& pipelined = m.kernels.at("pipelined");
  EXPECT_EQ(count_instruction(pipelined, "cp.async"), 2);
  EXPECT_EQ(count_instruction(pipelined, "cp.async.bulk"), 0);
  EXPECT_EQ(count_instruction(pipelined, "partial_wait"), 1);
  EXPECT_FALSE(has_instruction(pipelined, "mbarrier")) << "cp.async.mbarrier.arrive is a cp.async instruction";
  const auto& drained = m.kernels.at("drained");
  EXPECT_EQ(count_instruction(drained, "cp.async"), 1);
  EXPECT_FALSE(has_instruction(drained, "partial_wait")) << "wait_group 0 and wait_all wait for every copy";
  const auto& bulk = m.kernels.at("bulk");
  EXPECT_EQ(count_instruction(bulk, "cp.async.bulk"), 1);
  EXPECT_EQ(count_instruction(bulk, "cp.async"), 0) << "a bulk copy is not the sm_80 kind";
  EXPECT_EQ(count_instruction(bulk, "mbarrier"), 3);
  EXPECT_EQ(count_instruction(bulk, "partial_wait"), 1) << "the wait of one barrier's copies";
  EXPECT_EQ(count_instruction(bulk, "st.shared"), 1) << "the bulk copy writes the tile";
  // A thread-scope pipeline's consumer_wait(): a wait for each count the pipeline may have.
  PtxKernel switched;
  switched.instructions = {"cp.async.wait_group", "cp.async.wait_group", "cp.async.wait_group"};
  switched.operands = {"0", "1", "2"};
  EXPECT_EQ(count_instruction(switched, "partial_wait"), 2);
  PtxKernel by_hand;  // no operands recorded: no count to read, so no partial wait
  by_hand.instructions = {"cp.async.wait_group"};
  EXPECT_FALSE(has_instruction(by_hand, "partial_wait"));
  for (const char* cls : {"cp.async", "cp.async.bulk", "mbarrier", "partial_wait"})
    EXPECT_TRUE(contains(known_instruction_classes(), cls)) << cls;
}

// Which __device__ arrays a kernel really reads or writes: through an address
// made from the array's own, not a pointer that was only loaded from one.
TEST(Ptx, GlobalVariableAccessFollowsTheAddress) {
  const PtxModule m = parse_ptx(R"(
.version 8.8
.target sm_90
.address_size 64
.global .align 4 .b8 static_a[16777216];
.global .align 4 .u32 counter;
.global .align 8 .u64 heap_pointer;
.global .align 4 .b8 named_only[64];
.visible .entry real(.param .u32 real_param_0)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<8>;
	.reg .f32 %f<3>;
	ld.param.u32 %r1, [real_param_0];
	mul.wide.s32 %rd1, %r1, 4;
	mov.u64 %rd2, static_a;
	add.s64 %rd3, %rd2, %rd1;
	ld.global.f32 %f1, [%rd3];
	ret;
}
.visible .entry fake(.param .u64 fake_param_0)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<8>;
	.reg .f32 %f<3>;
	atom.global.add.u32 %r1, [counter], 1;
	ld.global.u64 %rd1, [heap_pointer];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.f32 %f1, [%rd2];
	mov.u64 %rd3, named_only;
	st.global.f32 [%rd2+4], %f1;
	ret;
}
)");
  EXPECT_EQ(m.kernels.at("real").accessed_global_variables, std::vector<std::string>{"static_a"});
  // The counter is bumped by an atomic and the pointer is read from its
  // variable: neither is a __device__ array, and the data goes where the
  // pointer points.
  EXPECT_TRUE(m.kernels.at("fake").accessed_global_variables.empty());
  // Its data moves through the pointer it read: one load, one store.
  EXPECT_EQ(count_instruction(m.kernels.at("fake"), "pointer_access"), 2);
  EXPECT_EQ(count_instruction(m.kernels.at("real"), "pointer_access"), 0);
  EXPECT_TRUE(contains(m.kernels.at("fake").variables, "named_only"));
}

TEST(Demangle, PlainNames) {
  EXPECT_EQ(demangle_kernel_name("_Z16transpose_kernelPfPKfi"), "transpose_kernel");
  EXPECT_EQ(demangle_kernel_name("_ZN2ns5scaleILi3EEEvPf"), "ns::scale");
  EXPECT_EQ(demangle_kernel_name("_Z4tileILi32EEvPfPKfi"), "tile");
  EXPECT_EQ(demangle_kernel_name("_ZN12_GLOBAL__N_11kEPf"), "(anonymous namespace)::k");
  EXPECT_EQ(demangle_kernel_name("c_kernel"), "c_kernel");
  EXPECT_EQ(demangle_kernel_name("_Znot-a-name"), "_Znot-a-name");
}

}  // namespace
}  // namespace grader
