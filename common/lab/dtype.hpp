// Element types an output can have; shared by the referee (which checks output
// files) and the grader (which reads and compares them). Host-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace memlabs {

enum class DType { f32, f64, i32, u32, i64, u64 };

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::i32:
      return "i32";
    case DType::u32:
      return "u32";
    case DType::i64:
      return "i64";
    case DType::u64:
      return "u64";
  }
  return "?";
}

inline std::optional<DType> parse_dtype(const std::string& s) {
  for (DType t : {DType::f32, DType::f64, DType::i32, DType::u32, DType::i64, DType::u64})
    if (s == dtype_name(t)) return t;
  return std::nullopt;
}

inline std::size_t dtype_size(DType t) { return (t == DType::f32 || t == DType::i32 || t == DType::u32) ? 4 : 8; }

inline bool dtype_is_float(DType t) { return t == DType::f32 || t == DType::f64; }

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::i32;
}
template <>
constexpr DType dtype_of<std::uint32_t>() {
  return DType::u32;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::i64;
}
template <>
constexpr DType dtype_of<std::uint64_t>() {
  return DType::u64;
}

}  // namespace memlabs
