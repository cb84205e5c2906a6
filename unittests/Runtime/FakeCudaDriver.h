//===- FakeCudaDriver.h - A CUDA driver stand-in that records calls -------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// The control interface of libquack-fake-cuda.so, a shared library with the
// driver entry points the runtime resolves (cuInit, cuLaunchKernel, ...). It
// runs nothing: every call is counted, launches are recorded (grid, block,
// shared bytes, stream, cluster and the first 8 bytes of each parameter), and
// any entry point can be made to fail. The runtime opens it through
// QUACK_RT_CUDA_LIBRARY; a test opens it again with dlopen and reaches these
// functions through dlsym, so that both see one state.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_UNITTESTS_RUNTIME_FAKECUDADRIVER_H
#define QUACK_UNITTESTS_RUNTIME_FAKECUDADRIVER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { FAKE_CUDA_MAX_PARAMS = 32 };

typedef struct fake_cuda_launch {
  /// 1 for cuLaunchKernelEx, 0 for cuLaunchKernel.
  int ex;
  void *function;
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
  void *stream;
  /// The cluster dimension attribute of cuLaunchKernelEx (0s without one).
  unsigned cluster[3];
  /// The first 8 bytes of parameters 0 .. n - 1, n as
  /// fake_cuda_set_symbol_params() set it for the kernel's symbol, else as
  /// fake_cuda_set_num_params().
  uint64_t params[FAKE_CUDA_MAX_PARAMS];
  /// The kernel's symbol (cuModuleGetFunction's name), cut to 63 bytes.
  char symbol[64];
} fake_cuda_launch;

/// The arguments of one cuTensorMapEncodeTiled call. The map it writes
/// holds `marker` in its first 8 bytes, so that a launch's parameter can be
/// matched to the call that encoded it.
typedef struct fake_cuda_tensor_map {
  int data_type;
  unsigned rank;
  uint64_t address;
  uint64_t dims[5];
  uint64_t strides[4];
  unsigned box[5];
  unsigned element_strides[5];
  int l2_promotion;
  uint64_t marker;
} fake_cuda_tensor_map;

/// Forgets every count, launch, failure and setting.
typedef void (*fake_cuda_reset_fn)(void);
/// Makes entry point `name` (e.g. "cuLaunchKernel") return `code` from now
/// on; code 0 makes it succeed again.
typedef void (*fake_cuda_fail_fn)(const char *name, int code);
/// How many times entry point `name` was called.
typedef int (*fake_cuda_count_fn)(const char *name);
/// Parameters copied from each launch (at most FAKE_CUDA_MAX_PARAMS). The
/// driver interface carries no count: no more than the fewest any launch
/// of the test passes.
typedef void (*fake_cuda_set_num_params_fn)(int n);
/// Parameters copied from launches of kernel `symbol` (a count per symbol
/// where a test launches kernels of several parameter lists, e.g. a kernel
/// and its finishing kernel); -1 goes back to fake_cuda_set_num_params().
typedef void (*fake_cuda_set_symbol_params_fn)(const char *symbol, int n);
/// Whether cuStreamIsCapturing reports an active capture.
typedef void (*fake_cuda_set_capturing_fn)(int capturing);
/// What cuOccupancyMaxActiveClusters reports for a cluster of at most
/// `max_size` CTAs (0 above it; the default size is 16).
typedef void (*fake_cuda_set_max_clusters_fn)(int clusters, int max_size);
/// The recorded launches, oldest first (a pointer stays valid until the
/// next launch or reset; so does a tensor map's).
typedef int (*fake_cuda_num_launches_fn)(void);
typedef const fake_cuda_launch *(*fake_cuda_get_launch_fn)(int index);
/// Makes context `id` (1-7) current, or none (0). Device 0's primary
/// context is context 1.
typedef void (*fake_cuda_set_context_fn)(int id);
/// The recorded tensor map encodings, oldest first.
typedef int (*fake_cuda_num_tensor_maps_fn)(void);
typedef const fake_cuda_tensor_map *(*fake_cuda_get_tensor_map_fn)(int index);
/// The last value cuFuncSetAttribute set for `attribute` (-1: never set).
typedef int (*fake_cuda_func_attribute_fn)(int attribute);

#ifdef __cplusplus
}
#endif

#endif // QUACK_UNITTESTS_RUNTIME_FAKECUDADRIVER_H
