// attack: the #line's file name is made by macros (stringised at preprocessing time), so that no search of the
// attack: directive's text finds a path; a #line may name its file only by a plain string literal, and the line
// attack: markers of the preprocessed code are checked too
// expect: build fails
// message: kernel.cu's #line directive on line 11 names a file that is neither kernel.cu nor a header it may include, or makes the name with a macro
// not-shown: tile[threadIdx.x][threadIdx.y + j]
#include "lab.cuh"
#define QUOTE(x) #x
#define PATH(x) QUOTE(x)
#define SOLUTION PATH(@COURSE_ROOT@/solutions/lab07-bank-conflicts/kernel.cu)
#line 22 SOLUTION
#warning quotes line 22 of the solution
int not_cpp = ;
