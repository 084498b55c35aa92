#include "number_checks.hpp"

#include <charconv>
#include <cmath>

#include "gradebook.hpp"

namespace grader {
namespace {

// The whole text as one finite number, or nothing.
std::optional<double> finite_number(const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || stop != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

CLI::Validator number_between(double lo, double hi, const std::string& unit) {
  const std::string want = "a number" + (unit.empty() ? "" : " of " + unit) + " from " + format_number(lo, 3) + " to " +
                           format_number(hi, 3);
  return CLI::Validator(
      [lo, hi, want](std::string& text) -> std::string {
        const auto v = finite_number(text);
        return v && *v >= lo && *v <= hi ? "" : "must be " + want + ", got " + text;
      },
      "NUMBER " + format_number(lo, 3) + ".." + format_number(hi, 3));
}

CLI::Validator points_per_hint() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto v = finite_number(text);
        return v && *v >= 0 ? "" : "must be a number of points, 0 or more, got " + text;
      },
      "POINTS >= 0");
}

std::optional<std::uint64_t> parse_seed(const std::string& text) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const char* begin = text.data() + (hex ? 2 : 0);
  const char* end = text.data() + text.size();
  if (begin == end) return std::nullopt;
  std::uint64_t v = 0;
  const auto [stop, ec] = std::from_chars(begin, end, v, hex ? 16 : 10);
  if (ec != std::errc() || stop != end) return std::nullopt;
  return v;
}

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return parse_seed(text) ? ""
                                : "must be a whole number from 0 to 18446744073709551615, as a grade prints its "
                                  "seed, got " +
                                      text;
      },
      "SEED");
}

}  // namespace grader
