// lab04: constant memory. This is the file you edit.
#include "lab.cuh"

// ---- Part 1: one coefficient table, read by every thread (steps 1 and 2) ----

// TODO(step 1): replace g_coeffs with a __constant__ float c_coeffs[POLY_TERMS] (~1 line)
static float* g_coeffs = nullptr;  // a global-memory copy, allocated on first use and kept

void set_poly_coefficients(const float* coeffs) {
  // TODO(step 1): copy coeffs (a host array) into c_coeffs with cudaMemcpyToSymbol (~1 line)
  if (g_coeffs == nullptr) CUDA_CHECK(cudaMalloc(&g_coeffs, POLY_TERMS * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(g_coeffs, coeffs, POLY_TERMS * sizeof(float), cudaMemcpyHostToDevice));
}

// Horner's rule, highest power first: 63 multiply-adds per element. Every thread of the
// grid reads the same 64 coefficients in the same order.
// TODO(step 1): read the coefficients from c_coeffs instead of a `coeffs` parameter (~9 lines)
__global__ void poly_kernel(float* y, const float* x, const float* coeffs, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xi = x[i];
  float acc = coeffs[POLY_TERMS - 1];
#pragma unroll
  for (int k = POLY_TERMS - 2; k >= 0; --k) acc = acc * xi + coeffs[k];
  y[i] = acc;
}

void launch_poly(float* y, const float* x, int n, cudaStream_t stream) {
  const int block = 256;
  // TODO(step 1): launch poly_kernel without the coefficient pointer (~1 line)
  poly_kernel<<<(n + block - 1) / block, block, 0, stream>>>(y, x, g_coeffs, n);
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
  // TODO(step 3): walk the table in the same order in every lane, so that a warp reads one entry at a time (~5 lines)
  // Each lane starts at a different entry, on the theory that 32 lanes reading one
  // address would have to queue for it. Step 3 tests that theory.
  for (int j = 0; j < RAMPS; ++j) {
    const Ramp r = c_ramps[(j + threadIdx.x) % RAMPS];
    acc = fmaf(r.weight, fmaxf(xi - r.knot, 0.0f), acc);
  }

  y[i] = acc;
}

void launch_ramps(float* y, const float* x, int n, cudaStream_t stream) {
  const int block = 256;
  ramps_kernel<<<(n + block - 1) / block, block, 0, stream>>>(y, x, n);
}
