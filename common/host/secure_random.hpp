// Numbers the submission's program cannot predict from what it sees: the
// operating system's random source (std::random_device: getrandom or the
// CPU's generator), 64 bits at a time. A seeded generator would not do: a
// mt19937_64 seeded from 32 bits, one of whose outputs reached the program as
// a batch's host seed, could be found by trying every seed, and every later
// input seed and slot order with it.
#pragma once

#include <cstdint>
#include <limits>
#include <random>

namespace memlabs {

// A UniformRandomBitGenerator (std::shuffle takes it) over the system's source.
class SecureRandom {
 public:
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()() {
    static_assert(sizeof(std::random_device::result_type) == 4, "two draws make 64 bits");
    return (static_cast<result_type>(device_()) << 32) | device_();
  }

 private:
  std::random_device device_;
};

inline std::uint64_t secure_random_u64() {
  static thread_local SecureRandom r;
  return r();
}

}  // namespace memlabs
