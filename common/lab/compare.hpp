// Compares an output with its expected value. Floats: |got - want| <= atol +
// rtol * |want| (NaN never passes); integers: exactly. Host-only, shared by the
// runner (checks at the timing size) and the grader (student vs reference).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "dtype.hpp"

namespace memlabs {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

struct Mismatch {
  std::size_t index = 0;
  std::string where;  // "[row, col]" for 2-D outputs, "[i]" otherwise
  double expected = 0, got = 0;
};

struct CompareResult {
  std::size_t count = 0;
  std::size_t mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::vector<Mismatch> first;  // the first few, in index order
  bool ok() const { return mismatches == 0; }
};

// Row-major index to "[i, j, ...]" given the shape (outermost first).
inline std::string format_index(std::size_t flat, const std::vector<std::int64_t>& dims) {
  if (dims.size() < 2) return "[" + std::to_string(flat) + "]";
  std::vector<std::int64_t> idx(dims.size());
  for (std::size_t d = dims.size(); d-- > 0;) {
    idx[d] = static_cast<std::int64_t>(flat % static_cast<std::size_t>(dims[d]));
    flat /= static_cast<std::size_t>(dims[d]);
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

namespace detail {
template <class T>
double load_as_double(const void* base, std::size_t i) {
  T v;
  std::memcpy(&v, static_cast<const unsigned char*>(base) + i * sizeof(T), sizeof(T));
  return static_cast<double>(v);
}

inline double element(DType t, const void* base, std::size_t i) {
  switch (t) {
    case DType::f32:
      return load_as_double<float>(base, i);
    case DType::f64:
      return load_as_double<double>(base, i);
    case DType::i32:
      return load_as_double<std::int32_t>(base, i);
    case DType::u32:
      return load_as_double<std::uint32_t>(base, i);
    case DType::i64:
      return load_as_double<std::int64_t>(base, i);
    case DType::u64:
      return load_as_double<std::uint64_t>(base, i);
  }
  return 0;
}
}  // namespace detail

inline bool within_tolerance(double want, double got, Tolerance tol, bool is_float) {
  if (!is_float) return want == got;
  if (std::isnan(got) || std::isnan(want)) return false;
  if (std::isinf(want) || std::isinf(got)) return want == got;
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

// `expected` may be in any dtype (float64 for an oracle); `got` is in `got_type`.
inline CompareResult compare_values(DType expected_type, const void* expected, DType got_type, const void* got,
                                    std::size_t count, const std::vector<std::int64_t>& dims, Tolerance tol,
                                    std::size_t keep_first = 5) {
  CompareResult r;
  r.count = count;
  const bool is_float = dtype_is_float(got_type) || dtype_is_float(expected_type);
  for (std::size_t i = 0; i < count; ++i) {
    const double want = detail::element(expected_type, expected, i);
    const double have = detail::element(got_type, got, i);
    const double abs_err = std::fabs(have - want);
    if (!std::isnan(abs_err)) {
      r.max_abs_error = std::max(r.max_abs_error, abs_err);
      if (want != 0) r.max_rel_error = std::max(r.max_rel_error, abs_err / std::fabs(want));
    }
    if (!within_tolerance(want, have, tol, is_float)) {
      if (r.first.size() < keep_first) r.first.push_back({i, format_index(i, dims), want, have});
      ++r.mismatches;
    }
  }
  return r;
}

inline std::string describe_mismatches(const CompareResult& r) {
  std::ostringstream os;
  os.precision(7);
  os << r.mismatches << " of " << r.count << " elements differ";
  for (const auto& m : r.first) os << "; at " << m.where << " expected " << m.expected << ", got " << m.got;
  return os.str();
}

}  // namespace memlabs
