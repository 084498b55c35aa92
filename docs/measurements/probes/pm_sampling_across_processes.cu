// Can one process read the GPU's performance monitors while another process's
// kernels run, without touching that process? If so, the referee could take a
// timed run's own counters (shared-memory and global traffic while the
// candidate's timed launches run) from outside the program, which then cannot
// tell a measured run from an unmeasured one (issue: evidence from the graded run).
//
// The probe runs itself: as the sampler (no argument) it first starts a copy of
// itself as the workload (`work`) with nothing sampled, then enables CUPTI's PM
// sampling on device 0, starts the workload again, decodes the samples as they
// come, and prints each sample's time span and counters. The workload runs three
// phases, each bracketed by the GPU's global timer: kernels that read shared
// memory, a pause, kernels that read global memory; it prints how many launches
// each phase fit in (the two runs side by side: what sampling costs) and whether
// it can tell it is sampled (its own attempt to enable PM sampling on the device).
// Counters that rise in the first phase and not in the last (and the other way
// round) were read across the process boundary.
//
// Metrics: every candidate below is tried alone first (a metric PM sampling
// cannot collect is reported and dropped), then as many as one pass holds.
//
// probe-nvcc-flags: -O3 -arch=sm_90 -I/usr/local/cuda/extras/CUPTI/include -L/usr/local/cuda/extras/CUPTI/lib64 -Xlinker -rpath,/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64 -lcupti -lcuda
#include <cuda.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// ---- The workload: its own process, its own context ----

__global__ void read_global_timer(unsigned long long* t) {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  *t = ns;
}

// Each block fills a 32 x 32 tile once, then reads it back many times.
__global__ void shared_reads(float* out, int rounds) {
  __shared__ float tile[32][33];
  for (int r = threadIdx.y; r < 32; r += blockDim.y) tile[r][threadIdx.x] = float(r + threadIdx.x);
  __syncthreads();
  float sum = 0.0f;
  for (int k = 0; k < rounds; ++k) sum += tile[(threadIdx.y + k) & 31][(threadIdx.x + k) & 31];
  if (sum == -1.0f) out[blockIdx.x] = sum;  // never true: keeps the loop
}

// Grid-stride reads of a large array.
__global__ void global_reads(float* out, const float* in, size_t n) {
  float sum = 0.0f;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    sum += in[i];
  if (sum == -1.0f) out[blockIdx.x] = sum;
}

unsigned long long gpu_now(unsigned long long* d_t) {
  unsigned long long t = 0;
  read_global_timer<<<1, 1>>>(d_t);
  cudaMemcpy(&t, d_t, sizeof t, cudaMemcpyDeviceToHost);
  return t;
}

template <typename Launch>
void phase(const char* name, unsigned long long* d_t, Launch launch) {
  const unsigned long long begin = gpu_now(d_t);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  int launches = 0;
  while (std::chrono::steady_clock::now() < until) {
    launch();
    ++launches;
    cudaDeviceSynchronize();
  }
  const unsigned long long end = gpu_now(d_t);
  std::printf("work: phase %s gpu-ns %llu %llu launches %d\n", name, begin, end, launches);
  std::fflush(stdout);
}

int work() {
  const size_t n = size_t(1) << 28;  // 1 GiB of floats
  float *in = nullptr, *out = nullptr;
  unsigned long long* d_t = nullptr;
  if (cudaMalloc(&in, n * sizeof(float)) != cudaSuccess || cudaMalloc(&out, 1 << 20) != cudaSuccess ||
      cudaMalloc(&d_t, sizeof(unsigned long long)) != cudaSuccess) {
    std::printf("work: cannot allocate\n");
    return 1;
  }
  cudaMemset(in, 0, n * sizeof(float));
  cudaDeviceSynchronize();
  {
    // Can the program tell? It asks for PM sampling on the same device itself.
    CUpti_Profiler_Initialize_Params init = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    const CUptiResult ri = cuptiProfilerInitialize(&init);
    CUpti_PmSampling_Enable_Params enable = {CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
    enable.deviceIndex = 0;
    const CUptiResult re = ri == CUPTI_SUCCESS ? cuptiPmSamplingEnable(&enable) : ri;
    const char* text = "";
    cuptiGetResultString(re, &text);
    std::printf("work: its own cuptiPmSamplingEnable: %s (%d)\n", text, int(re));
    if (re == CUPTI_SUCCESS) {
      CUpti_PmSampling_Disable_Params disable = {CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
      disable.pPmSamplingObject = enable.pPmSamplingObject;
      cuptiPmSamplingDisable(&disable);
    }
    std::fflush(stdout);
  }
  phase("shared", d_t, [&] { shared_reads<<<4096, dim3(32, 8)>>>(out, 4096); });
  phase("idle", d_t, [] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); });
  phase("global", d_t, [&] { global_reads<<<4096, 256>>>(out, in, n); });
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("work: %s\n", cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}

// ---- The sampler ----

#define CUPTI_OR_FAIL(call)                                                     \
  do {                                                                          \
    const CUptiResult r_ = (call);                                              \
    if (r_ != CUPTI_SUCCESS) {                                                  \
      const char* s_ = "";                                                      \
      cuptiGetResultString(r_, &s_);                                            \
      std::printf("sampler: %s failed: %s (%d)\n", #call, s_, int(r_));         \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

const char* kCandidates[] = {
    "sm__cycles_active.sum",
    "sm__inst_executed.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "sm__sass_inst_executed_op_shared_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__m_xbar2l1tex_read_bytes.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "dram__bytes_read.sum",
};

struct Host {
  CUpti_Profiler_Host_Object* object = nullptr;
  ~Host() {
    if (!object) return;
    CUpti_Profiler_Host_Deinitialize_Params p = {CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = object;
    cuptiProfilerHostDeinitialize(&p);
  }
};

// A config image for `metrics`, and its number of passes (0 when the metrics are refused).
size_t config_for(const std::string& chip, const std::vector<uint8_t>& availability,
                  const std::vector<const char*>& metrics, Host& host, std::vector<uint8_t>& image) {
  CUpti_Profiler_Host_Initialize_Params init = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  init.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  init.pChipName = chip.c_str();
  init.pCounterAvailabilityImage = availability.data();
  if (cuptiProfilerHostInitialize(&init) != CUPTI_SUCCESS) return 0;
  host.object = init.pHostObject;
  CUpti_Profiler_Host_ConfigAddMetrics_Params add = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = host.object;
  add.ppMetricNames = const_cast<const char**>(metrics.data());
  add.numMetrics = metrics.size();
  if (cuptiProfilerHostConfigAddMetrics(&add) != CUPTI_SUCCESS) return 0;
  CUpti_Profiler_Host_GetConfigImageSize_Params size = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = host.object;
  if (cuptiProfilerHostGetConfigImageSize(&size) != CUPTI_SUCCESS) return 0;
  image.assign(size.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params get = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  get.pHostObject = host.object;
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  if (cuptiProfilerHostGetConfigImage(&get) != CUPTI_SUCCESS) return 0;
  CUpti_Profiler_Host_GetNumOfPasses_Params passes = {CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.configImageSize = image.size();
  passes.pConfigImage = image.data();
  if (cuptiProfilerHostGetNumOfPasses(&passes) != CUPTI_SUCCESS) return 0;
  return passes.numOfPasses;
}

struct Sample {
  uint64_t begin, end;
  std::vector<double> values;
};

// The workload as a child process, to its end; its exit status.
int run_workload(const char* self) {
  const pid_t child = fork();
  if (child == 0) {
    execl(self, self, "work", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int sampler(const char* self) {
  std::printf("sampler: the workload alone, nothing sampled\n");
  std::fflush(stdout);
  std::printf("sampler: workload exit %d\n", run_workload(self));
  std::printf("sampler: the workload while this process samples the device\n");
  std::fflush(stdout);
  if (cuInit(0) != CUDA_SUCCESS) {
    std::printf("sampler: cuInit failed\n");
    return 1;
  }
  CUdevice device;
  CUcontext context;
  cuDeviceGet(&device, 0);
  cuDevicePrimaryCtxRetain(&context, device);
  cuCtxSetCurrent(context);
  CUpti_Profiler_Initialize_Params init = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  CUPTI_OR_FAIL(cuptiProfilerInitialize(&init));
  CUpti_Device_GetChipName_Params chip_params = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip_params.deviceIndex = 0;
  CUPTI_OR_FAIL(cuptiDeviceGetChipName(&chip_params));
  const std::string chip = chip_params.pChipName;
  std::printf("sampler: chip %s\n", chip.c_str());
  CUpti_Profiler_DeviceSupported_Params supported = {CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
  supported.cuDevice = device;
  supported.api = CUPTI_PROFILER_PM_SAMPLING;
  CUPTI_OR_FAIL(cuptiProfilerDeviceSupported(&supported));
  std::printf("sampler: PM sampling supported: %s\n",
              supported.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED ? "yes" : "no");

  CUpti_PmSampling_GetCounterAvailability_Params avail = {CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.deviceIndex = 0;
  CUPTI_OR_FAIL(cuptiPmSamplingGetCounterAvailability(&avail));
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  CUPTI_OR_FAIL(cuptiPmSamplingGetCounterAvailability(&avail));

  // Each candidate alone, then as many together as one pass holds.
  std::vector<const char*> metrics;
  std::vector<uint8_t> image;
  for (const char* m : kCandidates) {
    Host alone;
    const size_t passes = config_for(chip, availability, {m}, alone, image);
    std::printf("sampler: metric %s: %s\n", m,
                passes == 1 ? "one pass" : passes == 0 ? "refused" : "more than one pass");
    if (passes != 1) continue;
    metrics.push_back(m);
    Host together;
    if (config_for(chip, availability, metrics, together, image) != 1) {
      metrics.pop_back();
      std::printf("sampler: %s left out: not in the same pass as the ones before it\n", m);
    }
  }
  if (metrics.empty()) {
    std::printf("sampler: no metric can be sampled\n");
    return 1;
  }
  Host host;
  if (config_for(chip, availability, metrics, host, image) != 1) {
    std::printf("sampler: the chosen metrics do not fit one pass\n");
    return 1;
  }

  CUpti_PmSampling_Enable_Params enable = {CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
  enable.deviceIndex = 0;
  CUPTI_OR_FAIL(cuptiPmSamplingEnable(&enable));
  CUpti_PmSampling_Object* object = enable.pPmSamplingObject;
  CUpti_PmSampling_SetConfig_Params config = {CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
  config.pPmSamplingObject = object;
  config.configSize = image.size();
  config.pConfig = image.data();
  config.hardwareBufferSize = size_t(512) << 20;
  config.samplingInterval = 1000000;  // 1 ms
  config.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  config.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  CUPTI_OR_FAIL(cuptiPmSamplingSetConfig(&config));
  CUpti_PmSampling_GetCounterDataSize_Params data_size = {CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
  data_size.pPmSamplingObject = object;
  data_size.pMetricNames = metrics.data();
  data_size.numMetrics = metrics.size();
  data_size.maxSamples = 4000;
  CUPTI_OR_FAIL(cuptiPmSamplingGetCounterDataSize(&data_size));
  std::vector<uint8_t> counter_data(data_size.counterDataSize);
  CUpti_PmSampling_CounterDataImage_Initialize_Params image_init = {
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  image_init.pPmSamplingObject = object;
  image_init.counterDataSize = counter_data.size();
  image_init.pCounterData = counter_data.data();
  CUPTI_OR_FAIL(cuptiPmSamplingCounterDataImageInitialize(&image_init));
  const std::vector<uint8_t> empty_data = counter_data;

  CUpti_PmSampling_Start_Params start = {CUpti_PmSampling_Start_Params_STRUCT_SIZE};
  start.pPmSamplingObject = object;
  CUPTI_OR_FAIL(cuptiPmSamplingStart(&start));

  const pid_t child = fork();
  if (child == 0) {
    execl(self, self, "work", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::vector<Sample> samples;
  // Decodes what the hardware buffer holds into `samples`; false on a CUPTI failure.
  auto decode = [&]() -> bool {
    CUpti_PmSampling_DecodeData_Params d = {CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
    d.pPmSamplingObject = object;
    d.pCounterDataImage = counter_data.data();
    d.counterDataImageSize = counter_data.size();
    if (cuptiPmSamplingDecodeData(&d) != CUPTI_SUCCESS) return false;
    if (d.overflow) std::printf("sampler: the hardware buffer overflowed\n");
    CUpti_PmSampling_GetCounterDataInfo_Params info = {CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    if (cuptiPmSamplingGetCounterDataInfo(&info) != CUPTI_SUCCESS) return false;
    for (size_t i = 0; i < info.numCompletedSamples; ++i) {
      CUpti_PmSampling_CounterData_GetSampleInfo_Params s = {
          CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
      s.pPmSamplingObject = object;
      s.pCounterDataImage = counter_data.data();
      s.counterDataImageSize = counter_data.size();
      s.sampleIndex = i;
      if (cuptiPmSamplingCounterDataGetSampleInfo(&s) != CUPTI_SUCCESS) return false;
      Sample sample{s.startTimestamp, s.endTimestamp, std::vector<double>(metrics.size())};
      CUpti_Profiler_Host_EvaluateToGpuValues_Params v = {CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
      v.pHostObject = host.object;
      v.pCounterDataImage = counter_data.data();
      v.counterDataImageSize = counter_data.size();
      v.rangeIndex = i;
      v.ppMetricNames = metrics.data();
      v.numMetrics = metrics.size();
      v.pMetricValues = sample.values.data();
      if (cuptiProfilerHostEvaluateToGpuValues(&v) != CUPTI_SUCCESS) return false;
      samples.push_back(sample);
    }
    counter_data = empty_data;
    return true;
  };
  int status = 0;
  bool decoding = true;
  while (waitpid(child, &status, WNOHANG) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (decoding && !decode()) {
      std::printf("sampler: decoding failed while the workload ran\n");
      decoding = false;
    }
  }
  CUpti_PmSampling_Stop_Params stop = {CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
  stop.pPmSamplingObject = object;
  cuptiPmSamplingStop(&stop);
  if (decoding) decode();
  CUpti_PmSampling_Disable_Params disable = {CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
  disable.pPmSamplingObject = object;
  cuptiPmSamplingDisable(&disable);

  std::printf("sampler: workload exit %d; %zu samples of:", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
              samples.size());
  for (const char* m : metrics) std::printf(" %s", m);
  std::printf("\n");
  for (const Sample& s : samples) {
    bool any = false;
    for (double v : s.values) any = any || v != 0;
    if (!any) continue;  // an idle millisecond
    std::printf("sample %llu %llu", static_cast<unsigned long long>(s.begin), static_cast<unsigned long long>(s.end));
    for (double v : s.values) std::printf(" %.0f", v);
    std::printf("\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "work") == 0) return work();
  return sampler(argv[0]);
}
