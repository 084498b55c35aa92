// A CUDA injection library (CUDA_INJECTION64_PATH) for the grader's overlap
// check: it records when the program's copies and kernels ran, from CUPTI's
// activity records, and prints them to stderr as the program exits, one line
// each (trace_report.hpp reads them):
//
//   memlabs-trace copy START END STREAM htod|dtoh|other BYTES
//   memlabs-trace kernel START END STREAM NAME
//
// START and END are the GPU's nanoseconds. It runs inside the submission's
// program, which could print such lines itself: what the lines prove is that an
// honest program's copies and kernels overlapped. The check refuses lines that
// span more time than the run lasted (trace_report.hpp), and the speed step
// measures what any program gains.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

constexpr std::size_t kBufferBytes = std::size_t(1) << 20;
constexpr std::size_t kAlign = 8;

std::mutex& lines_mutex() {
  static std::mutex* m = new std::mutex;  // never destroyed: used from the exit handler
  return *m;
}
std::string& lines() {
  static std::string* s = new std::string;
  return *s;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

const char* copy_kind(uint8_t kind) {
  if (kind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) return "htod";
  if (kind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH) return "dtoh";
  return "other";
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::string out;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    char line[512];
    if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      std::snprintf(line, sizeof line, "memlabs-trace copy %llu %llu %u %s %llu\n",
                    static_cast<unsigned long long>(c->start), static_cast<unsigned long long>(c->end), c->streamId,
                    copy_kind(c->copyKind), static_cast<unsigned long long>(c->bytes));
      out += line;
    } else if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      std::snprintf(line, sizeof line, "memlabs-trace kernel %llu %llu %u %.300s\n",
                    static_cast<unsigned long long>(k->start), static_cast<unsigned long long>(k->end), k->streamId,
                    k->name ? k->name : "?");
      out += line;
    }
  }
  std::free(buffer);
  const std::lock_guard<std::mutex> hold(lines_mutex());
  lines() += out;
}

// As a context goes away (the runtime's own teardown at exit may come before ours):
// its records, while they can still be read.
void CUPTIAPI on_resource(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void*) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

// At exit: every record left, then the lines.
void print_at_exit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  const std::lock_guard<std::mutex> hold(lines_mutex());
  std::fputs(lines().c_str(), stderr);
  std::fputs("memlabs-trace end\n", stderr);
  std::fflush(stderr);
}

}  // namespace

// Called by the CUDA driver as it initializes, when CUDA_INJECTION64_PATH names this library.
extern "C" int InitializeInjection(void) {
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) return 0;
  // Concurrent kernel records keep kernels concurrent; the plain kind would serialize them.
  if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS)
    return 0;
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(on_resource), nullptr) == CUPTI_SUCCESS)
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  std::atexit(print_at_exit);
  return 1;
}
