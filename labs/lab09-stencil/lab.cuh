// lab09 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.cuh"  // CUDA_CHECK(call): throws with the file, line and call text

// Every stencil of this lab reads zeros outside its array: in[j] counts as 0
// for j < 0 and j >= n (in 2D, for x or y outside the image). The arrays are
// NOT padded: there is nothing of yours before in[0] or after the last
// element, so the halo at each edge is the kernel's business.

constexpr int MAX_RADIUS = 8;
constexpr int MAX_WEIGHTS = (2 * MAX_RADIUS + 1) * (2 * MAX_RADIUS + 1);  // 289

// Called with a HOST array of `count` weights (1 <= count <= MAX_WEIGHTS)
// before the launches that use them; each stencil's layout is given below.
void set_weights(const float* weights, int count);

// ---- Step 1: a 1D stencil ----

// out[i] = sum over k = -radius .. radius of w[k + radius] * in[i + k],
// for 0 <= i < n (any n >= 1, also n < radius); radius is 1, 3 or 8 and the
// weights are 2 * radius + 1 floats.
void launch_stencil_1d(float* out, const float* in, int n, int radius, cudaStream_t stream);

// ---- Step 2: a 2D box filter ----

// Images are width x height floats, row-major (in[y * width + x]), any size >= 1 x 1.
constexpr int BOX_RADIUS = 8;
constexpr int BOX_TAPS = 2 * BOX_RADIUS + 1;  // 17 taps per row, 289 in all
// out[y][x] = sum over dy, dx = -R .. R of w[(dy + R) * BOX_TAPS + (dx + R)] * in[y + dy][x + dx],
// with R = BOX_RADIUS: all BOX_TAPS * BOX_TAPS weights.
void launch_box_2d(float* out, const float* in, int width, int height, cudaStream_t stream);

// ---- Step 3: a 2D star (a cross, the finite-difference shape) ----

constexpr int STAR_RADIUS = 3;
constexpr int STAR_TAPS = 2 * STAR_RADIUS + 1;  // along each axis
// out[y][x] = sum over k = -R .. R of  w[k + R] * in[y][x + k]                (along the row)
//                                     + w[STAR_TAPS + k + R] * in[y + k][x]    (along the column),
// with R = STAR_RADIUS: 2 * STAR_TAPS weights, the row's then the column's
// (the centre pixel is weighted by both w[R] and w[STAR_TAPS + R]).
void launch_star_2d(float* out, const float* in, int width, int height, cudaStream_t stream);
