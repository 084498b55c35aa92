// attack: GCC's line marker form of #line ("# 22 file"), after a comment that spans lines, with a comment after the
// attack: "#" and the number split by a backslash-newline: a line-by-line search for "#line" finds none of it
// expect: build fails
// message: kernel.cu's #line directive on line 9 names a file that is neither kernel.cu nor a header it may include
// not-shown: tile[threadIdx.x][threadIdx.y + j]
#include "lab.cuh"
/* the marker is the first token of the line
   this comment starts on
 */ # /* a comment */ 2\
2 "@COURSE_ROOT@/solutions/lab07-bank-conflicts/kernel.cu"
#warning quotes line 22 of the solution
int not_cpp = ;
