//===- FakeCudaDriver.cpp - A CUDA driver stand-in that records calls -----===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// See FakeCudaDriver.h. The device it describes is a Hopper GPU (compute
// capability 9.0, 132 SMs, 227 KB of shared memory per block with the
// opt-in); contexts are addresses of static objects, each module load gets
// a module object of its own and each (module, symbol) a function object,
// kept until the process ends.
//
//===----------------------------------------------------------------------===//

#include "FakeCudaDriver.h"

#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
struct Function {
  std::string symbol;
};
struct Module {
  std::map<std::string, std::unique_ptr<Function>> functions;
};

struct State {
  std::mutex mutex;
  std::map<std::string, int> counts;
  std::map<std::string, int> failures;
  std::map<int, int> funcAttributes;
  std::vector<fake_cuda_launch> launches;
  std::vector<fake_cuda_tensor_map> tensorMaps;
  int numParams = 0;
  std::map<std::string, int> symbolParams;
  std::vector<std::unique_ptr<Module>> modules;
  int capturing = 0;
  int maxClusters = 16;
  int maxClusterSize = 16;
  // Index into `contexts` of the current one (0: none).
  int context = 0;
};

State &state() {
  static State s;
  return s;
}

char contexts[8];

/// Counts the call; returns the failure set for it (0 when none).
int enter(const char *name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  ++s.counts[name];
  auto it = s.failures.find(name);
  return it == s.failures.end() ? 0 : it->second;
}

// The launch configuration of cuLaunchKernelEx, as the driver declares it.
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } clusterDim;
  } value;
};
struct LaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  void *hStream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};
constexpr int launchAttrClusterDimension = 4;

void record(fake_cuda_launch launch, void **params) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  int n = s.numParams;
  if (auto *f = static_cast<const Function *>(launch.function)) {
    std::strncpy(launch.symbol, f->symbol.c_str(), sizeof launch.symbol - 1);
    auto it = s.symbolParams.find(f->symbol);
    if (it != s.symbolParams.end())
      n = it->second;
  }
  for (int i = 0; i < n && params; ++i)
    std::memcpy(&launch.params[i], params[i], sizeof(uint64_t));
  s.launches.push_back(launch);
}
} // namespace

// Control interface.
FAKE_EXPORT void fake_cuda_reset() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.counts.clear();
  s.failures.clear();
  s.funcAttributes.clear();
  s.launches.clear();
  s.tensorMaps.clear();
  s.numParams = 0;
  s.symbolParams.clear();
  s.capturing = 0;
  s.maxClusters = 16;
  s.maxClusterSize = 16;
  s.context = 0;
}
FAKE_EXPORT void fake_cuda_fail(const char *name, int code) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (code)
    s.failures[name] = code;
  else
    s.failures.erase(name);
}
FAKE_EXPORT int fake_cuda_count(const char *name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.counts.find(name);
  return it == s.counts.end() ? 0 : it->second;
}
FAKE_EXPORT void fake_cuda_set_num_params(int n) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.numParams = n < FAKE_CUDA_MAX_PARAMS ? n : FAKE_CUDA_MAX_PARAMS;
}
FAKE_EXPORT void fake_cuda_set_symbol_params(const char *symbol, int n) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (n < 0)
    s.symbolParams.erase(symbol);
  else
    s.symbolParams[symbol] = n < FAKE_CUDA_MAX_PARAMS ? n : FAKE_CUDA_MAX_PARAMS;
}
FAKE_EXPORT void fake_cuda_set_capturing(int capturing) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.capturing = capturing;
}
FAKE_EXPORT void fake_cuda_set_max_clusters(int clusters, int maxSize) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.maxClusters = clusters;
  s.maxClusterSize = maxSize;
}
FAKE_EXPORT int fake_cuda_num_launches() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return static_cast<int>(s.launches.size());
}
FAKE_EXPORT const fake_cuda_launch *fake_cuda_get_launch(int index) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (index < 0 || index >= static_cast<int>(s.launches.size()))
    return nullptr;
  return &s.launches[index];
}
FAKE_EXPORT void fake_cuda_set_context(int id) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.context = id > 0 && id < 8 ? id : 0;
}
FAKE_EXPORT int fake_cuda_num_tensor_maps() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return static_cast<int>(s.tensorMaps.size());
}
FAKE_EXPORT const fake_cuda_tensor_map *fake_cuda_get_tensor_map(int index) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (index < 0 || index >= static_cast<int>(s.tensorMaps.size()))
    return nullptr;
  return &s.tensorMaps[index];
}
FAKE_EXPORT int fake_cuda_func_attribute(int attribute) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto it = s.funcAttributes.find(attribute);
  return it == s.funcAttributes.end() ? -1 : it->second;
}

// Driver entry points.
FAKE_EXPORT int cuInit(unsigned) { return enter("cuInit"); }
FAKE_EXPORT int cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return enter("cuDeviceGet");
}
FAKE_EXPORT int cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case 75: // compute capability major
    *value = 9;
    break;
  case 76: // minor
    *value = 0;
    break;
  case 97: // shared memory per block with the opt-in
    *value = 232448;
    break;
  case 16: // multiprocessors
    *value = 132;
    break;
  default:
    *value = 0;
  }
  return enter("cuDeviceGetAttribute");
}
FAKE_EXPORT int cuCtxGetCurrent(void **ctx) {
  int r = enter("cuCtxGetCurrent");
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  *ctx = s.context ? &contexts[s.context] : nullptr;
  return r;
}
FAKE_EXPORT int cuCtxSetCurrent(void *ctx) {
  int r = enter("cuCtxSetCurrent");
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!r)
    s.context = ctx ? static_cast<int>(static_cast<char *>(ctx) - contexts) : 0;
  return r;
}
FAKE_EXPORT int cuCtxGetDevice(int *device) {
  *device = 0;
  return enter("cuCtxGetDevice");
}
FAKE_EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int) {
  *ctx = &contexts[1];
  return enter("cuDevicePrimaryCtxRetain");
}
FAKE_EXPORT int cuModuleLoadData(void **module, const void *) {
  int r = enter("cuModuleLoadData");
  if (r)
    return r;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.modules.push_back(std::make_unique<Module>());
  *module = s.modules.back().get();
  return 0;
}
FAKE_EXPORT int cuModuleUnload(void *) { return enter("cuModuleUnload"); }
FAKE_EXPORT int cuModuleGetFunction(void **function, void *module,
                                    const char *name) {
  int r = enter("cuModuleGetFunction");
  if (r)
    return r;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto &f = static_cast<Module *>(module)->functions[name];
  if (!f)
    f = std::make_unique<Function>(Function{name});
  *function = f.get();
  return 0;
}
FAKE_EXPORT int cuFuncSetAttribute(void *, int attribute, int value) {
  int r = enter("cuFuncSetAttribute");
  if (!r) {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.funcAttributes[attribute] = value;
  }
  return r;
}
FAKE_EXPORT int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz,
                               unsigned shared, void *stream, void **params,
                               void **) {
  int r = enter("cuLaunchKernel");
  if (r)
    return r;
  fake_cuda_launch l{};
  l.function = f;
  l.grid[0] = gx, l.grid[1] = gy, l.grid[2] = gz;
  l.block[0] = bx, l.block[1] = by, l.block[2] = bz;
  l.shared_bytes = shared;
  l.stream = stream;
  record(l, params);
  return 0;
}
FAKE_EXPORT int cuLaunchKernelEx(const LaunchConfig *config, void *f,
                                 void **params, void **) {
  int r = enter("cuLaunchKernelEx");
  if (r)
    return r;
  fake_cuda_launch l{};
  l.ex = 1;
  l.function = f;
  l.grid[0] = config->gridDimX, l.grid[1] = config->gridDimY,
  l.grid[2] = config->gridDimZ;
  l.block[0] = config->blockDimX, l.block[1] = config->blockDimY,
  l.block[2] = config->blockDimZ;
  l.shared_bytes = config->sharedMemBytes;
  l.stream = config->hStream;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == launchAttrClusterDimension) {
      l.cluster[0] = config->attrs[i].value.clusterDim.x;
      l.cluster[1] = config->attrs[i].value.clusterDim.y;
      l.cluster[2] = config->attrs[i].value.clusterDim.z;
    }
  record(l, params);
  return 0;
}
FAKE_EXPORT int cuStreamIsCapturing(void *, int *status) {
  int r = enter("cuStreamIsCapturing");
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  *status = s.capturing;
  return r;
}
FAKE_EXPORT int cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *,
                                                            int, size_t) {
  *blocks = 2;
  return enter("cuOccupancyMaxActiveBlocksPerMultiprocessor");
}
FAKE_EXPORT int cuOccupancyMaxActiveClusters(int *clusters, void *,
                                             const LaunchConfig *config) {
  int r = enter("cuOccupancyMaxActiveClusters");
  unsigned size = 1;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    if (config->attrs[i].id == launchAttrClusterDimension)
      size = config->attrs[i].value.clusterDim.x *
             config->attrs[i].value.clusterDim.y *
             config->attrs[i].value.clusterDim.z;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  *clusters = static_cast<int>(size) > s.maxClusterSize ? 0 : s.maxClusters;
  return r;
}
FAKE_EXPORT int cuTensorMapEncodeTiled(void *map, int dataType, unsigned rank,
                                       void *address, const uint64_t *dims,
                                       const uint64_t *strides,
                                       const unsigned *box,
                                       const unsigned *elementStrides, int, int,
                                       int l2Promotion, int) {
  int r = enter("cuTensorMapEncodeTiled");
  if (r)
    return r;
  fake_cuda_tensor_map m{};
  m.data_type = dataType;
  m.rank = rank;
  m.address = reinterpret_cast<uint64_t>(address);
  for (unsigned i = 0; i < rank && i < 5; ++i) {
    m.dims[i] = dims[i];
    m.box[i] = box[i];
    m.element_strides[i] = elementStrides[i];
    if (i + 1 < rank && i < 4)
      m.strides[i] = strides[i];
  }
  m.l2_promotion = l2Promotion;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  m.marker = 0x7e4500000000ull + s.tensorMaps.size();
  std::memset(map, 0, 128);
  std::memcpy(map, &m.marker, sizeof(m.marker));
  s.tensorMaps.push_back(m);
  return 0;
}
namespace {
/// The driver errors the stand-in can name: code, name and text.
struct ErrorInfo {
  int code;
  const char *name;
  const char *text;
};
constexpr ErrorInfo knownErrors[] = {
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
};
const ErrorInfo *findError(int code) {
  for (const ErrorInfo &e : knownErrors)
    if (e.code == code)
      return &e;
  return nullptr;
}
} // namespace

// Like the driver, a code it cannot name gives null and an error.
FAKE_EXPORT int cuGetErrorName(int code, const char **name) {
  const ErrorInfo *e = findError(code);
  *name = e ? e->name : nullptr;
  return e ? 0 : 1;
}
FAKE_EXPORT int cuGetErrorString(int code, const char **text) {
  const ErrorInfo *e = findError(code);
  *text = e ? e->text : nullptr;
  return e ? 0 : 1;
}
