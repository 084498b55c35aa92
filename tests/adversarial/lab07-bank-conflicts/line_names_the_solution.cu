// attack: #line gives the lines after it the solution's name, so that a #warning quotes the solution's line 22 (its
// attack: padded tile's read) into the diagnostics, which a batch copies into Gradescope's output; the -M include
// attack: check does not see it, since nothing is included
// expect: build fails
// message: kernel.cu's #line directive on line 8 names a file that is neither kernel.cu nor a header it may include
// not-shown: tile[threadIdx.x][threadIdx.y + j]
#include "lab.cuh"
#line 22 "@COURSE_ROOT@/solutions/lab07-bank-conflicts/kernel.cu"
#warning quotes line 22 of the solution
int not_cpp = ;
