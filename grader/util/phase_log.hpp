// Where a grade's time goes. Every Activity (finding the toolkit, the device
// probe, the build, each referee run, each ncu or compute-sanitizer run) is
// noted here when it ends: what it was, when it began and how long it took,
// counted from the process's start. `grader grade --timings` prints
// them; the JSON report always carries them ("phases"). A profile of the
// grader itself, never a measurement of the student's kernel.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace grader {

struct Phase {
  std::string what;
  double start_s = 0;  // since the process started
  double seconds = 0;
  int depth = 0;  // 0: outermost; an Activity inside another is one deeper
};

void note_phase(const std::string& what, std::chrono::steady_clock::time_point begin,
                std::chrono::steady_clock::time_point end, int depth);

double seconds_since_start();

// Every phase noted so far, in the order they began.
std::vector<Phase> noted_phases();

// "  0.41 s  looking for the GPU" lines, indented by depth, and the sum of the
// outermost ones against `total_s` ("other" is what no Activity covered).
std::string format_phases(const std::vector<Phase>& phases, double total_s);

}  // namespace grader
