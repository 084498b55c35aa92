// Which files a kernel.cu's build may name as where its lines come from. A #line
// directive or a line marker (`# 12 "file"`) renames the lines after it, and a
// compiler that quotes the line a message is about opens the file so named: with
// `#line 22 "<course>/solutions/lab07-bank-conflicts/kernel.cu"` a #warning
// printed line 22 of the solution into a grade, and with `#line 2
// "/proc/self/exe"` a binary's bytes. Nothing is included, so the -M check does
// not see it. A kernel.cu may name only itself and the files it may include:
// in its directives (before anything is built), in its preprocessed code's line
// markers (a macro can make the file name), and in every compiler message shown.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace grader {

// The files a kernel.cu's build may name: the staged kernel.cu and headers, also
// by the names messages show them by ("kernel.cu", "lab.cuh", "common/lab/x.cuh");
// files under the roots a kernel.cu may include from (the toolkit's and the
// system's headers); and the compiler's own "<built-in>" and "<command-line>".
// A relative name is looked up in `cwd`, where the compiler opens it.
class PublicFiles {
 public:
  PublicFiles(std::filesystem::path stage, std::filesystem::path cwd, std::vector<std::filesystem::path> roots);
  bool contains(const std::string& name) const;

 private:
  std::filesystem::path stage_, cwd_;
  std::vector<std::filesystem::path> roots_;
};

// A preprocessing directive as the preprocessor reads it: `text` is what follows
// the "#" (or "%:") with comments as spaces, `line` the line it starts on.
struct Directive {
  std::size_t line = 0;
  std::string text;
};
// Lines are joined at a backslash-newline (blanks may follow the backslash), CR
// and CRLF end lines, and comments and string, character and raw string
// literals hide what is in them. Where it cannot tell, it takes a "#" for a
// directive: a directive it finds that is none costs a refusal, one it missed
// would cost a leak.
std::vector<Directive> preprocessing_directives(const std::string& source);

// "" or the sentence that refuses `source` (kernel.cu): one of its #line
// directives or line markers names a file `files` does not hold, or names its
// file other than by a plain string literal (a macro could make any name).
std::string foreign_line_directive(const std::string& source, const PublicFiles& files);

// "" or the sentence that refuses a build whose preprocessed code (`.ii`) has a
// line marker or #line naming a file `files` does not hold.
std::string foreign_line_marker(const std::string& preprocessed, const PublicFiles& files);

}  // namespace grader
