// lab02 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.cuh"  // CUDA_CHECK(call): throws with the file, line and call text

// ---- Part A: c = a + b, once with cudaMalloc'd buffers, once with __device__ arrays ----

// How many floats each of the static path's __device__ arrays holds: the largest n
// vector_add_static is ever called with.
constexpr int STATIC_CAPACITY = 1 << 22;

// a, b and c are HOST arrays of n floats, n >= 1. Each function copies a and b to the
// device, adds them there, copies the sum back into c, and returns only when c holds it.
// Neither may leave device memory allocated behind it.
void vector_add_dynamic(float* c, const float* a, const float* b, int n);
// The same through module-scope __device__ arrays; 1 <= n <= STATIC_CAPACITY.
void vector_add_static(float* c, const float* a, const float* b, int n);

// ---- Part B: a 2-D kernel and its index mapping ----

// out[r][c] = in[r][c] * row_scale[r] + col_shift[c] for every r < rows, c < cols.
// Device arrays; in and out are rows x cols, row-major; rows, cols >= 1, neither a
// multiple of anything in particular.
void launch_scale_shift(float* out, const float* in, const float* row_scale, const float* col_shift,
                        int rows, int cols, cudaStream_t stream);

// ---- Part C: a record's fields, interleaved or each in an array of its own ----

// One particle: eight floats, 32 bytes, its fields side by side. An array of these is
// an array of structures: particle i's x lies 32 bytes after particle i - 1's.
struct Particle {
  float x, y, z, vx, vy, vz, mass, charge;
};

// The same particles as a structure of arrays: each field in a device array of its own,
// n floats long, so particle i's x lies right after particle i - 1's.
struct Particles {
  const float *x, *y, *z, *vx, *vy, *vz, *mass, *charge;
};

// out[i] = x[i] + vx[i] * dt for every i < n, n >= 1: where each particle is after dt.
// `out` is a device array of n floats.
void launch_drift(float* out, Particles p, int n, float dt, cudaStream_t stream);
