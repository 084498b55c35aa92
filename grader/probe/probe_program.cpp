// The device probe (common/referee/probe_main.cu), built with the host compiler when
// the grader is built: it holds no device code, so a first grade need not
// wait for nvcc to build it (Builder::probe falls back to that when this
// program is not beside the grader).
#include "referee/probe_main.cu"
