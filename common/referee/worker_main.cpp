// main() of the submission's program: driver.cu + kernel.cu + this file.
//
//   worker serve --fd 3                    compute what the referee asks (serve.cuh)
//   worker run --case C [--case C2...] --seed S
//                                          build, fill and run each case once on its
//                                          own, for ncu and compute-sanitizer to watch
//
// Nothing this program prints or reports decides a verdict: the referee checks
// its outputs and times it from outside, and the tools report what they saw.
#include <cstdio>
#include <string>
#include <vector>

#include "lab/lab_api.cuh"
#include "serve.cuh"

namespace {

int standalone(const std::vector<std::string>& cases, std::uint64_t seed) {
  const memlabs::LabDefinition lab = memlabs::define_lab();
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreate(&s));
  for (const auto& name : cases) {
    auto p = lab.make(name);
    p->fill(seed, seed);
    for (auto* o : p->outputs()) o->poison(s);
    CUDA_CHECK(cudaDeviceSynchronize());
    // From here on, every launch is the candidate's (candidate_marker.hpp).
    memlabs::launch_candidate_marker(s);
    CUDA_CHECK(cudaDeviceSynchronize());
    p->prepare(memlabs::Variant::candidate);
    p->run(memlabs::Variant::candidate, s);
    CUDA_CHECK_LAUNCH();
    p->finish(memlabs::Variant::candidate, s);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaStreamDestroy(s));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "serve") return memlabs::serve(3, memlabs::ServerRole::worker);
  if (mode != "run") {
    std::fprintf(stderr, "usage: %s serve --fd 3 | run --case C... --seed S\n", argv[0]);
    return 2;
  }
  std::vector<std::string> cases;
  std::uint64_t seed = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--case")
      cases.push_back(argv[i + 1]);
    else if (k == "--seed")
      seed = std::stoull(argv[i + 1], nullptr, 0);
  }
  try {
    return standalone(cases, seed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 10;
  }
}
