//===- CAPI.cpp - C API of the quack runtime ------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack-c/Runtime.h"

#include "CudaDriver.h"
#include "quack/Runtime/Kernel.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>

using namespace quack::runtime;

static_assert(sizeof(quack_rt_value) == sizeof(ArgValue),
              "quack_rt_value mirrors ArgValue");
static_assert(static_cast<int>(ParamKind::Rows) == QUACK_RT_PARAM_ROWS &&
                  static_cast<int>(ParamKind::Scalar) == QUACK_RT_PARAM_SCALAR,
              "param kinds mirror the C enum");
static_assert(static_cast<int>(Status::Unsupported) ==
                  QUACK_RT_ERROR_UNSUPPORTED,
              "statuses mirror the C enum");

/// The opaque handle: a kernel plus the strings the accessors hand out.
struct quack_rt_kernel_st {
  std::unique_ptr<Kernel> kernel;
};

static int report(Status status, const std::string &message, char *errBuf,
                  size_t errLen) {
  if (status != Status::Ok && errBuf && errLen > 0) {
    size_t n = std::min(message.size(), errLen - 1);
    std::memcpy(errBuf, message.data(), n);
    errBuf[n] = '\0';
  }
  return static_cast<int>(status);
}

/// Runs \p fn, turning any C++ exception (bad_alloc, mostly) into an error.
template <typename Fn> static int guarded(char *errBuf, size_t errLen, Fn fn) {
  std::string message;
  Status status;
  try {
    status = fn(message);
  } catch (const std::bad_alloc &) {
    status = Status::InvalidArgument;
    message = "out of host memory";
  } catch (const std::exception &e) {
    status = Status::InvalidArgument;
    message = std::string("internal error: ") + e.what();
  } catch (...) {
    status = Status::InvalidArgument;
    message = "internal error";
  }
  return report(status, message, errBuf, errLen);
}

extern "C" {

int quack_rt_api_version(void) { return QUACK_RT_API_VERSION; }

const char *quack_rt_status_name(int status) {
  switch (status) {
  case QUACK_RT_OK:
    return "QUACK_RT_OK";
  case QUACK_RT_ERROR_INVALID_ARGUMENT:
    return "QUACK_RT_ERROR_INVALID_ARGUMENT";
  case QUACK_RT_ERROR_INVALID_METADATA:
    return "QUACK_RT_ERROR_INVALID_METADATA";
  case QUACK_RT_ERROR_IO:
    return "QUACK_RT_ERROR_IO";
  case QUACK_RT_ERROR_DRIVER_UNAVAILABLE:
    return "QUACK_RT_ERROR_DRIVER_UNAVAILABLE";
  case QUACK_RT_ERROR_DRIVER:
    return "QUACK_RT_ERROR_DRIVER";
  case QUACK_RT_ERROR_MISALIGNED:
    return "QUACK_RT_ERROR_MISALIGNED";
  case QUACK_RT_ERROR_UNSUPPORTED:
    return "QUACK_RT_ERROR_UNSUPPORTED";
  default:
    return "QUACK_RT_ERROR_UNKNOWN";
  }
}

int quack_rt_driver_init(char *errBuf, size_t errLen) {
  return guarded(errBuf, errLen, [](std::string &message) {
    return cu::getDriver(message) ? Status::Ok : Status::DriverUnavailable;
  });
}

int quack_rt_kernel_load(const char *metaPath, quack_rt_kernel *out,
                         char *errBuf, size_t errLen) {
  return guarded(errBuf, errLen, [&](std::string &message) {
    if (!metaPath || !out) {
      message = "quack_rt_kernel_load: null path or output handle";
      return Status::InvalidArgument;
    }
    *out = nullptr;
    auto handle = std::make_unique<quack_rt_kernel_st>();
    Status s = Kernel::load(metaPath, handle->kernel, message);
    if (s == Status::Ok)
      *out = handle.release();
    return s;
  });
}

int quack_rt_kernel_create(const char *metaJson, const void *image,
                           size_t imageLen, quack_rt_kernel *out, char *errBuf,
                           size_t errLen) {
  return guarded(errBuf, errLen, [&](std::string &message) {
    if (!metaJson || !out || (!image && imageLen)) {
      message = "quack_rt_kernel_create: null metadata, image or output";
      return Status::InvalidArgument;
    }
    *out = nullptr;
    const char *bytes = static_cast<const char *>(image);
    std::vector<char> copy(bytes, bytes + imageLen);
    auto handle = std::make_unique<quack_rt_kernel_st>();
    Status s =
        Kernel::create(metaJson, std::move(copy), handle->kernel, message);
    if (s == Status::Ok)
      *out = handle.release();
    return s;
  });
}

void quack_rt_kernel_destroy(quack_rt_kernel kernel) { delete kernel; }

int quack_rt_kernel_prepare(quack_rt_kernel kernel, char *errBuf,
                            size_t errLen) {
  return guarded(errBuf, errLen, [&](std::string &message) {
    if (!kernel) {
      message = "quack_rt_kernel_prepare: null kernel";
      return Status::InvalidArgument;
    }
    return kernel->kernel->prepare(message);
  });
}

int quack_rt_kernel_cluster_in_use(quack_rt_kernel kernel,
                                   unsigned *clusterSize, char *note,
                                   size_t noteLen, char *errBuf,
                                   size_t errLen) {
  return guarded(errBuf, errLen, [&](std::string &message) {
    if (!kernel || !clusterSize) {
      message = "quack_rt_kernel_cluster_in_use: null kernel or result";
      return Status::InvalidArgument;
    }
    std::string text;
    Status s = kernel->kernel->getVariantInUse(*clusterSize, text, message);
    if (s == Status::Ok && note && noteLen > 0) {
      size_t n = std::min(text.size(), noteLen - 1);
      std::memcpy(note, text.data(), n);
      note[n] = '\0';
    }
    return s;
  });
}

int quack_rt_kernel_num_cluster_fallbacks(quack_rt_kernel kernel) {
  return kernel ? static_cast<int>(kernel->kernel->getNumFallbacks()) : 0;
}

int quack_rt_kernel_workspace_size(quack_rt_kernel kernel, int64_t m,
                                   uint64_t *bytes, char *errBuf,
                                   size_t errLen) {
  return guarded(errBuf, errLen, [&](std::string &message) {
    if (!kernel || !bytes) {
      message = "quack_rt_kernel_workspace_size: null kernel or result";
      return Status::InvalidArgument;
    }
    return kernel->kernel->getWorkspaceBytes(m, *bytes, message);
  });
}

int quack_rt_kernel_launch(quack_rt_kernel kernel, int64_t m,
                           const quack_rt_value *args, int nargs, void *stream,
                           char *errBuf, size_t errLen) {
  return guarded(errBuf, errLen, [&](std::string &message) {
    if (!kernel || nargs < 0) {
      message = "quack_rt_kernel_launch: null kernel or negative nargs";
      return Status::InvalidArgument;
    }
    return kernel->kernel->launch(m, reinterpret_cast<const ArgValue *>(args),
                                  static_cast<size_t>(nargs), stream, message);
  });
}

const char *quack_rt_kernel_name(quack_rt_kernel kernel) {
  return kernel ? kernel->kernel->getMetadata().kernel.c_str() : "";
}

const char *quack_rt_kernel_symbol(quack_rt_kernel kernel) {
  return kernel ? kernel->kernel->getMetadata().symbol.c_str() : "";
}

const char *quack_rt_kernel_arch(quack_rt_kernel kernel) {
  return kernel ? kernel->kernel->getMetadata().arch.c_str() : "";
}

const char *quack_rt_kernel_hash(quack_rt_kernel kernel) {
  return kernel ? kernel->kernel->getMetadata().hash.c_str() : "";
}

int64_t quack_rt_kernel_n(quack_rt_kernel kernel) {
  return kernel ? kernel->kernel->getMetadata().n : 0;
}

int64_t quack_rt_kernel_alignment(quack_rt_kernel kernel) {
  return kernel ? kernel->kernel->getMetadata().alignment : 0;
}

int64_t quack_rt_kernel_rows_per_cta(quack_rt_kernel kernel) {
  return kernel ? kernel->kernel->getMetadata().rowsPerCta : 0;
}

int quack_rt_kernel_num_args(quack_rt_kernel kernel) {
  return kernel ? static_cast<int>(kernel->kernel->getMetadata().getNumArgs())
                : 0;
}

int quack_rt_kernel_num_params(quack_rt_kernel kernel) {
  return kernel ? static_cast<int>(kernel->kernel->getMetadata().params.size())
                : 0;
}

int quack_rt_kernel_param(quack_rt_kernel kernel, int index,
                          quack_rt_param_info *info) {
  if (!kernel || !info || index < 0 ||
      static_cast<size_t>(index) >= kernel->kernel->getMetadata().params.size())
    return QUACK_RT_ERROR_INVALID_ARGUMENT;
  const Param &p = kernel->kernel->getMetadata().params[index];
  info->name = p.name.c_str();
  info->kind = static_cast<int>(p.kind);
  info->type = stringifyScalarType(p.type);
  info->role = p.role.c_str();
  info->of = p.of;
  return QUACK_RT_OK;
}

const char *quack_rt_kernel_binding(quack_rt_kernel kernel, const char *key) {
  if (!kernel || !key)
    return nullptr;
  for (const auto &b : kernel->kernel->getMetadata().bindings)
    if (b.first == key)
      return b.second.c_str();
  return nullptr;
}

void quack_rt_kernel_launch_shape(quack_rt_kernel kernel, unsigned block[3],
                                  unsigned cluster[3], int64_t *staticSmem,
                                  int64_t *dynamicSmem) {
  if (!kernel)
    return;
  const KernelMetadata &meta = kernel->kernel->getMetadata();
  for (int i = 0; i < 3; ++i) {
    if (block)
      block[i] = meta.block[i];
    if (cluster)
      cluster[i] = meta.cluster[i];
  }
  if (staticSmem)
    *staticSmem = meta.staticSharedBytes;
  if (dynamicSmem)
    *dynamicSmem = meta.dynamicSharedBytes;
}

} // extern "C"
