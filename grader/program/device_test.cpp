#include "device.hpp"

#include <gtest/gtest.h>

namespace grader {
namespace {

// The probe's result document (common/referee/probe_main.cu), as it is also kept for the next grade.
TEST(Device, AKeptProbeResultReadsAsTheProbeSaidIt) {
  const auto j = nlohmann::json::parse(R"({"devices": 1, "driver_version": 13000, "runtime_version": 13000,
      "name": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "uuid": "GPU-5e4a", "sms": 132,
      "l2_bytes": 52428800, "global_mem_bytes": 85017493504})");
  const DeviceInfo d = device_from_probe(j);
  EXPECT_TRUE(d.present);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.arch, "sm_90");
  EXPECT_EQ(d.uuid, "GPU-5e4a");
  EXPECT_EQ(d.sms, 132);
  EXPECT_EQ(d.driver_version, 13000);
  EXPECT_EQ(d.l2_bytes, 52428800);
  EXPECT_FALSE(d.memcpy_gbps.has_value());
  EXPECT_EQ(d.raw, j);
}

TEST(Device, NoDeviceKeepsTheProbesReason) {
  const DeviceInfo d =
      device_from_probe(nlohmann::json::parse(R"({"devices": 0, "reason": "no NVIDIA driver is loaded"})"));
  EXPECT_FALSE(d.present);
  EXPECT_EQ(d.reason, "no NVIDIA driver is loaded");
  EXPECT_EQ(d.name, "");
}

}  // namespace
}  // namespace grader
