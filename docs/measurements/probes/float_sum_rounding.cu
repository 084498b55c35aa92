// How far a float sum of lab08's products lands from the exact sum, by the order of the adds: the
// measurement behind lab08's "about 0.26 % high" and "within a few parts per million" (log:
// ../logs/cpu-float-sum-rounding.log). Host code only: the inputs are lab08's (both vectors
// uniform in [0.5, 1), drawn as common/lab/random.cuh draws them, the second seed mixed from the first
// as labs/lab08-reduction/driver.cu does), 10^7 elements, five seeds. Orders:
//   sequential   one float, every product added in index order (what the atomics' rounding does)
//   blocks       a tree over each block of 256 products, then a tree over the block sums
//   blocks+seq   the same block trees, their sums then added one after another in a float
// The exact sum is taken in double over the same float products (exact to about 1e-16).
// probe-nvcc-flags: -O2
#include <algorithm>
#include <cstdio>
#include <vector>

#include "../../../common/lab/random.cuh"

namespace {

// Pairwise: neighbours, then neighbours' sums, as a shared-memory tree does.
float tree(std::vector<float> v) {
  for (std::size_t width = 1; width < v.size(); width *= 2)
    for (std::size_t i = 0; i + width < v.size(); i += 2 * width) v[i] += v[i + width];
  return v.empty() ? 0.0f : v[0];
}

}  // namespace

int main() {
  const std::size_t n = 10000000, block = 256;
  for (std::uint64_t seed : {1ull, 2ull, 3ull, 42ull, 1866087780ull}) {
    const auto a = memlabs::uniform_host(n, seed, 0.5f, 1.0f);
    const auto b = memlabs::uniform_host(n, memlabs::mix64(seed), 0.5f, 1.0f);
    std::vector<float> products(n), block_sums;
    double exact = 0;
    float sequential = 0;
    for (std::size_t i = 0; i < n; ++i) {
      products[i] = a[i] * b[i];
      exact += products[i];
      sequential += products[i];
    }
    for (std::size_t i = 0; i < n; i += block)
      block_sums.push_back(tree(std::vector<float>(products.begin() + i, products.begin() + std::min(n, i + block))));
    float blocks_then_sequential = 0;
    for (float s : block_sums) blocks_then_sequential += s;
    const auto off = [&](double got) { return (got - exact) / exact; };
    std::printf("seed %llu: sequential %+.4f %%, blocks %+.3f ppm, blocks+seq %+.4f %%\n",
                static_cast<unsigned long long>(seed), 100 * off(sequential), 1e6 * off(tree(block_sums)),
                100 * off(blocks_then_sequential));
  }
}
