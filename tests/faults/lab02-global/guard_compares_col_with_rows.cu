// fault: the 2-D guard compares col with rows (a typo): where rows > cols the threads past the last column write into the next row, and past the end of `out` on the last row
// expect: step 3 fails: correct (canary)
// message: case 1000x777: wrote past the end of `out` (the guard zone after it was overwritten)
// lab02: global memory. This is the file you edit.
#include "lab.cuh"

// ---- Part A: one vector add, two kinds of global memory ----

// One thread per element; the guard covers an n that is not a multiple of the block.
__global__ void vector_add_kernel(float* c, const float* a, const float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// a, b and c are host pointers: the GPU cannot use them, so the data has to travel.
void vector_add_dynamic(float* c, const float* a, const float* b, int n) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);  // cudaMalloc and cudaMemcpy count bytes
  float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr;
  CUDA_CHECK(cudaMalloc(&d_a, bytes));
  CUDA_CHECK(cudaMalloc(&d_b, bytes));
  CUDA_CHECK(cudaMalloc(&d_c, bytes));
  CUDA_CHECK(cudaMemcpy(d_a, a, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b, bytes, cudaMemcpyHostToDevice));
  const int block = 256;
  vector_add_kernel<<<(n + block - 1) / block, block>>>(d_c, d_a, d_b, n);
  CUDA_CHECK(cudaGetLastError());
  // Same (default) stream as the kernel, so this copy waits for it to finish.
  CUDA_CHECK(cudaMemcpy(c, d_c, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_c));
}

// Allocated once, when the module is loaded, and never freed: their size is fixed at compile time.
__device__ float static_a[STATIC_CAPACITY];
__device__ float static_b[STATIC_CAPACITY];
__device__ float static_c[STATIC_CAPACITY];

// The static path's kernel takes no pointers: it names the __device__ arrays directly.
__global__ void vector_add_static_kernel(int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) static_c[i] = static_a[i] + static_b[i];
}

void vector_add_static(float* c, const float* a, const float* b, int n) {
  // n floats, not sizeof(static_a): the arrays are larger than the data, and c holds only n.
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  CUDA_CHECK(cudaMemcpyToSymbol(static_a, a, bytes));
  CUDA_CHECK(cudaMemcpyToSymbol(static_b, b, bytes));
  const int block = 256;
  vector_add_static_kernel<<<(n + block - 1) / block, block>>>(n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyFromSymbol(c, static_c, bytes));
}

// ---- Part B: which thread gets which element ----

// Element (row, col) of a row-major matrix lives at row * cols + col, so neighbours in a
// row are neighbours in memory and neighbours in a column are `cols` floats apart.
__global__ void scale_shift_kernel(float* out, const float* in, const float* row_scale,
                                   const float* col_shift, int rows, int cols) {
  // threadIdx.x walks along a row: lane k + 1 touches the float right after lane k's,
  // so a warp's 32 loads fall into 128 contiguous bytes (four 32-byte sectors).
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;

  if (row < rows && col < rows) {
    const size_t idx = static_cast<size_t>(row) * cols + col;
    out[idx] = in[idx] * row_scale[row] + col_shift[col];
  }
}

void launch_scale_shift(float* out, const float* in, const float* row_scale, const float* col_shift,
                        int rows, int cols, cudaStream_t stream) {
  const dim3 block(32, 8);
  const dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);

  scale_shift_kernel<<<grid, block, 0, stream>>>(out, in, row_scale, col_shift, rows, cols);
}

// ---- Part C: which layout a warp reads ----

// The drift reads two of a particle's eight fields. Over the structure of arrays, a
// warp's 32 loads of x are 32 neighbouring floats of one array.
__global__ void drift_kernel(float* out, Particles p, int n, float dt) {
  // Lane k + 1 reads the float right after lane k's, in x and in vx alike: a warp's load
  // of each is 128 contiguous bytes, four sectors, every byte of them used.
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = p.x[i] + p.vx[i] * dt;
}

void launch_drift(float* out, Particles p, int n, float dt, cudaStream_t stream) {
  const int block = 256;
  drift_kernel<<<(n + block - 1) / block, block, 0, stream>>>(out, p, n, dt);
}
