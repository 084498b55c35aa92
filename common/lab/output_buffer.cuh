// An output buffer that proves the kernel wrote every element and nothing
// more: before a run the data is poisoned with a NaN bit pattern and guard
// zones on both sides are filled with a canary pattern. After the run, any
// poison left means an element was never written, and a changed canary means
// the kernel wrote past the end (or before the start) of its output.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "compare.hpp"
#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "dtype.hpp"

namespace memlabs {

// NaNs for floats (so an unwritten element can never compare equal) and
// unlikely values for integers.
constexpr std::uint32_t kPoison32 = 0xFFC0DEADu;
constexpr std::uint64_t kPoison64 = 0xFFF8DEADFFF8DEADull;
constexpr std::uint32_t kCanary32 = 0x7FC0FFEEu;
constexpr std::uint64_t kCanary64 = 0x7FF8C0FFEE7FC0FFull;
constexpr std::size_t kGuardBytes = 64 * 1024;

namespace detail {
// Every word of [p, p + n) set to `value` on `stream` (support_kernels.cu).
void fill_words(std::uint32_t* p, std::size_t n, std::uint32_t value, cudaStream_t stream);
void fill_words(std::uint64_t* p, std::size_t n, std::uint64_t value, cudaStream_t stream);
}  // namespace detail

struct OutputSnapshot {
  std::vector<unsigned char> bytes;  // the data region only
  std::size_t unwritten = 0;         // elements still holding the poison pattern
  std::size_t first_unwritten = 0;
  bool guard_before_intact = true, guard_after_intact = true;
};

class Output {
 public:
  Output(std::string name, DType type, std::size_t count, std::vector<std::int64_t> dims, Tolerance tolerance)
      : name_(std::move(name)),
        type_(type),
        count_(count),
        dims_(std::move(dims)),
        tolerance_(tolerance),
        guard_words_(kGuardBytes / dtype_size(type)),
        storage_((count + 2 * guard_words_) * dtype_size(type)) {}
  virtual ~Output() = default;

  const std::string& name() const { return name_; }
  DType type() const { return type_; }
  std::size_t count() const { return count_; }
  const std::vector<std::int64_t>& dims() const { return dims_; }
  Tolerance tolerance() const { return tolerance_; }
  std::size_t bytes() const { return count_ * dtype_size(type_); }
  void* raw_data() { return storage_.data() + guard_words_ * dtype_size(type_); }
  const void* raw_data() const { return storage_.data() + guard_words_ * dtype_size(type_); }
  // The whole allocation: guard, data, guard (device_checks.cuh scans it on the GPU).
  const unsigned char* storage() const { return storage_.data(); }
  std::size_t guard_words() const { return guard_words_; }

  void poison(cudaStream_t stream = nullptr) {
    fill(storage_.data(), guard_words_, /*canary=*/true, stream);
    fill(static_cast<unsigned char*>(raw_data()), count_, false, stream);
    fill(static_cast<unsigned char*>(raw_data()) + bytes(), guard_words_, true, stream);
  }

  OutputSnapshot snapshot() const {
    const std::size_t elem = dtype_size(type_);
    std::vector<unsigned char> all(storage_.bytes());
    CUDA_CHECK(cudaMemcpy(all.data(), storage_.data(), all.size(), cudaMemcpyDeviceToHost));
    OutputSnapshot s;
    const unsigned char* data = all.data() + guard_words_ * elem;
    s.guard_before_intact = all_equal(all.data(), guard_words_, true);
    s.guard_after_intact = all_equal(data + bytes(), guard_words_, true);
    s.bytes.assign(data, data + bytes());
    s.first_unwritten = count_;
    for (std::size_t i = 0; i < count_; ++i) {
      if (word_is(data + i * elem, false)) {
        if (s.unwritten++ == 0) s.first_unwritten = i;
      }
    }
    return s;
  }

 private:
  void fill(unsigned char* p, std::size_t words, bool canary, cudaStream_t stream) {
    if (dtype_size(type_) == 4)
      detail::fill_words(reinterpret_cast<std::uint32_t*>(p), words, canary ? kCanary32 : kPoison32, stream);
    else
      detail::fill_words(reinterpret_cast<std::uint64_t*>(p), words, canary ? kCanary64 : kPoison64, stream);
  }
  bool word_is(const unsigned char* p, bool canary) const {
    if (dtype_size(type_) == 4) {
      std::uint32_t w;
      std::memcpy(&w, p, 4);
      return w == (canary ? kCanary32 : kPoison32);
    }
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w == (canary ? kCanary64 : kPoison64);
  }
  bool all_equal(const unsigned char* p, std::size_t words, bool canary) const {
    for (std::size_t i = 0; i < words; ++i)
      if (!word_is(p + i * dtype_size(type_), canary)) return false;
    return true;
  }

  std::string name_;
  DType type_;
  std::size_t count_;
  std::vector<std::int64_t> dims_;
  Tolerance tolerance_;
  std::size_t guard_words_;
  DeviceBuffer<unsigned char> storage_;
};

// The typed face a driver uses: `OutputBuffer<float> out{"out", n, {rows, cols}, {1e-6, 0}};`
template <class T>
class OutputBuffer : public Output {
 public:
  OutputBuffer(std::string name, std::size_t count, std::vector<std::int64_t> dims, Tolerance tolerance = {})
      : Output(std::move(name), dtype_of<T>(), count, std::move(dims), tolerance) {}
  T* data() { return static_cast<T*>(raw_data()); }
};

}  // namespace memlabs
