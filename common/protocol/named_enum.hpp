// An enum written by its name: each such enum lists its values once (an array
// kEvery...) and names them in one exhaustive switch (name_of). Reading a name
// back is here, once: a name outside the list is an error, never a default.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace memlabs {

// The value of `every` whose name_of is `name`, or nothing.
template <class E, std::size_t N>
std::optional<E> enum_named(const std::string& name, const E (&every)[N]) {
  for (E e : every)
    if (name == name_of(e)) return e;
  return std::nullopt;
}

// A JSON string read as one of `every`; `what` says what the name is of.
template <class E, std::size_t N>
E enum_from_json(const nlohmann::json& j, const E (&every)[N], const char* what) {
  const std::string name = j.get<std::string>();
  if (const std::optional<E> e = enum_named(name, every)) return *e;
  throw std::runtime_error(std::string("a ") + what + " outside the protocol: \"" + name + "\"");
}

}  // namespace memlabs
