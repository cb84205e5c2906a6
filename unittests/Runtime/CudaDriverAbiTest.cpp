//===- CudaDriverAbiTest.cpp - Our driver declarations against cuda.h -----===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// The runtime declares the CUDA driver types it uses itself, so that it
// builds without CUDA. Where cuda.h is available, check those declarations
// against it at compile time.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/CudaDriver.h"

#include "gtest/gtest.h"

#if __has_include(<cuda.h>)
#include <cuda.h>

namespace cu = quack::runtime::cu;

static_assert(cu::success == CUDA_SUCCESS, "");
static_assert(cu::funcAttrMaxDynamicSharedSizeBytes ==
                  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              "");
static_assert(cu::funcAttrNonPortableClusterSizeAllowed ==
                  CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
              "");
static_assert(cu::devAttrComputeCapabilityMajor ==
                  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
              "");
static_assert(cu::devAttrComputeCapabilityMinor ==
                  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
              "");
static_assert(cu::devAttrMaxSharedMemoryPerBlockOptin ==
                  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
              "");
static_assert(cu::streamCaptureStatusNone == CU_STREAM_CAPTURE_STATUS_NONE, "");
static_assert(cu::tensorMapFloat16 == CU_TENSOR_MAP_DATA_TYPE_FLOAT16, "");
static_assert(cu::tensorMapFloat32 == CU_TENSOR_MAP_DATA_TYPE_FLOAT32, "");
static_assert(cu::tensorMapBFloat16 == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, "");
static_assert(cu::tensorMapL2Promotion256B ==
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              "");
static_assert(sizeof(CUtensorMap) == 128, "");
static_assert(cu::launchAttrClusterDimension ==
                  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
              "");
static_assert(sizeof(cu::LaunchAttribute) == sizeof(CUlaunchAttribute), "");
static_assert(offsetof(cu::LaunchAttribute, value) ==
                  offsetof(CUlaunchAttribute, value),
              "");
static_assert(sizeof(cu::LaunchConfig) == sizeof(CUlaunchConfig), "");
static_assert(offsetof(cu::LaunchConfig, sharedMemBytes) ==
                  offsetof(CUlaunchConfig, sharedMemBytes),
              "");
static_assert(offsetof(cu::LaunchConfig, hStream) ==
                  offsetof(CUlaunchConfig, hStream),
              "");
static_assert(offsetof(cu::LaunchConfig, attrs) ==
                  offsetof(CUlaunchConfig, attrs),
              "");
static_assert(offsetof(cu::LaunchConfig, numAttrs) ==
                  offsetof(CUlaunchConfig, numAttrs),
              "");
constexpr bool haveCudaHeader = true;
#else
constexpr bool haveCudaHeader = false;
#endif

TEST(CudaDriverAbiTest, DeclarationsMatchCudaHeader) {
  if (!haveCudaHeader)
    GTEST_SKIP() << "cuda.h not found at build time; layouts not checked";
}
