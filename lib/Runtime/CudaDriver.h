//===- CudaDriver.h - The CUDA driver API, opened at run time ---*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The few CUDA driver types and entry points the runtime uses, declared here
/// (no cuda.h needed to build) and resolved with dlopen/dlsym, so that the
/// runtime builds and loads on machines without a GPU. The declarations
/// follow the driver API's ABI, which NVIDIA keeps stable.
///
//===----------------------------------------------------------------------===//

#ifndef QUACK_LIB_RUNTIME_CUDADRIVER_H
#define QUACK_LIB_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <string>

namespace quack {
namespace runtime {
namespace cu {

using Result = int;
using Device = int;
using Context = struct CUctx_st *;
using Module = struct CUmod_st *;
using Function = struct CUfunc_st *;
using Stream = struct CUstream_st *;

constexpr Result success = 0;
constexpr Result errorNotInitialized = 3;

/// CUfunction_attribute values.
constexpr int funcAttrMaxDynamicSharedSizeBytes = 8;
constexpr int funcAttrNonPortableClusterSizeAllowed = 14;

/// CUdevice_attribute values.
constexpr int devAttrComputeCapabilityMajor = 75;
constexpr int devAttrComputeCapabilityMinor = 76;
constexpr int devAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int devAttrMultiprocessorCount = 16;

/// CUtensorMapDataType values.
constexpr int tensorMapFloat16 = 6;
constexpr int tensorMapFloat32 = 7;
constexpr int tensorMapBFloat16 = 9;
/// CUtensorMapL2promotion: CU_TENSOR_MAP_L2_PROMOTION_L2_256B.
constexpr int tensorMapL2Promotion256B = 3;

/// CUstreamCaptureStatus: CU_STREAM_CAPTURE_STATUS_NONE.
constexpr int streamCaptureStatusNone = 0;

/// CUlaunchAttributeID: CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION.
constexpr int launchAttrClusterDimension = 4;

/// CUlaunchAttributeValue: a 64-byte union; we use its cluster dims member.
union LaunchAttributeValue {
  char pad[64];
  struct {
    unsigned x, y, z;
  } clusterDim;
};

/// CUlaunchAttribute.
struct LaunchAttribute {
  int id;
  char pad[8 - sizeof(int)];
  LaunchAttributeValue value;
};

/// CUlaunchConfig.
struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  Stream hStream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};

static_assert(sizeof(LaunchAttribute) == 72, "CUlaunchAttribute layout");
static_assert(offsetof(LaunchConfig, hStream) == 32, "CUlaunchConfig layout");
static_assert(sizeof(LaunchConfig) == 56, "CUlaunchConfig layout");

/// The driver entry points, resolved once per process.
struct Driver {
  Result (*init)(unsigned flags) = nullptr;
  Result (*deviceGet)(Device *device, int ordinal) = nullptr;
  Result (*deviceGetAttribute)(int *value, int attribute,
                               Device device) = nullptr;
  Result (*ctxGetCurrent)(Context *ctx) = nullptr;
  Result (*ctxSetCurrent)(Context ctx) = nullptr;
  Result (*ctxGetDevice)(Device *device) = nullptr;
  Result (*devicePrimaryCtxRetain)(Context *ctx, Device device) = nullptr;
  Result (*moduleLoadData)(Module *module, const void *image) = nullptr;
  Result (*moduleUnload)(Module module) = nullptr;
  Result (*moduleGetFunction)(Function *function, Module module,
                              const char *name) = nullptr;
  Result (*funcSetAttribute)(Function function, int attribute,
                             int value) = nullptr;
  Result (*launchKernel)(Function f, unsigned gridDimX, unsigned gridDimY,
                         unsigned gridDimZ, unsigned blockDimX,
                         unsigned blockDimY, unsigned blockDimZ,
                         unsigned sharedMemBytes, Stream stream,
                         void **kernelParams, void **extra) = nullptr;
  Result (*launchKernelEx)(const LaunchConfig *config, Function f,
                           void **kernelParams, void **extra) = nullptr;
  Result (*streamIsCapturing)(Stream stream, int *status) = nullptr;
  Result (*occupancyMaxActiveBlocksPerMultiprocessor)(
      int *numBlocks, Function f, int blockSize,
      size_t dynamicSharedBytes) = nullptr;
  /// Optional (CUDA 12+); null when the driver lacks it.
  Result (*occupancyMaxActiveClusters)(int *numClusters, Function f,
                                       const LaunchConfig *config) = nullptr;
  /// Optional (CUDA 12+): cuTensorMapEncodeTiled; null when the driver
  /// lacks it.
  Result (*tensorMapEncodeTiled)(void *tensorMap, int dataType, unsigned rank,
                                 void *globalAddress,
                                 const unsigned long long *globalDim,
                                 const unsigned long long *globalStrides,
                                 const unsigned *boxDim,
                                 const unsigned *elementStrides, int interleave,
                                 int swizzle, int l2Promotion,
                                 int oobFill) = nullptr;
  Result (*getErrorName)(Result error, const char **str) = nullptr;
  Result (*getErrorString)(Result error, const char **str) = nullptr;

  /// Formats a driver error: "<call> failed: CUDA_ERROR_X (<text>)".
  std::string describe(const char *call, Result result) const;
};

/// Opens the driver and calls cuInit(0) once per process. Returns null and
/// sets \p error when the library, an entry point or cuInit is unavailable;
/// the same message is returned on every later call. The library is
/// "libcuda.so.1" unless the environment variable QUACK_RT_CUDA_LIBRARY names
/// another file.
const Driver *getDriver(std::string &error);

} // namespace cu
} // namespace runtime
} // namespace quack

#endif // QUACK_LIB_RUNTIME_CUDADRIVER_H
