// Stated measurements and the committed runs behind them (lesson_numbers.hpp).
#include "lesson_numbers.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include "lesson_rows.hpp"
#include "text.hpp"

namespace grader {
namespace {

namespace fs = std::filesystem;

const std::string kNotMeasured = "<!-- not measured:";

// Longest first, so that "GFLOP/s" is not read as a bare number before "G",
// nor "ms" as seconds.
const std::vector<std::string> kUnits = {"TFLOP/s", "GFLOP/s", "GB/s", "TB/s", "cycles", "times", "ms",
                                         "µs",      "us",      "ns",   "s",    "×",      "x",     "%"};

// "times" is a ratio only before a comparison ("663 times slower", "2 times the
// bandwidth"); "run it 3 times" is a count.
bool compares_after(const std::string& s, std::size_t after) {
  static const std::vector<std::string> kComparisons = {" faster", " slower", " as ", " the ", " more", " less"};
  for (const auto& w : kComparisons)
    if (s.compare(after, w.size(), w) == 0) return true;
  return false;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where the sentence that ends just before `marker` starts, or npos when
// nothing but blanks lies between the paragraph's start and the marker.
std::size_t sentence_before(const std::string& s, std::size_t paragraph, std::size_t marker) {
  const auto ends_sentence = [](char c) { return c == '.' || c == '!' || c == '?'; };
  std::size_t end = marker;
  while (end > paragraph && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
  if (end == paragraph) return std::string::npos;
  if (ends_sentence(s[end - 1])) --end;
  for (std::size_t i = end; i > paragraph; --i)
    if (ends_sentence(s[i - 1]) && std::isspace(static_cast<unsigned char>(s[i]))) return i;
  return paragraph;
}

// `text` with the spans that are not prose blanked out, newlines kept, so
// that offsets and line numbers still point into the original.
std::string prose_only(const std::string& text) {
  std::string out = text;
  const auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to && i < out.size(); ++i)
      if (out[i] != '\n') out[i] = ' ';
  };
  const auto blank_between = [&](const std::string& open, const std::string& close) {
    for (std::size_t at = text.find(open); at != std::string::npos; at = text.find(open, at + 1)) {
      const std::size_t end = text.find(close, at + open.size());
      const std::size_t stop = end == std::string::npos ? text.size() : end + close.size();
      blank(at, stop);
      at = stop - 1;
    }
  };
  blank_between("<!-- measured:", "<!-- /measured -->");
  blank_between("<!-- checks:", "<!-- /checks:");
  blank_between("<!-- row:", "-->");
  blank_between("<!-- fact:", "-->");
  blank_between("```", "```");
  // Inline code: commands, identifiers and sizes (`-Xptxas -v`, `32x8`).
  for (std::size_t at = out.find('`'); at != std::string::npos; at = out.find('`', at + 1)) {
    const std::size_t end = out.find('`', at + 1);
    if (end == std::string::npos || out.find('\n', at) < end) continue;
    blank(at, end + 1);
    at = end;
  }
  // Figures that are not this course's runs: a marker that opens a paragraph
  // says so of the paragraph, one that follows a sentence of that sentence.
  for (std::size_t at = out.find(kNotMeasured); at != std::string::npos; at = out.find(kNotMeasured, at + 1)) {
    auto [begin, end] = paragraph_around(out, at);
    const std::size_t sentence = sentence_before(out, begin, at);
    if (sentence != std::string::npos) {
      const std::size_t close = out.find("-->", at);
      end = close == std::string::npos ? end : std::min(end, close + 3);
      begin = sentence;
    }
    blank(begin, end);
    at = end - 1;
  }
  return out;
}

// What a count counts: a number before one of these (singular or plural) is
// a fact about the hardware, the lab's design or a run, and a lesson must say
// which. Returned singular, so that "1 warp" and "40 warps" are one unit.
std::string count_noun_at(const std::string& s, std::size_t i) {
  static const std::vector<std::string> kNouns = {
      "register",    "warp",  "block", "thread", "wavefront", "conflict", "sector", "request", "load",  "store",
      "instruction", "byte",  "pass",  "launch", "SM",        "bank",     "lane",   "element", "float", "word",
      "transaction", "texel", "tap",   "KB",     "KiB",       "MB",       "MiB",    "GB",      "GiB",   "TB"};
  for (const auto& noun : kNouns) {
    if (s.compare(i, noun.size(), noun) != 0) continue;
    std::size_t after = i + noun.size();
    if (s.compare(after, 2, "es") == 0 && (noun == "pass" || noun == "launch"))
      after += 2;
    else if (after < s.size() && s[after] == 's')
      ++after;
    // "blockDim", "GB/s", "warp-wide"
    if (after < s.size() && (is_word_char(s[after]) || s[after] == '/' || s[after] == '-')) continue;
    return noun;
  }
  return "";
}

std::string unit_at(const std::string& s, std::size_t i) {
  for (const auto& u : kUnits) {
    if (s.compare(i, u.size(), u) != 0) continue;
    const std::size_t after = i + u.size();
    // "ms" in "msec" or "x" in "x86" is no unit.
    if (std::isalpha(static_cast<unsigned char>(u.back())) && after < s.size() && is_word_char(s[after])) continue;
    if (u == "times" && !compares_after(s, after)) continue;
    return u;
  }
  return "";
}

// A factor of a size: "1000×777", "32 × 32", "8x32".
bool followed_by_factor(const std::string& s, std::size_t after_unit) {
  std::size_t j = after_unit;
  while (j < s.size() && (s[j] == ' ' || s[j] == '\n')) ++j;
  return j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]));
}

bool preceded_by_factor(const std::string& s, std::size_t start) {
  std::size_t j = start;
  while (j > 0 && (s[j - 1] == ' ' || s[j - 1] == '\n')) --j;
  if (j > 0 && s[j - 1] == 'x') return j < 2 || !is_word_char(s[j - 2]);
  const std::string times = "×";
  return j >= times.size() && s.compare(j - times.size(), times.size(), times) == 0;
}

// "step 1", "part 2", "lab 5": a number that names a part of the course, not a count.
bool names_a_part(const std::string& s, std::size_t start) {
  static const std::vector<std::string> kParts = {"step ", "steps ", "part ", "lab ", "hint ", "round ", "run "};
  for (const auto& p : kParts)
    if (start >= p.size() && lower(s.substr(start - p.size(), p.size())) == p) return true;
  return false;
}

// "2R + 1 loads", "n / 256 blocks": a term of a formula, not a count.
bool in_a_formula(const std::string& s, std::size_t start) {
  std::size_t j = start;
  while (j > 0 && s[j - 1] == ' ') --j;
  return j < start && j > 0 && std::string("+-*/=").find(s[j - 1]) != std::string::npos;
}

bool digit_at(const std::string& s, std::size_t i) {
  return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
}

// The number that starts at s[i] (a digit), as written without its thousands
// separators ("32,768" is 32768, "4.925" stays); `end` is just past it.
std::string read_number(const std::string& s, std::size_t i, std::size_t& end) {
  std::string value;
  for (; i < s.size(); ++i) {
    const bool no_point = value.find('.') == std::string::npos;
    if (digit_at(s, i)) {
      value += s[i];
    } else if (s[i] == '.' && no_point && digit_at(s, i + 1)) {
      value += '.';
    } else if (!(s[i] == ',' && no_point && digit_at(s, i + 1) && digit_at(s, i + 2) && digit_at(s, i + 3) &&
                 !digit_at(s, i + 4))) {
      break;
    }
  }
  end = i;
  return value;
}

// Every number in a source.
std::vector<double> numbers_in(const std::string& source) {
  std::vector<double> out;
  for (std::size_t i = 0; i < source.size(); ++i)
    if (digit_at(source, i)) {
      std::size_t end = i;
      out.push_back(std::stod(read_number(source, i, end)));
      i = end - 1;
    }
  return out;
}

int decimals_of(const std::string& value) {
  const std::size_t dot = value.find('.');
  return dot == std::string::npos ? 0 : static_cast<int>(value.size() - dot - 1);
}

// The measurement files a text names, relative to the course root: a log by
// its file name ("h100-subword-bank-conflicts.log"), any other by its path
// ("docs/measurements/h100-before-and-after-referee.md").
std::set<std::string> named_measurements(const std::string& text) {
  static const std::regex log_name(R"((^|[^A-Za-z0-9_./-])([A-Za-z0-9_.-]+\.log)\b)");
  static const std::regex path(R"((docs/measurements/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.(md|log|txt))\b)");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), log_name); it != std::sregex_iterator(); ++it)
    out.insert(kMeasurementLogs + std::string((*it)[2]));
  for (auto it = std::sregex_iterator(text.begin(), text.end(), path); it != std::sregex_iterator(); ++it)
    if (std::string((*it)[1]).find("..") == std::string::npos) out.insert((*it)[1]);
  return out;
}

// A ratio in words: "three times faster", "Ten times the bandwidth", "twice as
// fast". "Run it three times" is a count, as with digits; "twice the registers"
// and "half the threads" are too often a plain fact to read as a measurement.
struct WordRatio {
  std::size_t start, end;  // the phrase ("three times", "twice as"), in the text
  std::string value;
};
std::vector<WordRatio> ratios_in_words(const std::string& s) {
  static const std::vector<std::pair<std::string, std::string>> kWords = {
      {"two", "2"},   {"three", "3"}, {"four", "4"}, {"five", "5"},    {"six", "6"},     {"seven", "7"},
      {"eight", "8"}, {"nine", "9"},  {"ten", "10"}, {"eleven", "11"}, {"twelve", "12"}, {"twice", "2"}};
  const std::string lower = grader::lower(s);
  std::vector<WordRatio> out;
  for (const auto& [word, value] : kWords)
    for (std::size_t at = lower.find(word); at != std::string::npos; at = lower.find(word, at + 1)) {
      const std::size_t end = at + word.size();
      if ((at > 0 && is_word_char(lower[at - 1])) || (end < lower.size() && is_word_char(lower[end]))) continue;
      std::size_t k = end;
      while (k < lower.size() && lower[k] == ' ') ++k;
      if (word == "twice" ? lower.compare(k, 3, "as ") == 0
                          : lower.compare(k, 5, "times") == 0 && compares_after(lower, k + 5))
        out.push_back({at, k + (word == "twice" ? 2 : 5), value});
    }
  std::sort(out.begin(), out.end(), [](const WordRatio& a, const WordRatio& b) { return a.start < b.start; });
  return out;
}

// The number stated at text[start, end) (its unit included), with where it is
// and the words around it; `prose` is the text as prose_only left it.
StatedNumber stated_at(const std::string& text, const std::string& prose, std::size_t start, std::size_t end,
                       const std::string& value, const std::string& unit, const std::string& where_prefix,
                       bool line_numbers) {
  StatedNumber n;
  n.value = value;
  n.unit = unit;
  n.where = where_prefix;
  n.offset = start;
  if (line_numbers) n.where += ":" + std::to_string(1 + std::count(prose.begin(), prose.begin() + start, '\n'));
  const std::size_t from = start > 50 ? start - 50 : 0;
  n.context = trim(text.substr(from, end - from + 20));
  for (auto& c : n.context)
    if (c == '\n') c = ' ';
  return n;
}

}  // namespace

std::vector<StatedNumber> stated_numbers(const std::string& text, const std::string& where_prefix, bool line_numbers) {
  const std::string prose = prose_only(text);
  // A paragraph's line breaks read as spaces, so that "65,536\n  wavefronts" is
  // one stated number; `prose` keeps them for line numbers.
  std::string s = prose;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == '\n' && (i == 0 || prose[i - 1] != '\n') && (i + 1 == s.size() || prose[i + 1] != '\n')) s[i] = ' ';
  std::vector<StatedNumber> out;
  for (const auto& w : ratios_in_words(s))
    out.push_back(stated_at(text, prose, w.start, w.end, w.value, "times", where_prefix, line_numbers));
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) continue;
    // A number starts after a space, a bracket or punctuation: not inside
    // a word ("sm_90", "lab05"), a version ("13.0"), or a range's second half.
    const bool starts = i == 0 || !(is_word_char(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == ',' || s[i - 1] == '/' ||
                                    s[i - 1] == '-' || s[i - 1] == '^');
    std::size_t j = i;
    const std::string value = read_number(s, i, j);
    const std::size_t start = i;
    i = j - 1;
    if (!starts) continue;
    std::size_t k = j;
    while (k < s.size() && s[k] == ' ') ++k;
    std::string unit = unit_at(s, k);
    if (unit.empty()) {
      const std::string noun = count_noun_at(s, k);
      // "32 × 32 blocks" is a size; "step 1 passes" names a step; "2R + 1 loads" is a formula.
      if (noun.empty() || preceded_by_factor(s, start) || names_a_part(s, start) || in_a_formula(s, start)) continue;
      out.push_back(stated_at(text, prose, start, k + noun.size(), value, noun, where_prefix, line_numbers));
      continue;
    }
    if (unit == "s" && k == j) continue;  // "1990s", "4s" of a count: seconds are written "2.3 s"
    if ((unit == "×" || unit == "x") && (followed_by_factor(s, k + unit.size()) || preceded_by_factor(s, start)))
      continue;
    out.push_back(stated_at(text, prose, start, k + unit.size(), value, unit, where_prefix, line_numbers));
  }
  return out;
}

bool backed_by(const std::string& value, const std::string& source) {
  const int d = decimals_of(value);
  const double scale = std::pow(10.0, d);
  const long long want = std::llround(std::stod(value) * scale);
  for (const double v : numbers_in(source))
    // Half up, as a person rounds 4.925 to 4.93 (the double below 4.925 must not round down).
    if (static_cast<long long>(std::floor(v * scale + 0.5 + 1e-9)) == want) return true;
  return false;
}

namespace {

// A fact a lesson states once for all its text: <!-- fact: 32 threads: a warp
// (CUDA C++ Programming Guide) -->, a number, its unit, and where it comes from.
struct DeclaredFact {
  StatedNumber number;
  std::string problem;
};

std::vector<DeclaredFact> declared_facts(const std::string& lesson) {
  const std::string open = "<!-- fact: ";
  std::vector<DeclaredFact> out;
  for (std::size_t at = lesson.find(open); at != std::string::npos; at = lesson.find(open, at + 1)) {
    const std::size_t close = lesson.find("-->", at);
    const std::string inside =
        trim(lesson.substr(at + open.size(), close == std::string::npos ? 0 : close - at - open.size()));
    const std::size_t colon = inside.find(": ");
    DeclaredFact f;
    const auto numbers = colon == std::string::npos ? std::vector<StatedNumber>{}
                                                    : stated_numbers(inside.substr(0, colon), "fact", false);
    if (numbers.size() != 1 || trim(inside.substr(colon + 2)).empty())
      f.problem = "a fact reads \"<!-- fact: NUMBER UNIT: where it comes from -->\": " + inside;
    else
      f.number = numbers.front();
    out.push_back(f);
  }
  return out;
}

bool held_by_a_fact(const StatedNumber& n, const std::vector<DeclaredFact>& facts) {
  for (const auto& f : facts)
    if (f.problem.empty() && f.number.unit == n.unit && backed_by(n.value, f.number.value)) return true;
  return false;
}

// A count's row must say what it counts, in the row's own words: "Used 45
// registers", "Block Limit Registers", "32 LDG" for loads. A row of times or
// ratios names no unit and is read by its columns.
bool row_speaks_of(const std::string& row, const std::string& unit) {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kWords = {
      {"load", {"load", "ldg", "ld.", "request"}},
      {"store", {"store", "stg", "st."}},
      {"request", {"request", "load", "ld.", "st."}},
      {"byte", {"byte", "stack frame", "smem"}},
      {"KB", {"kb", "byte"}},
      {"KiB", {"kib", "byte"}},
      {"MB", {"mb", "byte"}},
      {"MiB", {"mib", "byte"}},
      {"GB", {"gb", "byte"}},
      {"GiB", {"gib", "byte"}}};
  if (std::find(kUnits.begin(), kUnits.end(), unit) != kUnits.end()) return true;
  const std::string l = lower(row);
  for (const auto& [u, words] : kWords)
    if (u == unit)
      return std::any_of(words.begin(), words.end(),
                         [&](const std::string& w) { return l.find(w) != std::string::npos; });
  return l.find(lower(unit)) != std::string::npos;
}

// Rows of the runs the lesson names that would back the number (a count's in
// words that say what it counts), as citations an author could paste: at most
// two, for the failing lint to suggest.
std::vector<std::string> rows_that_hold(const StatedNumber& n, const std::vector<std::string>& files,
                                        const std::string& lab_folder, const fs::path& course_root) {
  std::vector<std::string> out;
  for (const auto& file : files) {
    const auto text = read_file(course_root / file);
    if (!text) continue;
    std::istringstream lines(quotable_text(*text, file, lab_folder));
    for (std::string line; std::getline(lines, line) && out.size() < 2;)
      if (backed_by(n.value, line) && row_speaks_of(line, n.unit)) {
        const std::string cited =
            starts_with(file, kMeasurementLogs) ? file.substr(std::string_view(kMeasurementLogs).size()) : file;
        out.push_back("<!-- row: " + cited + ": " + trim(line).substr(0, 60) + " -->");
      }
  }
  return out;
}

bool held_by_a_row(const StatedNumber& n, const std::vector<CitedRow>& rows, bool in_paragraph) {
  for (const auto& r : rows)
    if (r.problem.empty() && (!in_paragraph || (n.offset >= r.paragraph_begin && n.offset < r.paragraph_end)) &&
        backed_by(n.value, r.row) && row_speaks_of(r.row, n.unit))
      return true;
  return false;
}

}  // namespace

LintItem lint_lesson_numbers(const std::string& readme, const std::vector<LessonHint>& hints,
                             const std::string& lab_folder, const fs::path& course_root) {
  const std::vector<CitedRow> rows = cited_rows(readme, lab_folder, course_root);
  std::vector<std::string> problems;
  for (const auto& r : rows)
    if (!r.problem.empty()) problems.push_back("README.md: " + r.problem);
  const std::vector<DeclaredFact> facts = declared_facts(readme);
  for (const auto& f : facts)
    if (!f.problem.empty()) problems.push_back("README.md: " + f.problem);
  // Where a suggestion for an uncited number may come from: the runs the lesson names or cites.
  std::string all_text = readme;
  for (const auto& h : hints) all_text += "\n" + h.text;
  std::set<std::string> named = named_measurements(all_text);
  for (const auto& r : rows)
    if (r.problem.empty()) named.insert(r.file);
  const std::vector<std::string> files(named.begin(), named.end());

  // A lesson's number needs a row cited in its own paragraph; a hint's, a row the lesson cites.
  std::vector<std::pair<StatedNumber, bool>> stated;
  for (auto& n : stated_numbers(readme, "README.md")) stated.emplace_back(n, true);
  for (const auto& h : hints)
    for (auto& n : stated_numbers(h.text, h.where, false)) stated.emplace_back(n, false);
  std::size_t unbacked = 0;
  for (const auto& [n, in_paragraph] : stated) {
    if (held_by_a_row(n, rows, in_paragraph) || held_by_a_fact(n, facts)) continue;
    ++unbacked;
    std::string line = n.where + ": " + n.value + " " + n.unit + " (\"…" + n.context + "…\"): " +
                       (in_paragraph ? "no row cited in its paragraph holds it" : "no row the lesson cites holds it");
    const auto suggestions = rows_that_hold(n, files, lab_folder, course_root);
    if (!suggestions.empty()) line += "; rows of the named runs that do: " + join(suggestions, " or ");
    problems.push_back(line);
  }
  if (problems.empty())
    return make_item("lesson_numbers", LintStatus::pass,
                     std::to_string(stated.size()) + " stated number" + (stated.size() == 1 ? "" : "s") +
                         " in the lesson and its hints, each held by a row it cites or a fact it states (" +
                         std::to_string(rows.size()) + " row" + (rows.size() == 1 ? "" : "s") + ", " +
                         std::to_string(facts.size()) + " fact" + (facts.size() == 1 ? "" : "s") + ")");
  const std::size_t found = problems.size();
  problems.push_back(
      "cite the committed run's row in the number's paragraph: <!-- row: LOG_NAME.log: text of the row --> or "
      "<!-- row: docs/measurements/h100.md: text of the row -->; state a fact of the hardware or of the lab's "
      "design once with its source: <!-- fact: 32 threads: a warp (CUDA C++ Programming Guide) -->; a figure that "
      "is not this course's run (a source lesson's claim, arithmetic) is marked <!-- not measured: why --> after "
      "its sentence");
  return make_item("lesson_numbers", LintStatus::fail,
                   unbacked > 0 ? std::to_string(unbacked) + " stated number" + (unbacked == 1 ? "" : "s") +
                                      " in the lesson or its hints that no cited row or stated fact holds"
                                : std::to_string(found) + " row citation" + (found == 1 ? "" : "s") + " or fact" +
                                      (found == 1 ? "" : "s") + " that name nothing",
                   problems);
}

}  // namespace grader
