//===- LaunchTest.cpp - The runtime's launches against a stand-in driver --===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// What the runtime hands the CUDA driver, checked without a GPU: the runtime
// opens libquack-fake-cuda.so (FakeCudaDriver.h) instead of libcuda, which
// records every call. Its own process: the driver is opened once per
// process, and QuackRuntimeTests points it at no library at all.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaDriver.h"
#include "RuntimeTestKernels.h"
#include "quack-c/Runtime.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iterator>
#include <string>

namespace {

const bool fakeDriver = setenv("QUACK_RT_CUDA_LIBRARY", QUACK_FAKE_CUDA_PATH,
                               /*overwrite=*/1) == 0;

/// The stand-in's control functions, from the library the runtime opens.
struct Fake {
  fake_cuda_reset_fn reset;
  fake_cuda_fail_fn fail;
  fake_cuda_count_fn count;
  fake_cuda_set_num_params_fn setNumParams;
  fake_cuda_set_capturing_fn setCapturing;
  fake_cuda_set_max_clusters_fn setMaxClusters;
  fake_cuda_num_launches_fn numLaunches;
  fake_cuda_get_launch_fn launch;
  fake_cuda_func_attribute_fn funcAttribute;
  fake_cuda_set_context_fn setContext;
  fake_cuda_num_tensor_maps_fn numTensorMaps;
  fake_cuda_get_tensor_map_fn tensorMap;
};

template <typename Fn> void bind(void *lib, Fn &fn, const char *name) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  ASSERT_NE(fn, nullptr) << name;
}

const Fake &fake() {
  static Fake f = [] {
    Fake r{};
    void *lib = dlopen(QUACK_FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(lib, nullptr) << dlerror();
    if (!lib)
      return r;
    bind(lib, r.reset, "fake_cuda_reset");
    bind(lib, r.fail, "fake_cuda_fail");
    bind(lib, r.count, "fake_cuda_count");
    bind(lib, r.setNumParams, "fake_cuda_set_num_params");
    bind(lib, r.setCapturing, "fake_cuda_set_capturing");
    bind(lib, r.setMaxClusters, "fake_cuda_set_max_clusters");
    bind(lib, r.numLaunches, "fake_cuda_num_launches");
    bind(lib, r.launch, "fake_cuda_get_launch");
    bind(lib, r.funcAttribute, "fake_cuda_func_attribute");
    bind(lib, r.setContext, "fake_cuda_set_context");
    bind(lib, r.numTensorMaps, "fake_cuda_num_tensor_maps");
    bind(lib, r.tensorMap, "fake_cuda_get_tensor_map");
    return r;
  }();
  return f;
}

using quack_test::clusterMetadata;
using quack_test::replaced;
using quack_test::scaleMetadata;
using quack_test::TempDir;

quack_rt_value pointer(uint64_t address) {
  quack_rt_value v;
  v.u = address;
  return v;
}
quack_rt_value integer(int64_t value) {
  quack_rt_value v;
  v.i = value;
  return v;
}
quack_rt_value real(double value) {
  quack_rt_value v;
  v.f = value;
  return v;
}

const std::string smallShared = R"({"static": 0, "dynamic": 1024})";

class LaunchTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(fakeDriver);
    ASSERT_NE(fake().reset, nullptr);
    fake().reset();
    // M, x, x.row_stride, alpha, y, y.row_stride.
    fake().setNumParams(6);
  }
  void TearDown() override {
    quack_rt_kernel_destroy(kernel);
    kernel = nullptr;
  }

  void create(const std::string &meta) {
    const char image[] = "// no real image: nothing runs it";
    ASSERT_EQ(quack_rt_kernel_create(meta.c_str(), image, sizeof(image) - 1,
                                     &kernel, err, sizeof(err)),
              QUACK_RT_OK)
        << err;
  }
  int launch(int64_t m, void *stream = nullptr) {
    err[0] = 0;
    return quack_rt_kernel_launch(kernel, m, args, 5, stream, err, sizeof(err));
  }
  std::string error() const { return err; }

  quack_rt_kernel kernel = nullptr;
  char err[1024] = {0};
  // x, its row stride, alpha = 0.5, y, its row stride.
  quack_rt_value args[5] = {pointer(0x10000), integer(64), real(0.5),
                            pointer(0x20000), integer(64)};
};

TEST_F(LaunchTest, GridBlockSharedStreamAndParameters) {
  create(scaleMetadata);
  void *stream = reinterpret_cast<void *>(0x5eed);
  ASSERT_EQ(launch(5, stream), QUACK_RT_OK) << error();
  ASSERT_EQ(fake().numLaunches(), 1);
  const fake_cuda_launch &l = *fake().launch(0);
  EXPECT_EQ(l.ex, 0);
  EXPECT_EQ(l.grid[0], 3u); // ceil(5 / 2)
  EXPECT_EQ(l.grid[1], 1u);
  EXPECT_EQ(l.block[0], 64u);
  EXPECT_EQ(l.block[1], 2u);
  EXPECT_EQ(l.shared_bytes, 1024u);
  EXPECT_EQ(l.stream, stream);
  EXPECT_EQ(l.params[0], 5u);
  EXPECT_EQ(l.params[1], 0x10000u);
  EXPECT_EQ(l.params[2], 64u);
  float alpha = 0;
  std::memcpy(&alpha, &l.params[3], sizeof(alpha));
  EXPECT_EQ(alpha, 0.5f); // a double argument, passed as the f32 it names
  EXPECT_EQ(l.params[4], 0x20000u);
  EXPECT_EQ(l.params[5], 64u);
  // Under 48 KB of shared memory: no opt-in.
  EXPECT_EQ(fake().funcAttribute(8), -1);
}

TEST_F(LaunchTest, ModuleLoadedOncePerContextAndUnloaded) {
  create(scaleMetadata);
  // No current context: device 0's primary context is made current.
  ASSERT_EQ(launch(4), QUACK_RT_OK) << error();
  ASSERT_EQ(launch(4), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().count("cuDevicePrimaryCtxRetain"), 1);
  EXPECT_EQ(fake().count("cuCtxSetCurrent"), 1);
  EXPECT_EQ(fake().count("cuModuleLoadData"), 1);
  EXPECT_EQ(fake().count("cuLaunchKernel"), 2);
  quack_rt_kernel_destroy(kernel);
  kernel = nullptr;
  EXPECT_EQ(fake().count("cuModuleUnload"), 1);
}

TEST_F(LaunchTest, OneModulePerContext) {
  create(scaleMetadata);
  fake().setContext(2);
  ASSERT_EQ(launch(4), QUACK_RT_OK) << error();
  fake().setContext(3);
  ASSERT_EQ(launch(4), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().count("cuModuleLoadData"), 2);
  fake().setContext(2);
  ASSERT_EQ(launch(4), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().count("cuModuleLoadData"), 2);
  // A current context is used as it is.
  EXPECT_EQ(fake().count("cuDevicePrimaryCtxRetain"), 0);
  quack_rt_kernel_destroy(kernel);
  kernel = nullptr;
  EXPECT_EQ(fake().count("cuModuleUnload"), 2);
}

TEST_F(LaunchTest, ZeroRowsLaunchNothing) {
  create(scaleMetadata);
  ASSERT_EQ(launch(0), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().numLaunches(), 0);
  EXPECT_EQ(fake().count("cuModuleLoadData"), 0);
}

TEST_F(LaunchTest, BadArgumentsAreRefusedBeforeTheDriver) {
  create(scaleMetadata);
  args[0].u = 0x10004; // 4-byte aligned: the kernel needs 16
  EXPECT_EQ(launch(4), QUACK_RT_ERROR_MISALIGNED);
  EXPECT_NE(error().find("x"), std::string::npos) << error();
  args[0].u = 0x10000;
  args[1].i = 32; // row stride < N
  EXPECT_EQ(launch(4), QUACK_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(launch(-1), QUACK_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fake().numLaunches(), 0);
  EXPECT_EQ(fake().count("cuModuleLoadData"), 0);
}

TEST_F(LaunchTest, DriverErrorsNameTheCallAndTheError) {
  create(scaleMetadata);
  fake().fail("cuLaunchKernel", 700);
  EXPECT_EQ(launch(4), QUACK_RT_ERROR_DRIVER);
  EXPECT_NE(error().find("cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS "
                         "(an illegal memory access was encountered)"),
            std::string::npos)
      << error();
  EXPECT_NE(error().find("\"scale\""), std::string::npos) << error();
  fake().fail("cuLaunchKernel", 0);

  quack_rt_kernel_destroy(kernel);
  kernel = nullptr;
  create(scaleMetadata);
  fake().fail("cuModuleLoadData", 209);
  EXPECT_EQ(launch(4), QUACK_RT_ERROR_DRIVER);
  EXPECT_NE(error().find("cuModuleLoadData failed: "
                         "CUDA_ERROR_NO_BINARY_FOR_GPU"),
            std::string::npos)
      << error();
  EXPECT_NE(error().find("built for sm_90"), std::string::npos) << error();
  // An error code the driver cannot name is given by number.
  fake().fail("cuModuleLoadData", 4242);
  EXPECT_EQ(launch(4), QUACK_RT_ERROR_DRIVER);
  EXPECT_NE(error().find("CUDA error 4242"), std::string::npos) << error();
  // The failed loads are retried, not cached.
  fake().fail("cuModuleLoadData", 0);
  EXPECT_EQ(launch(4), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().numLaunches(), 1);
}

TEST_F(LaunchTest, NoLoadDuringGraphCapture) {
  create(scaleMetadata);
  void *stream = reinterpret_cast<void *>(0x5eed);
  fake().setCapturing(1);
  EXPECT_EQ(launch(4, stream), QUACK_RT_ERROR_UNSUPPORTED);
  EXPECT_NE(error().find("graph capture"), std::string::npos) << error();
  EXPECT_EQ(fake().count("cuModuleLoadData"), 0);
  EXPECT_EQ(fake().numLaunches(), 0);
  // Prepared before the capture, the kernel launches inside it with no
  // load (and no capture check).
  fake().setCapturing(0);
  ASSERT_EQ(quack_rt_kernel_prepare(kernel, err, sizeof(err)), QUACK_RT_OK)
      << error();
  fake().setCapturing(1);
  int checks = fake().count("cuStreamIsCapturing");
  EXPECT_EQ(launch(4, stream), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().count("cuModuleLoadData"), 1);
  EXPECT_EQ(fake().count("cuStreamIsCapturing"), checks);
  EXPECT_EQ(fake().numLaunches(), 1);
}

TEST_F(LaunchTest, LargeSharedMemoryIsOptedIntoOnce) {
  create(replaced(scaleMetadata, smallShared,
                  R"({"static": 1024, "dynamic": 100000})"));
  ASSERT_EQ(launch(4), QUACK_RT_OK) << error();
  ASSERT_EQ(launch(4), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().funcAttribute(8), 100000);
  EXPECT_EQ(fake().count("cuFuncSetAttribute"), 1);
  EXPECT_EQ(fake().launch(1)->shared_bytes, 100000u);
}

TEST_F(LaunchTest, MoreSharedMemoryThanTheDeviceIsRefused) {
  create(replaced(scaleMetadata, smallShared,
                  R"({"static": 0, "dynamic": 240000})"));
  EXPECT_EQ(launch(4), QUACK_RT_ERROR_UNSUPPORTED);
  EXPECT_NE(error().find("240000 bytes of shared memory"), std::string::npos)
      << error();
  EXPECT_NE(error().find("232448"), std::string::npos) << error();
  EXPECT_EQ(fake().count("cuModuleLoadData"), 0);
}

TEST_F(LaunchTest, ClustersLaunchThroughLaunchKernelEx) {
  create(clusterMetadata(4, "scale.cubin"));
  void *stream = reinterpret_cast<void *>(0x5eed);
  ASSERT_EQ(launch(3, stream), QUACK_RT_OK) << error();
  ASSERT_EQ(fake().numLaunches(), 1);
  const fake_cuda_launch &l = *fake().launch(0);
  EXPECT_EQ(l.ex, 1);
  EXPECT_EQ(l.grid[0], 12u); // 3 rows x 4 CTAs
  EXPECT_EQ(l.block[0], 64u);
  EXPECT_EQ(l.block[1], 2u);
  EXPECT_EQ(l.cluster[0], 4u);
  EXPECT_EQ(l.cluster[1], 1u);
  EXPECT_EQ(l.stream, stream);
  // Portable (8 or fewer CTAs): no opt-in.
  EXPECT_EQ(fake().funcAttribute(14), -1);
}

TEST_F(LaunchTest, NonPortableClustersAreOptedInto) {
  create(clusterMetadata(16, "scale.cubin"));
  ASSERT_EQ(launch(2), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().funcAttribute(14), 1);
  EXPECT_EQ(fake().launch(0)->cluster[0], 16u);
  EXPECT_EQ(fake().launch(0)->grid[0], 32u);
}

TEST_F(LaunchTest, ClustersTheDeviceCannotRunAreRefused) {
  create(clusterMetadata(16, "scale.cubin"));
  fake().setMaxClusters(0, 16);
  EXPECT_EQ(launch(2), QUACK_RT_ERROR_UNSUPPORTED);
  EXPECT_NE(error().find("cannot run a cluster of 16 CTAs"), std::string::npos)
      << error();
  EXPECT_EQ(fake().numLaunches(), 0);
  // The module it loaded to find out is unloaded.
  EXPECT_EQ(fake().count("cuModuleUnload"), fake().count("cuModuleLoadData"));
}

// A kernel with a sum over rows (Inputs/colsum.json, which the Python
// launch tests use too): dw = the sum of x's rows, through a persistent grid
// of 4 rows per CTA that writes partial sums to the workspace, and a
// finishing launch.
std::string sumMetadata() {
  std::ifstream in(QUACK_RUNTIME_TEST_INPUTS "/colsum.json");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  EXPECT_FALSE(text.empty()) << QUACK_RUNTIME_TEST_INPUTS "/colsum.json";
  return text;
}

TEST_F(LaunchTest, SumsOverRowsLaunchTheFinishingGrid) {
  create(sumMetadata());
  // The finishing entry point takes three parameters (S, workspace, dw):
  // no more of any launch can be read.
  fake().setNumParams(3);
  quack_rt_value sumArgs[4] = {pointer(0x10000), integer(64), pointer(0x30000),
                               pointer(0x40000)};
  auto run = [&](int64_t m) {
    err[0] = 0;
    return quack_rt_kernel_launch(kernel, m, sumArgs, 4, nullptr, err,
                                  sizeof(err));
  };
  // The stand-in keeps 2 CTAs per SM on 132 SMs resident: 264 row groups.
  uint64_t bytes = 0;
  ASSERT_EQ(
      quack_rt_kernel_workspace_size(kernel, 100, &bytes, err, sizeof(err)),
      QUACK_RT_OK)
      << error();
  EXPECT_EQ(bytes, 25u * 4 * 64 * 4); // 25 groups of 4 rows, 64 f32 each
  ASSERT_EQ(
      quack_rt_kernel_workspace_size(kernel, 10000, &bytes, err, sizeof(err)),
      QUACK_RT_OK);
  EXPECT_EQ(bytes, 264u * 4 * 64 * 4);

  ASSERT_EQ(run(10000), QUACK_RT_OK) << error();
  ASSERT_EQ(fake().numLaunches(), 2);
  const fake_cuda_launch &main = *fake().launch(0);
  EXPECT_EQ(main.grid[0], 264u);
  EXPECT_EQ(main.block[0], 128u);
  EXPECT_EQ(main.params[0], 10000u);
  EXPECT_EQ(main.params[1], 0x10000u);
  const fake_cuda_launch &finish = *fake().launch(1);
  EXPECT_EQ(finish.grid[0], 2u); // 64 columns, 32 per CTA
  EXPECT_EQ(finish.grid[1], 1u); // one output
  EXPECT_EQ(finish.block[0], 256u);
  EXPECT_EQ(finish.params[0], 264u * 4); // row slots
  EXPECT_EQ(finish.params[1], 0x40000u); // workspace
  EXPECT_EQ(finish.params[2], 0x30000u); // dw

  // No rows: no main grid, and the sums are still written (zeros).
  ASSERT_EQ(run(0), QUACK_RT_OK) << error();
  ASSERT_EQ(fake().numLaunches(), 3);
  EXPECT_EQ(fake().launch(2)->block[0], 256u);
  EXPECT_EQ(fake().launch(2)->params[0], 0u);
}

TEST_F(LaunchTest, TensorMapsAreEncodedPerLaunchFromTheMetadata) {
  // x through a tensor copy: boxes of 16 columns x 4 groups x 2 rows.
  const std::string hash = R"("hash": "abc123")";
  create(replaced(scaleMetadata, hash,
                  hash + R"(, "tensor_maps": [{"of": "x", "dtype": "f32",
                     "columns": 64, "box": [16, 4, 2]}])"));
  fake().setNumParams(7); // M, five arguments, the map
  args[1].i = 80;         // x's rows 80 elements apart
  ASSERT_EQ(launch(5), QUACK_RT_OK) << error();
  ASSERT_EQ(fake().numTensorMaps(), 1);
  const fake_cuda_tensor_map &m = *fake().tensorMap(0);
  EXPECT_EQ(m.data_type, 7); // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
  EXPECT_EQ(m.rank, 3u);
  EXPECT_EQ(m.address, 0x10000u);
  // [M, N / 16, 16], innermost first; byte strides of a group and a row.
  EXPECT_EQ(m.dims[0], 16u);
  EXPECT_EQ(m.dims[1], 4u);
  EXPECT_EQ(m.dims[2], 5u);
  EXPECT_EQ(m.strides[0], 64u);
  EXPECT_EQ(m.strides[1], 320u);
  EXPECT_EQ(m.box[0], 16u);
  EXPECT_EQ(m.box[1], 4u);
  EXPECT_EQ(m.box[2], 2u);
  EXPECT_EQ(m.element_strides[2], 1u);
  EXPECT_EQ(m.l2_promotion, 3); // 256-byte L2 promotion
  // The map follows the caller's arguments, by value.
  ASSERT_EQ(fake().numLaunches(), 1);
  EXPECT_EQ(fake().launch(0)->params[6], m.marker);

  // Encoded again for every launch, with that launch's M and stride; a
  // single row (stride 0) gets its row rounded up to 16 bytes.
  args[1].i = 0;
  ASSERT_EQ(launch(1), QUACK_RT_OK) << error();
  ASSERT_EQ(fake().numTensorMaps(), 2);
  EXPECT_EQ(fake().tensorMap(1)->dims[2], 1u);
  EXPECT_EQ(fake().tensorMap(1)->strides[1], 256u);
  EXPECT_EQ(fake().launch(1)->params[6], fake().tensorMap(1)->marker);

  fake().fail("cuTensorMapEncodeTiled", 1);
  args[1].i = 64;
  EXPECT_EQ(launch(4), QUACK_RT_ERROR_DRIVER);
  EXPECT_NE(error().find("cuTensorMapEncodeTiled failed: "
                         "CUDA_ERROR_INVALID_VALUE"),
            std::string::npos)
      << error();
  EXPECT_NE(error().find("the tensor map of \"x\""), std::string::npos)
      << error();
  EXPECT_EQ(fake().numLaunches(), 2);
}

/// A kernel on clusters of 16 CTAs with fallbacks on 8 and 4, as files in a
/// scratch directory (quack_rt_kernel_load reads the fallbacks beside it).
class ClusterFallbackTest : public LaunchTest {
protected:
  void SetUp() override {
    LaunchTest::SetUp();
    for (const char *cubin : {"c16.cubin", "c8.cubin", "c4.cubin"})
      dir.write(cubin, "// no real image");
    dir.write("c8.json", clusterMetadata(8, "c8.cubin"));
    dir.write("c4.json", clusterMetadata(4, "c4.cubin"));
    dir.write("c16.json",
              clusterMetadata(16, "c16.cubin", R"("c8.json", "c4.json")"));
  }
  void TearDown() override {
    LaunchTest::TearDown();
    unsetenv("QUACK_RT_MAX_CLUSTER_SIZE");
  }
  void load() {
    ASSERT_EQ(quack_rt_kernel_load((dir.path + "/c16.json").c_str(), &kernel,
                                   err, sizeof(err)),
              QUACK_RT_OK)
        << err;
    ASSERT_EQ(quack_rt_kernel_num_cluster_fallbacks(kernel), 2);
  }
  unsigned inUse(std::string &note) {
    unsigned size = 0;
    char text[512] = {0};
    EXPECT_EQ(quack_rt_kernel_cluster_in_use(kernel, &size, text, sizeof(text),
                                             err, sizeof(err)),
              QUACK_RT_OK)
        << err;
    note = text;
    return size;
  }

  TempDir dir;
};

TEST_F(ClusterFallbackTest, TheOwnClusterServesWhereTheDeviceRunsIt) {
  load();
  std::string note;
  EXPECT_EQ(inUse(note), 16u);
  EXPECT_EQ(note, "");
  ASSERT_EQ(launch(2), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().launch(0)->cluster[0], 16u);
  EXPECT_EQ(fake().launch(0)->grid[0], 32u);
}

TEST_F(ClusterFallbackTest, TheLargestFallbackTheDeviceRunsServes) {
  fake().setMaxClusters(4, 8); // clusters of 16 cannot be co-scheduled
  load();
  std::string note;
  EXPECT_EQ(inUse(note), 8u);
  EXPECT_NE(note.find("cannot run a cluster of 16 CTAs"), std::string::npos)
      << note;
  EXPECT_NE(note.find("using the fallback on a cluster of 8 (c8.cubin)"),
            std::string::npos)
      << note;
  // The launch takes the fallback's grid and cluster; the refused module
  // was unloaded.
  ASSERT_EQ(launch(3), QUACK_RT_OK) << error();
  EXPECT_EQ(fake().launch(0)->cluster[0], 8u);
  EXPECT_EQ(fake().launch(0)->grid[0], 24u);
  EXPECT_EQ(fake().count("cuModuleLoadData"), 2);
  EXPECT_EQ(fake().count("cuModuleUnload"), 1);
}

TEST_F(ClusterFallbackTest, TheEnvironmentCapsTheCluster) {
  setenv("QUACK_RT_MAX_CLUSTER_SIZE", "4", 1);
  load();
  std::string note;
  EXPECT_EQ(inUse(note), 4u);
  EXPECT_NE(note.find("QUACK_RT_MAX_CLUSTER_SIZE=4 rules out a cluster of "
                      "16 CTAs"),
            std::string::npos)
      << note;
  // Ruled out before loading: only the fallback that serves is loaded.
  EXPECT_EQ(fake().count("cuModuleLoadData"), 1);
  setenv("QUACK_RT_MAX_CLUSTER_SIZE", "many", 1);
  quack_rt_kernel_destroy(kernel);
  kernel = nullptr;
  load();
  EXPECT_EQ(launch(1), QUACK_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error().find("QUACK_RT_MAX_CLUSTER_SIZE must be a positive "
                         "number of CTAs, got \"many\""),
            std::string::npos)
      << error();
}

TEST_F(ClusterFallbackTest, NoFallbackThatRunsIsAnError) {
  fake().setMaxClusters(4, 2);
  load();
  EXPECT_EQ(launch(1), QUACK_RT_ERROR_UNSUPPORTED);
  EXPECT_NE(error().find("no cluster fallback of the kernel can run either"),
            std::string::npos)
      << error();
  EXPECT_NE(error().find("cluster of 4 CTAs"), std::string::npos) << error();
  EXPECT_EQ(fake().numLaunches(), 0);
  EXPECT_EQ(fake().count("cuModuleUnload"), 3);
}

} // namespace
