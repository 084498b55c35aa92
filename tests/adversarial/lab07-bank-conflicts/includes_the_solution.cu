// attack: includes the solution by its absolute path in the instructor's course (a submission knows every path)
// expect: build fails
// message: includes a file that is neither the lab's nor common/'s header nor the toolkit's
// not-shown: tile[threadIdx.x][threadIdx.y + j]
#include "@COURSE_ROOT@/solutions/lab07-bank-conflicts/kernel.cu"
