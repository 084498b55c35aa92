// CUDA_CHECK: the one way every lab and runner checks a CUDA call.
// A failure throws, so the referee or the server loop can turn it into a verdict (the grader never
// sees a half-written result) instead of printing and carrying on.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace memlabs {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, std::string call, std::string file, int line)
      : std::runtime_error(std::string(cudaGetErrorName(code)) + " (" + cudaGetErrorString(code) + ") from " + call +
                           " at " + file + ":" + std::to_string(line)),
        code_(code),
        call_(std::move(call)),
        file_(std::move(file)),
        line_(line) {}
  cudaError_t code() const { return code_; }
  const std::string& call() const { return call_; }
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  cudaError_t code_;
  std::string call_, file_;
  int line_;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(code, call, file, line);
}

}  // namespace memlabs

#define CUDA_CHECK(call)                                                            \
  do {                                                                              \
    cudaError_t labs_cuda_check_err_ = (call);                                      \
    if (labs_cuda_check_err_ != cudaSuccess)                                        \
      ::memlabs::throw_cuda_error(labs_cuda_check_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: a bad configuration is reported at once by
// cudaGetLastError; faults inside the kernel surface at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
