// common/shared_memory.cu for the device probe built with the host compiler
// (probe_program.cpp): the allocation functions of DeviceBuffer.
#include "shared_memory.cu"
