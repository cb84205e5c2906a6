//===- CAPITest.cpp - Tests of the runtime's C API without a GPU ----------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestKernels.h"
#include "quack-c/Runtime.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

// These tests need no GPU: point the runtime at a driver library that does
// not exist, before anything opens the driver, so that they behave the same
// on machines with and without one.
const bool noDriver =
    setenv("QUACK_RT_CUDA_LIBRARY", "/nonexistent/libcuda-for-tests.so.1",
           /*overwrite=*/1) == 0;

using quack_test::clusterMetadata;
using quack_test::TempDir;
const char *const metadata = quack_test::scaleMetadata;

quack_rt_kernel createKernel() {
  char err[512] = {0};
  quack_rt_kernel kernel = nullptr;
  const char ptx[] = "// not a real image";
  EXPECT_EQ(quack_rt_kernel_create(metadata, ptx, sizeof(ptx) - 1, &kernel, err,
                                   sizeof(err)),
            QUACK_RT_OK)
      << err;
  return kernel;
}

TEST(CAPITest, Version) {
  EXPECT_EQ(quack_rt_api_version(), QUACK_RT_API_VERSION);
  EXPECT_STREQ(quack_rt_status_name(QUACK_RT_ERROR_MISALIGNED),
               "QUACK_RT_ERROR_MISALIGNED");
  EXPECT_STREQ(quack_rt_status_name(1234), "QUACK_RT_ERROR_UNKNOWN");
}

TEST(CAPITest, Accessors) {
  quack_rt_kernel kernel = createKernel();
  ASSERT_NE(kernel, nullptr);
  EXPECT_STREQ(quack_rt_kernel_name(kernel), "scale");
  EXPECT_STREQ(quack_rt_kernel_symbol(kernel), "scale_kernel");
  EXPECT_STREQ(quack_rt_kernel_arch(kernel), "sm_90");
  EXPECT_STREQ(quack_rt_kernel_hash(kernel), "abc123");
  EXPECT_EQ(quack_rt_kernel_n(kernel), 64);
  EXPECT_EQ(quack_rt_kernel_alignment(kernel), 16);
  EXPECT_EQ(quack_rt_kernel_rows_per_cta(kernel), 2);
  EXPECT_EQ(quack_rt_kernel_num_params(kernel), 6);
  EXPECT_EQ(quack_rt_kernel_num_args(kernel), 5);
  EXPECT_STREQ(quack_rt_kernel_binding(kernel, "T"), "f32");
  EXPECT_STREQ(quack_rt_kernel_binding(kernel, "N"), "64");
  EXPECT_EQ(quack_rt_kernel_binding(kernel, "Q"), nullptr);

  quack_rt_param_info info;
  ASSERT_EQ(quack_rt_kernel_param(kernel, 2, &info), QUACK_RT_OK);
  EXPECT_STREQ(info.name, "x.row_stride");
  EXPECT_EQ(info.kind, QUACK_RT_PARAM_ROW_STRIDE);
  EXPECT_STREQ(info.type, "i64");
  EXPECT_STREQ(info.role, "");
  EXPECT_EQ(info.of, 1);
  ASSERT_EQ(quack_rt_kernel_param(kernel, 3, &info), QUACK_RT_OK);
  EXPECT_EQ(info.kind, QUACK_RT_PARAM_SCALAR);
  EXPECT_STREQ(info.role, "input");
  EXPECT_EQ(quack_rt_kernel_param(kernel, 6, &info),
            QUACK_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(quack_rt_kernel_param(kernel, -1, &info),
            QUACK_RT_ERROR_INVALID_ARGUMENT);

  unsigned block[3], cluster[3];
  int64_t staticSmem = -1, dynamicSmem = -1;
  quack_rt_kernel_launch_shape(kernel, block, cluster, &staticSmem,
                               &dynamicSmem);
  EXPECT_EQ(block[0], 64u);
  EXPECT_EQ(block[1], 2u);
  EXPECT_EQ(cluster[0], 1u);
  EXPECT_EQ(staticSmem, 0);
  EXPECT_EQ(dynamicSmem, 1024);
  quack_rt_kernel_destroy(kernel);
}

TEST(CAPITest, NullHandlesAreSafe) {
  char err[256] = {0};
  EXPECT_STREQ(quack_rt_kernel_name(nullptr), "");
  EXPECT_EQ(quack_rt_kernel_num_args(nullptr), 0);
  EXPECT_EQ(
      quack_rt_kernel_launch(nullptr, 1, nullptr, 0, nullptr, err, sizeof(err)),
      QUACK_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err).find("null kernel"), std::string::npos);
  EXPECT_EQ(quack_rt_kernel_load(nullptr, nullptr, err, sizeof(err)),
            QUACK_RT_ERROR_INVALID_ARGUMENT);
  quack_rt_kernel_destroy(nullptr);
}

TEST(CAPITest, LoadFromFiles) {
  TempDir dir;
  dir.write("scale.cubin", "image bytes");
  std::string path = dir.write("scale.json", metadata);
  char err[512] = {0};
  quack_rt_kernel kernel = nullptr;
  ASSERT_EQ(quack_rt_kernel_load(path.c_str(), &kernel, err, sizeof(err)),
            QUACK_RT_OK)
      << err;
  EXPECT_STREQ(quack_rt_kernel_name(kernel), "scale");
  quack_rt_kernel_destroy(kernel);
}

TEST(CAPITest, LoadErrors) {
  TempDir dir;
  char err[512] = {0};
  quack_rt_kernel kernel = nullptr;
  std::string missing = dir.path + "/missing.json";
  EXPECT_EQ(quack_rt_kernel_load(missing.c_str(), &kernel, err, sizeof(err)),
            QUACK_RT_ERROR_IO);
  EXPECT_NE(std::string(err).find("missing.json"), std::string::npos) << err;
  EXPECT_EQ(kernel, nullptr);

  // The metadata is fine but its cubin is absent.
  std::string path = dir.write("scale.json", metadata);
  EXPECT_EQ(quack_rt_kernel_load(path.c_str(), &kernel, err, sizeof(err)),
            QUACK_RT_ERROR_IO);
  EXPECT_NE(std::string(err).find("scale.cubin"), std::string::npos) << err;

  std::string bad = dir.write("bad.json", "{\"schema\": 7}");
  EXPECT_EQ(quack_rt_kernel_load(bad.c_str(), &kernel, err, sizeof(err)),
            QUACK_RT_ERROR_INVALID_METADATA);
  EXPECT_NE(std::string(err).find("bad.json: invalid kernel metadata: "
                                  "unsupported schema 7"),
            std::string::npos)
      << err;
}

TEST(CAPITest, ErrorMessagesAreTruncatedSafely) {
  char err[8];
  std::memset(err, 'x', sizeof(err));
  quack_rt_kernel kernel = nullptr;
  EXPECT_EQ(quack_rt_kernel_create("{", "x", 1, &kernel, err, sizeof(err)),
            QUACK_RT_ERROR_INVALID_METADATA);
  EXPECT_EQ(std::strlen(err), 7u);
  // A zero-length buffer is never written.
  EXPECT_EQ(quack_rt_kernel_create("{", "x", 1, &kernel, nullptr, 0),
            QUACK_RT_ERROR_INVALID_METADATA);
}

TEST(CAPITest, ArgumentsAreCheckedBeforeTheDriver) {
  ASSERT_TRUE(noDriver);
  quack_rt_kernel kernel = createKernel();
  char err[512] = {0};
  quack_rt_value args[5];
  args[0].u = 0x1000;
  args[1].i = 64;
  args[2].f = 2.0;
  args[3].u = 0x2004; // misaligned
  args[4].i = 64;
  EXPECT_EQ(
      quack_rt_kernel_launch(kernel, 4, args, 5, nullptr, err, sizeof(err)),
      QUACK_RT_ERROR_MISALIGNED);
  EXPECT_NE(std::string(err).find("\"y\""), std::string::npos) << err;
  EXPECT_EQ(
      quack_rt_kernel_launch(kernel, 4, args, 4, nullptr, err, sizeof(err)),
      QUACK_RT_ERROR_INVALID_ARGUMENT);
  // M == 0 launches nothing and needs no driver.
  args[3].u = 0x2000;
  EXPECT_EQ(
      quack_rt_kernel_launch(kernel, 0, args, 5, nullptr, err, sizeof(err)),
      QUACK_RT_OK);
  quack_rt_kernel_destroy(kernel);
}

TEST(CAPITest, NoDriverGivesAClearError) {
  ASSERT_TRUE(noDriver);
  char err[512] = {0};
  EXPECT_EQ(quack_rt_driver_init(err, sizeof(err)),
            QUACK_RT_ERROR_DRIVER_UNAVAILABLE);
  std::string message = err;
  EXPECT_NE(message.find("cannot open the CUDA driver library "
                         "/nonexistent/libcuda-for-tests.so.1"),
            std::string::npos)
      << message;

  quack_rt_kernel kernel = createKernel();
  EXPECT_EQ(quack_rt_kernel_prepare(kernel, err, sizeof(err)),
            QUACK_RT_ERROR_DRIVER_UNAVAILABLE);
  EXPECT_EQ(std::string(err), message);
  quack_rt_value args[5];
  args[0].u = 0x1000;
  args[1].i = 64;
  args[2].f = 2.0;
  args[3].u = 0x2000;
  args[4].i = 64;
  EXPECT_EQ(
      quack_rt_kernel_launch(kernel, 4, args, 5, nullptr, err, sizeof(err)),
      QUACK_RT_ERROR_DRIVER_UNAVAILABLE);
  EXPECT_EQ(std::string(err), message);
  quack_rt_kernel_destroy(kernel);
}

} // namespace

TEST(CAPITest, LoadsClusterFallbacks) {
  ASSERT_TRUE(noDriver);
  TempDir dir;
  dir.write("c16.cubin", "image 16");
  dir.write("c8.cubin", "image 8");
  dir.write("c4.cubin", "image 4");
  dir.write("c8.json", clusterMetadata(8, "c8.cubin"));
  dir.write("c4.json", clusterMetadata(4, "c4.cubin"));
  std::string path = dir.write(
      "c16.json", clusterMetadata(16, "c16.cubin", R"("c8.json", "c4.json")"));
  char err[512] = {0};
  quack_rt_kernel kernel = nullptr;
  ASSERT_EQ(quack_rt_kernel_load(path.c_str(), &kernel, err, sizeof(err)),
            QUACK_RT_OK)
      << err;
  EXPECT_EQ(quack_rt_kernel_num_cluster_fallbacks(kernel), 2);
  // Which variant serves is decided on the device; without a driver the
  // query fails with the driver's message.
  unsigned size = 0;
  char note[64] = {0};
  EXPECT_EQ(quack_rt_kernel_cluster_in_use(kernel, &size, note, sizeof(note),
                                           err, sizeof(err)),
            QUACK_RT_ERROR_DRIVER_UNAVAILABLE);
  EXPECT_EQ(quack_rt_kernel_cluster_in_use(kernel, nullptr, note, sizeof(note),
                                           err, sizeof(err)),
            QUACK_RT_ERROR_INVALID_ARGUMENT);
  quack_rt_kernel_destroy(kernel);
  EXPECT_EQ(quack_rt_kernel_num_cluster_fallbacks(nullptr), 0);
}

TEST(CAPITest, RefusesBadClusterFallbacks) {
  TempDir dir;
  dir.write("c16.cubin", "image 16");
  dir.write("c8.cubin", "image 8");
  char err[512] = {0};
  quack_rt_kernel kernel = nullptr;
  // The fallback's metadata is missing.
  std::string path = dir.write(
      "a.json", clusterMetadata(16, "c16.cubin", R"("missing.json")"));
  EXPECT_EQ(quack_rt_kernel_load(path.c_str(), &kernel, err, sizeof(err)),
            QUACK_RT_ERROR_IO);
  EXPECT_NE(std::string(err).find("missing.json"), std::string::npos) << err;
  // Its cubin is missing.
  dir.write("c8-nocubin.json", clusterMetadata(8, "absent.cubin"));
  path = dir.write("b.json",
                   clusterMetadata(16, "c16.cubin", R"("c8-nocubin.json")"));
  EXPECT_EQ(quack_rt_kernel_load(path.c_str(), &kernel, err, sizeof(err)),
            QUACK_RT_ERROR_IO);
  EXPECT_NE(std::string(err).find("absent.cubin"), std::string::npos) << err;
  // Fallbacks must shrink the cluster.
  dir.write("c32.json", clusterMetadata(32, "c8.cubin"));
  path = dir.write("c.json", clusterMetadata(16, "c16.cubin", R"("c32.json")"));
  EXPECT_EQ(quack_rt_kernel_load(path.c_str(), &kernel, err, sizeof(err)),
            QUACK_RT_ERROR_INVALID_METADATA);
  EXPECT_NE(std::string(err).find("c32.json: cluster fallback of kernel "
                                  "\"scale\": its cluster of 32 CTAs is not "
                                  "smaller than 16"),
            std::string::npos)
      << err;
  EXPECT_EQ(kernel, nullptr);
}
