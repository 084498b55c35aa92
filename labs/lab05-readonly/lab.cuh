// lab05 interface: shared by kernel.cu (yours), the solution and driver.cu.
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.cuh"  // CUDA_CHECK(call): throws on an error, which the grader reports

// ---- Part 1: a 16-tap filter that accumulates into its output ----

constexpr int TAPS = 16;

// out[i] = sum over k < TAPS of w[k] * in[i + k], for 0 <= i < n (any n >= 1).
// `in` holds n + TAPS - 1 floats, `w` holds TAPS; none of the three overlap.
void launch_accumulate(float* out, const float* in, const float* w, int n, cudaStream_t stream);

// ---- Part 2: bilinear resampling of an image ----

// One input image and whatever the resample needs to read it. The driver fills
// `pixels`, `width` and `height`, then calls create_resample_source once before
// the first launch and destroy_resample_source once after the last one.
struct ResampleSource {
  const float* pixels = nullptr;    // width x height floats, row-major, in device memory (the driver's)
  int width = 0, height = 0;        // >= 1 each
  cudaArray_t array = nullptr;      // yours: the texture's own copy of the image
  cudaTextureObject_t texture = 0;  // yours: the texture object that reads `array`
};

void create_resample_source(ResampleSource& src);
// Releases everything create_resample_source made; `pixels` stays the driver's.
void destroy_resample_source(ResampleSource& src);

// out (out_width x out_height, row-major) = the image resampled to that size.
// Output pixel (x, y) has its centre at (x + 0.5, y + 0.5) in output pixels,
// which is u = (x + 0.5) * width / out_width, v = (y + 0.5) * height / out_height
// in input pixels, where input pixel (i, j) covers [i, i + 1) x [j, j + 1) and
// has its centre at (i + 0.5, j + 0.5). The value there is the bilinear blend of
// the four input pixels whose centres surround (u, v); pixels beyond the edge
// repeat the edge pixel (clamp).
void launch_resample(float* out, int out_width, int out_height, const ResampleSource& src,
                     cudaStream_t stream);
