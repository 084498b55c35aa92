// The numbers a command line may hold. CLI11's Range lets NaN through (every
// comparison with it is false), and a NaN or infinite --cap never ends a
// timing, a NaN --hint-penalty writes NaN into a gradebook: these checks read
// the option's text themselves and refuse anything but a finite number.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace grader {

// A finite number from lo to hi; `unit` names it in the message ("seconds").
CLI::Validator number_between(double lo, double hi, const std::string& unit);

// Points off per hint: a finite number, 0 or more.
CLI::Validator points_per_hint();

// A seed as a grade prints it: a whole number from 0 to 2^64 - 1, in decimal
// (leading zeros are still decimal) or in hex after 0x. Nothing else: no sign,
// no spaces, no trailing text.
std::optional<std::uint64_t> parse_seed(const std::string& text);
CLI::Validator seed_number();

}  // namespace grader
