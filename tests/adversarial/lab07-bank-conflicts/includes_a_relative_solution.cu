// attack: includes the solution by a path relative to the lab folder, guarded by __has_include so that it builds
// attack: either way; the submission is compiled in a private folder where no such path leads anywhere
// expect: build fails
// message: launch_transpose
// not-shown: tile[threadIdx.x][threadIdx.y + j]
#if __has_include("../../solutions/lab07-bank-conflicts/kernel.cu")
#include "../../solutions/lab07-bank-conflicts/kernel.cu"
#elif __has_include("../../../solutions/lab07-bank-conflicts/kernel.cu")
#include "../../../solutions/lab07-bank-conflicts/kernel.cu"
#endif
