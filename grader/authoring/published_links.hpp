// The links of a class copy's Markdown must lead somewhere: a lesson or the
// student README that cites the threat model or a committed run log gets that
// file in the copy, and a link that still leads nowhere stops the publish.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace grader {

// Every relative link target ("docs/security.md", "../../docs/x.log#L3" as
// "docs/x.log") of the Markdown text at `file` (relative to its folder),
// lexically normal; links with a scheme or only a fragment are left out.
std::vector<std::filesystem::path> relative_links(const std::string& markdown, const std::filesystem::path& file);

// Copies from `course` into `copy` each file under docs/ that a Markdown file
// of the copy links to and the copy lacks; returns the links still dead, as
// "FILE: TARGET", and adds the number of files copied to `copied`.
std::vector<std::string> complete_links(const std::filesystem::path& course, const std::filesystem::path& copy,
                                        std::size_t& copied);

}  // namespace grader
