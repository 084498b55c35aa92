// lab07 problem definition: cases, inputs, the naive baseline, bytes moved, oracle.
#include <cstdio>
#include <string>

#include "lab.cuh"
#include "lab_api.cuh"

namespace {

// The baseline: reads rows (coalesced), writes columns (uncoalesced). Same
// launch shape as the student's kernel, so only the memory access differs.
__global__ void transpose_naive(float* out, const float* in, int rows, int cols) {
  const int col = blockIdx.x * TILE_DIM + threadIdx.x;
  const int row = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (row + j < rows && col < cols)
      out[static_cast<size_t>(col) * rows + (row + j)] = in[static_cast<size_t>(row + j) * cols + col];
}

class Transpose : public memlabs::Problem {
 public:
  Transpose(int rows, int cols)
      : rows_(rows), cols_(cols), in_(size_t(rows) * cols),
        out_("out", size_t(rows) * cols, {cols, rows}, memlabs::Tolerance{0, 0}) {}

  void fill(std::uint64_t seed, std::uint64_t) override {
    seed_ = seed;
    memlabs::fill_uniform(in_.data(), in_.size(), seed, -1.0f, 1.0f);
  }

  void run(memlabs::Variant v, cudaStream_t s) override {
    if (v == memlabs::Variant::candidate) {
      CANDIDATE_ONLY(launch_transpose(out_.data(), in_.data(), rows_, cols_, s));
    } else {
      const dim3 block(TILE_DIM, BLOCK_ROWS);
      const dim3 grid((cols_ + TILE_DIM - 1) / TILE_DIM, (rows_ + TILE_DIM - 1) / TILE_DIM);
      transpose_naive<<<grid, block, 0, s>>>(out_.data(), in_.data(), rows_, cols_);
    }
  }

  std::vector<memlabs::Output*> outputs() override { return {&out_}; }
  std::vector<memlabs::Input> inputs() const override { return {{"in", in_.data(), in_.bytes()}}; }

  // Every element read once and written once.
  double bytes_moved() const override { return 2.0 * rows_ * cols_ * sizeof(float); }

  std::vector<std::vector<double>> oracle() const override {
    const auto in = memlabs::uniform_host(size_t(rows_) * cols_, seed_, -1.0f, 1.0f);
    std::vector<double> out(in.size());
    for (int r = 0; r < rows_; ++r)
      for (int c = 0; c < cols_; ++c) out[size_t(c) * rows_ + r] = in[size_t(r) * cols_ + c];
    return {out};
  }

 private:
  int rows_, cols_;
  std::uint64_t seed_ = 0;
  memlabs::DeviceBuffer<float> in_;
  memlabs::OutputBuffer<float> out_;
};

std::unique_ptr<memlabs::Problem> make(const std::string& name) {
  int rows = 0, cols = 0;
  if (std::sscanf(name.c_str(), "%dx%d", &rows, &cols) != 2)
    throw std::invalid_argument("case name is not ROWSxCOLS: " + name);
  return std::make_unique<Transpose>(rows, cols);
}

}  // namespace

memlabs::LabDefinition memlabs::define_lab() {
  return {{{"1000x777", "1000 x 777: neither side a multiple of 32"},
           {"33x4097", "33 x 4097: one row past a tile, very wide"},
           {"4097x33", "4097 x 33: very tall"},
           {"1x1", "a single element"},
           {"1024x1024", "1024 x 1024: whole tiles only"},
           {"8192x8192", "8192 x 8192 (256 MiB each way): the timing size"}},
          make};
}
