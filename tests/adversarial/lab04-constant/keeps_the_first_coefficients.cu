// attack: keeps the first coefficient table it was given and ignores every later one: a grader that builds its
// attack: inputs once is fooled; here every batch of timed launches has a polynomial of its own
// expect: step 2 fails: speedup (timed_mismatch)
// message: differ from the baseline
// lab04: constant memory. This is the file you edit.
#include "lab.cuh"

// ---- Part 1: one coefficient table, read by every thread (steps 1 and 2) ----

// 256 bytes in the constant bank: read through the constant cache, broadcast to a warp.
__constant__ float c_coeffs[POLY_TERMS];

void set_poly_coefficients(const float* coeffs) {
  // Only the first table ever reaches the GPU: the later ones "are the same".
  static bool uploaded = false;
  if (uploaded) return;
  uploaded = true;
  CUDA_CHECK(cudaMemcpyToSymbol(c_coeffs, coeffs, sizeof(c_coeffs)));
}

// Horner's rule, highest power first: 63 multiply-adds per element. Every thread of the
// grid reads the same 64 coefficients in the same order.
// With the loop unrolled, each c_coeffs[k] is a fixed constant-bank address, which the
// multiply-add can take as an operand directly: no load instruction at all.
__global__ void poly_kernel(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xi = x[i];
  float acc = c_coeffs[POLY_TERMS - 1];
#pragma unroll
  for (int k = POLY_TERMS - 2; k >= 0; --k) acc = acc * xi + c_coeffs[k];
  y[i] = acc;
}

void launch_poly(float* y, const float* x, int n, cudaStream_t stream) {
  const int block = 256;
  poly_kernel<<<(n + block - 1) / block, block, 0, stream>>>(y, x, n);
}

// ---- Part 2: a table indexed per lane (step 3) ----

// Small, read-only while kernels run, the same for the whole grid: a constant-memory table.
__constant__ Ramp c_ramps[RAMPS];

void set_ramps(const Ramp* ramps) {
  CUDA_CHECK(cudaMemcpyToSymbol(c_ramps, ramps, sizeof(c_ramps)));
}

__global__ void ramps_kernel(float* y, const float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xi = x[i];
  float acc = 0.0f;
  // All lanes read entry k at the same time: one address per warp, served to all 32 at
  // once. Unrolled, every entry is a fixed address the arithmetic takes as an operand.
#pragma unroll
  for (int k = 0; k < RAMPS; ++k) {
    const Ramp r = c_ramps[k];
    acc = fmaf(r.weight, fmaxf(xi - r.knot, 0.0f), acc);
  }

  y[i] = acc;
}

void launch_ramps(float* y, const float* x, int n, cudaStream_t stream) {
  const int block = 256;
  ramps_kernel<<<(n + block - 1) / block, block, 0, stream>>>(y, x, n);
}
