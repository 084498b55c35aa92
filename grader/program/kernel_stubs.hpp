// The kernels a linked program defines, read from its host-side launch stubs
// (nvcc makes one, `__device_stub__<kernel>`, per kernel and translation unit).
// ncu names a launch by its kernel's mangled name only, so a kernel.cu that
// defines a kernel with the very mangled name of one of the lab's own (its
// anonymous namespace's name can be rebuilt) could pass the baseline's launches
// off as its own. Such a name has two stubs in the program: it is no evidence
// of whose kernel ran (launch_record.hpp).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace grader {

// The mangled names of kernels with more than one stub in `nm`'s listing of a program.
std::vector<std::string> kernels_defined_twice(const std::string& nm_output);

// The same for `program`, by running nm; nullopt when nm is missing or fails.
std::optional<std::vector<std::string>> kernels_defined_twice_in(const std::filesystem::path& program);

}  // namespace grader
