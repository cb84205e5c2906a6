//===- CudaDriver.cpp - The CUDA driver API, opened at run time -----------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

using namespace quack::runtime;
using namespace quack::runtime::cu;

std::string Driver::describe(const char *call, Result result) const {
  const char *name = nullptr;
  const char *text = nullptr;
  if (getErrorName)
    getErrorName(result, &name);
  if (getErrorString)
    getErrorString(result, &text);
  std::string msg = std::string(call) + " failed: ";
  msg += name ? name : "CUDA error " + std::to_string(result);
  if (text)
    msg += std::string(" (") + text + ")";
  return msg;
}

namespace {
struct DriverState {
  Driver driver;
  std::string error;
  bool ok = false;
};

template <typename Fn>
bool resolve(void *lib, Fn &fn, const char *name, std::string &error) {
  void *sym = dlsym(lib, name);
  if (!sym) {
    error = std::string("the CUDA driver library has no entry point ") + name +
            " (driver too old?)";
    return false;
  }
  fn = reinterpret_cast<Fn>(sym);
  return true;
}

void openDriver(DriverState &state) {
  const char *env = std::getenv("QUACK_RT_CUDA_LIBRARY");
  std::string path = env && *env ? env : "libcuda.so.1";
  // The handle is kept for the life of the process.
  void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    state.error = "cannot open the CUDA driver library " + path + ": " +
                  (why ? why : "unknown error") +
                  " (is an NVIDIA driver installed on this machine?)";
    return;
  }
  Driver &d = state.driver;
  std::string &e = state.error;
  bool ok =
      resolve(lib, d.init, "cuInit", e) &&
      resolve(lib, d.deviceGet, "cuDeviceGet", e) &&
      resolve(lib, d.deviceGetAttribute, "cuDeviceGetAttribute", e) &&
      resolve(lib, d.ctxGetCurrent, "cuCtxGetCurrent", e) &&
      resolve(lib, d.ctxSetCurrent, "cuCtxSetCurrent", e) &&
      resolve(lib, d.ctxGetDevice, "cuCtxGetDevice", e) &&
      resolve(lib, d.devicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", e) &&
      resolve(lib, d.moduleLoadData, "cuModuleLoadData", e) &&
      resolve(lib, d.moduleUnload, "cuModuleUnload", e) &&
      resolve(lib, d.moduleGetFunction, "cuModuleGetFunction", e) &&
      resolve(lib, d.funcSetAttribute, "cuFuncSetAttribute", e) &&
      resolve(lib, d.launchKernel, "cuLaunchKernel", e) &&
      resolve(lib, d.launchKernelEx, "cuLaunchKernelEx", e) &&
      resolve(lib, d.streamIsCapturing, "cuStreamIsCapturing", e) &&
      resolve(lib, d.occupancyMaxActiveBlocksPerMultiprocessor,
              "cuOccupancyMaxActiveBlocksPerMultiprocessor", e) &&
      resolve(lib, d.getErrorName, "cuGetErrorName", e) &&
      resolve(lib, d.getErrorString, "cuGetErrorString", e);
  if (!ok)
    return;
  d.occupancyMaxActiveClusters = reinterpret_cast<decltype(
      d.occupancyMaxActiveClusters)>(dlsym(lib, "cuOccupancyMaxActiveClusters"));
  d.tensorMapEncodeTiled = reinterpret_cast<decltype(
      d.tensorMapEncodeTiled)>(dlsym(lib, "cuTensorMapEncodeTiled"));
  Result r = d.init(0);
  if (r != success) {
    state.error = d.describe("cuInit", r);
    return;
  }
  state.ok = true;
}
} // namespace

const Driver *cu::getDriver(std::string &error) {
  static DriverState state;
  static std::once_flag once;
  std::call_once(once, [] { openDriver(state); });
  if (!state.ok) {
    error = state.error;
    return nullptr;
  }
  return &state.driver;
}
