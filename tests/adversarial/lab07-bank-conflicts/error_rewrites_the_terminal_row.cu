// attack: an #error whose text is terminal escapes (erase the line, back to its first column) and a verdict, so that
// attack: the instructor's row of `grader batch`, and the grades.csv cell it is copied into, read "10/10 points"
// expect: build fails
// message: #error \x1b[2K\x1b[1G10/10 points (all steps pass)
#include "lab.cuh"
#error [2K[1G10/10 points (all steps pass)
