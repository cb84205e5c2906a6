//===- Kernel.cpp - Load and launch a compiled kernel ---------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Runtime/Kernel.h"

#include "CudaDriver.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace quack;
using namespace quack::runtime;

/// Clusters larger than this need the non-portable-size attribute.
static constexpr unsigned portableClusterSize = 8;

struct Kernel::Loaded {
  cu::Context context = nullptr;
  /// The variant loaded: the kernel's own or a cluster fallback.
  const KernelMetadata *meta = nullptr;
  /// Why a fallback serves this context (empty: the kernel's own).
  std::string note;
  cu::Module module = nullptr;
  cu::Function function = nullptr;
  /// For cluster kernels: clusters the device keeps active at once.
  int maxActiveClusters = 0;
  /// For persistent kernels: the finishing entry point, and the row groups
  /// (CTAs or clusters) the device keeps resident at once.
  cu::Function finishFunction = nullptr;
  int64_t residentGroups = 0;
};

static bool readFile(const std::string &path, std::vector<char> &out,
                     std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  out.assign(std::istreambuf_iterator<char>(in),
             std::istreambuf_iterator<char>());
  if (in.bad()) {
    error = "cannot read " + path;
    return false;
  }
  return true;
}

Status Kernel::create(const std::string &metadataText, std::vector<char> image,
                      std::unique_ptr<Kernel> &result, std::string &error) {
  std::unique_ptr<Kernel> kernel(new Kernel());
  Variant &own = kernel->variants.front();
  Status s = parseKernelMetadata(metadataText, own.meta, error);
  if (s != Status::Ok)
    return s;
  if (image.empty()) {
    error = "kernel \"" + own.meta.kernel + "\": the image is empty";
    return Status::InvalidArgument;
  }
  // A PTX image must be NUL-terminated; a trailing NUL harms no cubin.
  image.push_back('\0');
  own.image = std::move(image);
  result = std::move(kernel);
  return Status::Ok;
}

/// Reads the cubin \p meta names, in \p dir, NUL-terminated.
static Status readCubin(const std::string &dir, const std::string &metadataPath,
                        const KernelMetadata &meta, std::vector<char> &image,
                        std::string &error) {
  std::string cubinPath = dir + meta.cubin;
  if (!readFile(cubinPath, image, error)) {
    error = metadataPath + ": " + error;
    return Status::IoError;
  }
  if (image.empty()) {
    error = cubinPath + " is empty";
    return Status::IoError;
  }
  image.push_back('\0');
  return Status::Ok;
}

Status Kernel::load(const std::string &metadataPath,
                    std::unique_ptr<Kernel> &result, std::string &error) {
  std::vector<char> text;
  if (!readFile(metadataPath, text, error))
    return Status::IoError;
  std::unique_ptr<Kernel> kernel;
  std::string parseError;
  Status s =
      create(std::string(text.begin(), text.end()), {'\0'}, kernel, parseError);
  if (s != Status::Ok) {
    error = metadataPath + ": " + parseError;
    return s;
  }
  size_t slash = metadataPath.rfind('/');
  std::string dir =
      slash == std::string::npos ? "" : metadataPath.substr(0, slash + 1);
  // The same kernel on smaller clusters, read now so that a launch never
  // touches the file system. (Reserved first, so that `own` stays put.)
  kernel->variants.reserve(
      1 + kernel->variants.front().meta.clusterFallbacks.size());
  Variant &own = kernel->variants.front();
  if ((s = readCubin(dir, metadataPath, own.meta, own.image, error)) !=
      Status::Ok)
    return s;
  for (const std::string &file : own.meta.clusterFallbacks) {
    const std::string fallbackPath = dir + file;
    Variant fallback;
    if (!readFile(fallbackPath, text, error)) {
      error = metadataPath + ": cluster fallback: " + error;
      return Status::IoError;
    }
    if ((s = parseKernelMetadata(std::string(text.begin(), text.end()),
                                 fallback.meta, parseError)) != Status::Ok) {
      error = fallbackPath + ": " + parseError;
      return s;
    }
    if ((s = checkClusterFallback(
             own.meta, fallback.meta,
             kernel->variants.back().meta.getClusterSize(), parseError)) !=
        Status::Ok) {
      error = fallbackPath + ": " + parseError;
      return s;
    }
    if ((s = readCubin(dir, fallbackPath, fallback.meta, fallback.image,
                       error)) != Status::Ok)
      return s;
    kernel->variants.push_back(std::move(fallback));
  }
  kernel->path = metadataPath;
  result = std::move(kernel);
  return Status::Ok;
}

Kernel::Kernel() : variants(1) {}

Kernel::~Kernel() {
  std::string ignored;
  const cu::Driver *driver = loaded.empty() ? nullptr : cu::getDriver(ignored);
  if (!driver)
    return;
  // Errors are ignored: the context may already be gone at process exit.
  for (const std::unique_ptr<Loaded> &l : loaded)
    driver->moduleUnload(l->module);
}

Status Kernel::prepare(std::string &error) {
  const Loaded *l = nullptr;
  return getFunction(nullptr, l, error);
}

/// Reads $QUACK_RT_MAX_CLUSTER_SIZE: the largest cluster the runtime
/// launches (0 when unset).
static Status getClusterCap(unsigned &cap, std::string &error) {
  cap = 0;
  const char *text = std::getenv("QUACK_RT_MAX_CLUSTER_SIZE");
  if (!text || !*text)
    return Status::Ok;
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (*end || errno || value < 1 || value > 1024) {
    error = std::string("QUACK_RT_MAX_CLUSTER_SIZE must be a positive "
                        "number of CTAs, got \"") +
            text + "\"";
    return Status::InvalidArgument;
  }
  cap = static_cast<unsigned>(value);
  return Status::Ok;
}

Status Kernel::getVariantInUse(unsigned &clusterSize, std::string &note,
                               std::string &error) {
  const Loaded *l = nullptr;
  if (Status s = getFunction(nullptr, l, error); s != Status::Ok)
    return s;
  clusterSize = l->meta->getClusterSize();
  note = l->note;
  return Status::Ok;
}

Status Kernel::getFunction(void *stream, const Loaded *&result,
                           std::string &error) {
  const cu::Driver *d = cu::getDriver(error);
  if (!d)
    return Status::DriverUnavailable;
  const KernelMetadata &meta = getMetadata();
  // The prefix of every error; built only for one (this runs per launch).
  auto name = [&meta] { return "kernel \"" + meta.kernel + "\": "; };

  cu::Context ctx = nullptr;
  cu::Result r = d->ctxGetCurrent(&ctx);
  if (r != cu::success) {
    error = name() + d->describe("cuCtxGetCurrent", r);
    return Status::DriverError;
  }
  if (!ctx) {
    // No context yet: use device 0's primary context, as the CUDA runtime
    // (and so PyTorch) would.
    cu::Device dev = 0;
    if ((r = d->deviceGet(&dev, 0)) != cu::success) {
      error = name() + d->describe("cuDeviceGet", r);
      return Status::DriverError;
    }
    if ((r = d->devicePrimaryCtxRetain(&ctx, dev)) != cu::success) {
      error = name() + d->describe("cuDevicePrimaryCtxRetain", r);
      return Status::DriverError;
    }
    if ((r = d->ctxSetCurrent(ctx)) != cu::success) {
      error = name() + d->describe("cuCtxSetCurrent", r);
      return Status::DriverError;
    }
  }

  std::lock_guard<std::mutex> lock(mutex);
  for (const std::unique_ptr<Loaded> &l : loaded) {
    if (l->context == ctx) {
      result = l.get();
      return Status::Ok;
    }
  }

  // Loading a module inside a graph capture is not allowed.
  if (stream) {
    int capture = cu::streamCaptureStatusNone;
    r = d->streamIsCapturing(static_cast<cu::Stream>(stream), &capture);
    if (r != cu::success) {
      error = name() + d->describe("cuStreamIsCapturing", r);
      return Status::DriverError;
    }
    if (capture != cu::streamCaptureStatusNone) {
      error = name() + "first launch in this CUDA context happens during a "
                     "CUDA graph capture, where the module cannot be loaded; "
                     "launch or prepare the kernel once before capturing";
      return Status::Unsupported;
    }
  }

  cu::Device dev = 0;
  if ((r = d->ctxGetDevice(&dev)) != cu::success) {
    error = name() + d->describe("cuCtxGetDevice", r);
    return Status::DriverError;
  }

  // The kernel's own variant, else the largest cluster fallback the device
  // can co-schedule; `passedOver` says why the larger ones were not used.
  std::string passedOver;
  for (size_t i = 0; i < variants.size(); ++i) {
    auto l = std::make_unique<Loaded>();
    l->context = ctx;
    bool clusterRefused = false;
    std::string why;
    Status s = loadVariant(variants[i], dev, *l, clusterRefused, why);
    if (s == Status::Ok) {
      l->meta = &variants[i].meta;
      if (i > 0)
        l->note = passedOver + "; using the fallback on a cluster of " +
                  std::to_string(variants[i].meta.getClusterSize()) + " (" +
                  variants[i].meta.cubin + ")";
      result = l.get();
      loaded.push_back(std::move(l));
      return Status::Ok;
    }
    if (!clusterRefused) {
      error = name() + why;
      return s;
    }
    passedOver += (passedOver.empty() ? "" : "; ") + why;
    if (i + 1 == variants.size()) {
      error = name() + passedOver;
      error += variants.size() == 1
                   ? "; use a variant compiled with a smaller cluster (quackc "
                     "--config=cluster=N, or a bundle with cluster fallbacks)"
                   : "; no cluster fallback of the kernel can run either";
      return s;
    }
  }
  return Status::Unsupported; // Unreachable: there is always one variant.
}

Status Kernel::loadVariant(const Variant &variant, int device, Loaded &l,
                           bool &clusterRefused, std::string &error) {
  const cu::Driver *d = cu::getDriver(error);
  const KernelMetadata &meta = variant.meta;
  const cu::Device dev = device;
  const unsigned clusterSize = meta.getClusterSize();
  cu::Result r;

  unsigned cap = 0;
  if (Status s = getClusterCap(cap, error); s != Status::Ok)
    return s;
  if (cap && clusterSize > cap) {
    clusterRefused = true;
    error = "QUACK_RT_MAX_CLUSTER_SIZE=" + std::to_string(cap) +
            " rules out a cluster of " + std::to_string(clusterSize) + " CTAs";
    return Status::Unsupported;
  }

  int major = 0, minor = 0, smemOptin = 0;
  if ((r = d->deviceGetAttribute(&major, cu::devAttrComputeCapabilityMajor,
                                 dev)) != cu::success ||
      (r = d->deviceGetAttribute(&minor, cu::devAttrComputeCapabilityMinor,
                                 dev)) != cu::success ||
      (r = d->deviceGetAttribute(&smemOptin,
                                 cu::devAttrMaxSharedMemoryPerBlockOptin,
                                 dev)) != cu::success) {
    error = d->describe("cuDeviceGetAttribute", r);
    return Status::DriverError;
  }
  if (meta.staticSharedBytes + meta.dynamicSharedBytes > smemOptin) {
    error = "needs " +
            std::to_string(meta.staticSharedBytes + meta.dynamicSharedBytes) +
            " bytes of shared memory per block, the device allows " +
            std::to_string(smemOptin);
    return Status::Unsupported;
  }

  if ((r = d->moduleLoadData(&l.module, variant.image.data())) !=
      cu::success) {
    error = d->describe("cuModuleLoadData", r) + " loading " +
            (path.empty() ? std::string("the image") : meta.cubin) +
            " (built for " + meta.arch + ") on a device of compute " +
            "capability " + std::to_string(major) + "." + std::to_string(minor);
    return Status::DriverError;
  }
  auto unloadOnError = [&](const char *call) {
    error = d->describe(call, r);
    d->moduleUnload(l.module);
    return Status::DriverError;
  };
  if ((r = d->moduleGetFunction(&l.function, l.module, meta.symbol.c_str())) !=
      cu::success)
    return unloadOnError("cuModuleGetFunction");
  // Without the opt-in, the driver fits the dynamic bytes beside the static
  // ones under 48 KB and finds no room (occupancy 0).
  if (int64_t optIn = getDynamicSharedOptIn(meta);
      optIn > 0 && (r = d->funcSetAttribute(
                        l.function, cu::funcAttrMaxDynamicSharedSizeBytes,
                        static_cast<int>(optIn))) != cu::success)
    return unloadOnError("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  if (clusterSize > portableClusterSize &&
      (r = d->funcSetAttribute(l.function,
                               cu::funcAttrNonPortableClusterSizeAllowed, 1)) !=
          cu::success)
    return unloadOnError(
        "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)");
  // A cluster that the device cannot co-schedule (too many CTAs, threads or
  // shared memory for one GPC, or an MPS/MIG partition) would fail at every
  // launch: find out once, here, naming the cluster.
  if (clusterSize > 1 && d->occupancyMaxActiveClusters) {
    cu::LaunchAttribute attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.id = cu::launchAttrClusterDimension;
    attr.value.clusterDim.x = meta.cluster[0];
    attr.value.clusterDim.y = meta.cluster[1];
    attr.value.clusterDim.z = meta.cluster[2];
    cu::LaunchConfig config;
    std::memset(&config, 0, sizeof(config));
    config.gridDimX = clusterSize;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = meta.block[0];
    config.blockDimY = meta.block[1];
    config.blockDimZ = meta.block[2];
    config.sharedMemBytes = static_cast<unsigned>(meta.dynamicSharedBytes);
    config.attrs = &attr;
    config.numAttrs = 1;
    int clusters = 0;
    if ((r = d->occupancyMaxActiveClusters(&clusters, l.function, &config)) !=
        cu::success)
      return unloadOnError("cuOccupancyMaxActiveClusters");
    if (clusters < 1) {
      clusterRefused = true;
      error = "the device cannot run a cluster of " +
              std::to_string(clusterSize) + " CTAs of " +
              std::to_string(meta.block[0]) +
              " threads (cuOccupancyMaxActiveClusters gives 0)";
      d->moduleUnload(l.module);
      return Status::Unsupported;
    }
    l.maxActiveClusters = clusters;
  }
  if (meta.persistent) {
    if (!meta.finishSymbol.empty() &&
        (r = d->moduleGetFunction(&l.finishFunction, l.module,
                                  meta.finishSymbol.c_str())) != cu::success)
      return unloadOnError("cuModuleGetFunction");
    if (clusterSize > 1) {
      l.residentGroups = l.maxActiveClusters;
    } else {
      int perSm = 0, sms = 0;
      if ((r = d->occupancyMaxActiveBlocksPerMultiprocessor(
               &perSm, l.function,
               static_cast<int>(meta.block[0] * meta.block[1] * meta.block[2]),
               static_cast<size_t>(meta.dynamicSharedBytes))) != cu::success)
        return unloadOnError("cuOccupancyMaxActiveBlocksPerMultiprocessor");
      if ((r = d->deviceGetAttribute(&sms, cu::devAttrMultiprocessorCount,
                                     dev)) != cu::success)
        return unloadOnError("cuDeviceGetAttribute");
      l.residentGroups = static_cast<int64_t>(perSm) * sms;
    }
    if (l.residentGroups < 1) {
      error = "the device cannot keep one CTA of this kernel resident "
              "(occupancy 0)";
      d->moduleUnload(l.module);
      return Status::Unsupported;
    }
  }
  return Status::Ok;
}

namespace {
/// One kernel parameter's storage, as the entry point reads it.
union ParamSlot {
  int64_t i64;
  uint64_t u64;
  int32_t i32;
  float f32;
};
} // namespace

Status Kernel::getWorkspaceBytes(int64_t m, uint64_t &bytes,
                                 std::string &error) {
  const KernelMetadata &meta = getMetadata();
  bytes = 0;
  // Only sums over rows take a workspace (every variant has the same).
  if (meta.workspaceParam < 0)
    return Status::Ok;
  if (m < 0) {
    error = "kernel \"" + meta.kernel + "\": M must be non-negative, got " +
            std::to_string(m);
    return Status::InvalidArgument;
  }
  const Loaded *l = nullptr;
  if (Status s = getFunction(nullptr, l, error); s != Status::Ok)
    return s;
  unsigned gridX = 0;
  computePersistentGrid(*l->meta, m, l->residentGroups, gridX, bytes);
  return Status::Ok;
}

Status Kernel::launch(int64_t m, const ArgValue *args, size_t numArgs,
                      void *stream, std::string &error) {
  // Every variant has the kernel's parameters, alignment and sums over rows;
  // a fallback's grid may loop over rows where the kernel's does not (or
  // the other way round), so the grid follows the variant loaded.
  const KernelMetadata &own = getMetadata();
  Status s = checkLaunchArguments(own, m, args, numArgs, error);
  // With no rows nothing runs, but sums over rows are still written (0).
  if (s != Status::Ok || (m == 0 && own.finishSymbol.empty()))
    return s;
  unsigned gridX = 0;
  // A grid over rows is checked before the driver is opened.
  if (!own.persistent && (s = computeGridSize(own, m, gridX, error)) !=
                             Status::Ok)
    return s;
  const Loaded *l = nullptr;
  if ((s = getFunction(stream, l, error)) != Status::Ok)
    return s;
  const KernelMetadata &meta = *l->meta;
  if (!meta.persistent) {
    if (&meta != &own &&
        (s = computeGridSize(meta, m, gridX, error)) != Status::Ok)
      return s;
    return launchMain(l, m, gridX, args, numArgs, stream, error);
  }
  uint64_t workspaceBytes = 0;
  computePersistentGrid(meta, m, l->residentGroups, gridX, workspaceBytes);
  if (m > 0 &&
      (s = launchMain(l, m, gridX, args, numArgs, stream, error)) != Status::Ok)
    return s;
  if (meta.finishSymbol.empty())
    return Status::Ok;
  return launchFinish(l, m == 0 ? 0 : gridX, args, stream, error);
}

Status Kernel::launchFinish(const Loaded *l, unsigned gridX,
                            const ArgValue *args, void *stream,
                            std::string &error) {
  const KernelMetadata &meta = *l->meta;
  // (slots, workspace, outputs...): slots = row groups x rows per CTA.
  int64_t slots = static_cast<int64_t>(gridX / meta.ctasPerRowGroup) *
                  meta.rowsPerCta;
  // On the stack for the few outputs a kernel has (this runs per launch).
  const size_t numValues = 2 + meta.finishOutputs.size();
  constexpr size_t inlineValues = 8;
  ParamSlot inlineSlots[inlineValues];
  void *inlinePtrs[inlineValues];
  std::vector<ParamSlot> heapSlots;
  std::vector<void *> heapPtrs;
  ParamSlot *values = inlineSlots;
  void **ptrs = inlinePtrs;
  if (numValues > inlineValues) {
    heapSlots.resize(numValues);
    heapPtrs.resize(numValues);
    values = heapSlots.data();
    ptrs = heapPtrs.data();
  }
  values[0].i64 = slots;
  values[1].u64 = args[meta.workspaceParam - 1].u;
  for (size_t j = 0; j < meta.finishOutputs.size(); ++j)
    values[2 + j].u64 = args[meta.finishOutputs[j] - 1].u;
  for (size_t i = 0; i < numValues; ++i)
    ptrs[i] = &values[i];
  unsigned gridXFinish = static_cast<unsigned>(
      (meta.n + meta.finishColumnsPerCta - 1) / meta.finishColumnsPerCta);
  const cu::Driver *d = cu::getDriver(error);
  cu::Result r = d->launchKernel(
      l->finishFunction, gridXFinish,
      static_cast<unsigned>(meta.finishOutputs.size()), 1, meta.finishBlock[0],
      meta.finishBlock[1], meta.finishBlock[2], 0,
      static_cast<cu::Stream>(stream), ptrs, nullptr);
  if (r != cu::success) {
    error = "kernel \"" + meta.kernel + "\": " +
            d->describe("cuLaunchKernel (finish)", r);
    return Status::DriverError;
  }
  return Status::Ok;
}

/// One encoded tensor map, as the entry point's by-value parameter reads it.
struct alignas(kTensorMapAlignment) TensorMapSlot {
  unsigned char bytes[kTensorMapBytes];
};

/// Encodes the tensor map `recipe` describes over the launch's arguments.
static Status encodeTensorMap(const cu::Driver *d, const KernelMetadata &meta,
                              const TensorMapRecipe &recipe, int64_t m,
                              const ArgValue *args, TensorMapSlot &out,
                              std::string &error) {
  const Param &matrix = meta.params[recipe.param];
  if (!d->tensorMapEncodeTiled) {
    error = "kernel \"" + meta.kernel +
            "\": its tensor copies need cuTensorMapEncodeTiled, which this "
            "CUDA driver lacks (CUDA 12 or newer)";
    return Status::Unsupported;
  }
  const uint64_t elementBytes = getScalarTypeSize(recipe.type);
  int dataType = cu::tensorMapFloat32;
  if (recipe.type == ScalarType::BF16)
    dataType = cu::tensorMapBFloat16;
  else if (recipe.type == ScalarType::F16)
    dataType = cu::tensorMapFloat16;
  // A single row has no stride of its own (callers pass 0): any multiple
  // of 16 bytes that covers the row serves.
  uint64_t strideBytes =
      static_cast<uint64_t>(args[recipe.rowStrideParam - 1].i) * elementBytes;
  if (m <= 1)
    strideBytes = (recipe.columns * elementBytes + 15) / 16 * 16;
  // [M, N / inner, inner], innermost first.
  const uint64_t inner = recipe.box[0];
  unsigned long long dims[3] = {
      static_cast<unsigned long long>(inner),
      static_cast<unsigned long long>(recipe.columns / inner),
      static_cast<unsigned long long>(m > 0 ? m : 1)};
  unsigned long long strides[2] = {inner * elementBytes, strideBytes};
  unsigned box[3] = {recipe.box[0], recipe.box[1], recipe.box[2]};
  unsigned elementStrides[3] = {1, 1, 1};
  cu::Result r = d->tensorMapEncodeTiled(
      out.bytes, dataType, 3, reinterpret_cast<void *>(args[recipe.param - 1].u),
      dims, strides, box, elementStrides, /*interleave=*/0, /*swizzle=*/0,
      cu::tensorMapL2Promotion256B, /*oobFill=*/0);
  if (r != cu::success) {
    error = "kernel \"" + meta.kernel + "\": " +
            d->describe("cuTensorMapEncodeTiled", r) + " (the tensor map of \"" +
            matrix.name + "\")";
    return Status::DriverError;
  }
  return Status::Ok;
}

Status Kernel::launchMain(const Loaded *l, int64_t m, unsigned gridX,
                          const ArgValue *args, size_t numArgs, void *stream,
                          std::string &error) {
  const KernelMetadata &meta = *l->meta;

  constexpr size_t inlineParams = 32;
  ParamSlot inlineSlots[inlineParams];
  void *inlinePtrs[inlineParams];
  std::vector<ParamSlot> heapSlots;
  std::vector<void *> heapPtrs;
  ParamSlot *slots = inlineSlots;
  void **ptrs = inlinePtrs;
  const size_t numMaps = meta.tensorMaps.size();
  const size_t numParams = numArgs + 1 + numMaps;
  if (numParams > inlineParams) {
    heapSlots.resize(numParams);
    heapPtrs.resize(numParams);
    slots = heapSlots.data();
    ptrs = heapPtrs.data();
  }
  slots[0].i64 = m;
  ptrs[0] = &slots[0];
  for (size_t i = 0; i < numArgs; ++i) {
    const Param &p = meta.params[i + 1];
    ParamSlot &slot = slots[i + 1];
    slot.u64 = 0;
    if (p.isPointer())
      slot.u64 = args[i].u;
    else if (p.type == ScalarType::F32)
      slot.f32 = static_cast<float>(args[i].f);
    else if (p.type == ScalarType::I32)
      slot.i32 = static_cast<int32_t>(args[i].i);
    else
      slot.i64 = args[i].i;
    ptrs[i + 1] = &slot;
  }

  const cu::Driver *d = cu::getDriver(error);
  // Tensor maps follow the parameters the caller passes; the driver copies
  // them into the launch's parameter buffer.
  constexpr size_t inlineMaps = 4;
  TensorMapSlot inlineMapSlots[inlineMaps];
  std::vector<TensorMapSlot> heapMaps;
  TensorMapSlot *maps = inlineMapSlots;
  if (numMaps > inlineMaps) {
    heapMaps.resize(numMaps);
    maps = heapMaps.data();
  }
  for (size_t k = 0; k < numMaps; ++k) {
    if (Status s = encodeTensorMap(d, meta, meta.tensorMaps[k], m, args,
                                   maps[k], error);
        s != Status::Ok)
      return s;
    ptrs[numArgs + 1 + k] = maps[k].bytes;
  }
  cu::Result r;
  const unsigned dynamicShared = static_cast<unsigned>(meta.dynamicSharedBytes);
  if (meta.getClusterSize() > 1) {
    cu::LaunchAttribute attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.id = cu::launchAttrClusterDimension;
    attr.value.clusterDim.x = meta.cluster[0];
    attr.value.clusterDim.y = meta.cluster[1];
    attr.value.clusterDim.z = meta.cluster[2];
    cu::LaunchConfig config;
    std::memset(&config, 0, sizeof(config));
    config.gridDimX = gridX;
    config.gridDimY = 1;
    config.gridDimZ = 1;
    config.blockDimX = meta.block[0];
    config.blockDimY = meta.block[1];
    config.blockDimZ = meta.block[2];
    config.sharedMemBytes = dynamicShared;
    config.hStream = static_cast<cu::Stream>(stream);
    config.attrs = &attr;
    config.numAttrs = 1;
    r = d->launchKernelEx(&config, l->function, ptrs, nullptr);
    if (r != cu::success) {
      error = "kernel \"" + meta.kernel +
              "\": " + d->describe("cuLaunchKernelEx", r);
      return Status::DriverError;
    }
    return Status::Ok;
  }
  r = d->launchKernel(l->function, gridX, 1, 1, meta.block[0], meta.block[1],
                      meta.block[2], dynamicShared,
                      static_cast<cu::Stream>(stream), ptrs, nullptr);
  if (r != cu::success) {
    error =
        "kernel \"" + meta.kernel + "\": " + d->describe("cuLaunchKernel", r);
    return Status::DriverError;
  }
  return Status::Ok;
}
