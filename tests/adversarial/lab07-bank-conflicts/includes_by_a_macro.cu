// attack: the include's path is made by macros (stringised at preprocessing time), so that no text search of the
// attack: source finds a quoted path or the word solutions; the preprocessor's own list of what it read is checked
// expect: build fails
// message: includes a file that is neither the lab's nor common/'s header nor the toolkit's
// not-shown: tile[threadIdx.x][threadIdx.y + j]
#define QUOTE(x) #x
#define PATH(x) QUOTE(x)
#include PATH(@COURSE_ROOT@/solutions/lab07-bank-conflicts/kernel.cu)
