#include "kernel_stubs.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

// Lines as `nm` prints them for a worker (recorded from a lab05 build), and the
// stubs a kernel.cu adds when it rebuilds the driver's anonymous namespace by name.
const char* kWorker =
    "0000000000012340 t "
    "_Z106__device_stub__ZN7memlabs51_GLOBAL__N__56aa2f99_18_support_kernels_cu_b75d747a19fill_uniform_"
    "kernelEPfmmffPfmmff\n"
    "0000000000012400 T _Z40__device_stub__Z15resample_kernelPfiiyiiPfiiyii\n"
    "0000000000012500 t "
    "_Z87__device_stub__ZN41_GLOBAL__N__af6518b3_9_driver_cu_755de82115resample_manualEPfiiPKfiiPfiiPKfii\n"
    "000000000001250f t "
    "_Z87__device_stub__ZN41_GLOBAL__N__af6518b3_9_driver_cu_755de82115resample_manualEPfiiPKfiiPfiiPKfii"
    ".cold\n"
    "0000000000000008 b "
    "_ZZ87__device_stub__ZN41_GLOBAL__N__af6518b3_9_driver_cu_755de82115resample_manualEPfiiPKfiiPfiiPKfiiE5__"
    "tmp\n"
    "0000000000012600 T _Z39__device_stub__memlabs_candidate_beginsv\n";

TEST(KernelStubs, AProgramWithOneStubPerKernelHasNoneTwice) { EXPECT_TRUE(kernels_defined_twice(kWorker).empty()); }

TEST(KernelStubs, AKernelCuThatRebuildsTheBaselinesNameShowsIt) {
  const std::string twice =
      std::string(kWorker) +
      "0000000000013000 t _Z87__device_stub__ZN41_GLOBAL__N__af6518b3_9_driver_cu_755de82115resample_"
      "manualEPfiiPKfiiPfiiPKfii\n";
  EXPECT_EQ(kernels_defined_twice(twice),
            (std::vector<std::string>{"_ZN41_GLOBAL__N__af6518b3_9_driver_cu_755de82115resample_manualEPfiiPKfii"}));
}

TEST(KernelStubs, AnExternCKernelKeepsItsPlainName) {
  const std::string twice = std::string(kWorker) + "0000000000013000 t _Z39__device_stub__memlabs_candidate_beginsv\n";
  EXPECT_EQ(kernels_defined_twice(twice), (std::vector<std::string>{"memlabs_candidate_begins"}));
}

}  // namespace
}  // namespace grader
