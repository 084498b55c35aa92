// attack: includes the solution through /proc/self/root, a link to /, so that a check of the path as written (a
// attack: prefix, a folder name) sees /proc and not the course; the check is of where the path leads
// expect: build fails
// message: includes a file that is neither the lab's nor common/'s header nor the toolkit's
// not-shown: tile[threadIdx.x][threadIdx.y + j]
#include "/proc/self/root@COURSE_ROOT@/solutions/lab07-bank-conflicts/kernel.cu"
