// lab04 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.cuh"  // CUDA_CHECK(call): throws with the file, line and call text

// ---- Part 1: one polynomial for every element ----

// Degree 63: coefficients c[0] (constant term) ... c[63].
constexpr int POLY_TERMS = 64;

// Called once, before any launch_poly, with a HOST array of POLY_TERMS coefficients.
void set_poly_coefficients(const float* coeffs);
// y[i] = c[0] + c[1] x[i] + ... + c[63] x[i]^63 for i < n, with the coefficients last set.
// x and y are device arrays; n >= 1.
void launch_poly(float* y, const float* x, int n, cudaStream_t stream);

// ---- Part 2: a sum of ramps ----

// One term of a piecewise-linear function: weight * max(x - knot, 0).
struct Ramp {
  float weight;
  float knot;
};
constexpr int RAMPS = 64;

// Called once, before any launch_ramps, with a HOST array of RAMPS entries.
void set_ramps(const Ramp* ramps);
// y[i] = sum over k of ramps[k].weight * max(x[i] - ramps[k].knot, 0) for i < n.
void launch_ramps(float* y, const float* x, int n, cudaStream_t stream);
