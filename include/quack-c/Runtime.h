/*===- quack-c/Runtime.h - C API of the quack runtime -------------*- C -*-===*\
|*                                                                            *|
|* Part of the quack project.                                                 *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The stable C interface of libquack_runtime.so: load a compiled kernel from *|
|* its metadata file (docs/abi.md, schema 1), inspect its metadata and launch *|
|* it on a CUDA stream. The CUDA driver is opened at run time; nothing here   *|
|* needs CUDA headers. Every function returns a quack_rt_status and, on      *|
|* failure, writes a NUL-terminated message into err_buf (when err_len > 0),  *|
|* truncated to fit. No function aborts the process.                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef QUACK_C_RUNTIME_H
#define QUACK_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define QUACK_RT_EXPORT __declspec(dllexport)
#else
#define QUACK_RT_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// The version of this interface; bumped on incompatible changes.
#define QUACK_RT_API_VERSION 1

/// Result codes.
typedef enum quack_rt_status {
  QUACK_RT_OK = 0,
  /// A bad argument: null handle, wrong argument count, negative M, null
  /// pointer, row stride smaller than N, index out of range.
  QUACK_RT_ERROR_INVALID_ARGUMENT = 1,
  /// The metadata file is not valid JSON or breaks schema 1.
  QUACK_RT_ERROR_INVALID_METADATA = 2,
  /// A file could not be read.
  QUACK_RT_ERROR_IO = 3,
  /// The CUDA driver library could not be opened or initialised.
  QUACK_RT_ERROR_DRIVER_UNAVAILABLE = 4,
  /// A CUDA driver call failed; the message names the call and the error.
  QUACK_RT_ERROR_DRIVER = 5,
  /// A pointer or row stride breaks the kernel's alignment.
  QUACK_RT_ERROR_MISALIGNED = 6,
  /// The request cannot be served (too much shared memory for the device,
  /// first load of a module inside a CUDA graph capture).
  QUACK_RT_ERROR_UNSUPPORTED = 7
} quack_rt_status;

/// A loaded kernel; opaque.
typedef struct quack_rt_kernel_st *quack_rt_kernel;

/// One launch argument. Pointers go in `u` (the device address), integer
/// scalars and row strides in `i`, floating-point scalars in `f` (converted
/// to the parameter's type at launch).
typedef union quack_rt_value {
  int64_t i;
  uint64_t u;
  double f;
} quack_rt_value;

/// Parameter kinds, in the order of docs/abi.md.
typedef enum quack_rt_param_kind {
  QUACK_RT_PARAM_ROWS = 0,
  QUACK_RT_PARAM_MATRIX = 1,
  QUACK_RT_PARAM_ROW_STRIDE = 2,
  QUACK_RT_PARAM_ROW = 3,
  QUACK_RT_PARAM_PER_ROW = 4,
  QUACK_RT_PARAM_SCALAR = 5,
  /// f32 scratch for kernels with sums over rows (quack_rt_kernel_workspace_size).
  QUACK_RT_PARAM_WORKSPACE = 6
} quack_rt_param_kind;

/// Describes one entry-point parameter. Strings are owned by the kernel and
/// live until it is destroyed.
typedef struct quack_rt_param_info {
  const char *name;
  /// A quack_rt_param_kind.
  int kind;
  /// "f32", "f16", "bf16", "i32" or "i64": the element type of a pointer, or
  /// the type of a value.
  const char *type;
  /// "input", "output", or "" for M and row strides.
  const char *role;
  /// For a row stride, the index of its matrix parameter; otherwise -1.
  int of;
} quack_rt_param_info;

/// Returns QUACK_RT_API_VERSION of the library.
QUACK_RT_EXPORT int quack_rt_api_version(void);

/// Returns a static, human-readable name of \p status.
QUACK_RT_EXPORT const char *quack_rt_status_name(int status);

/// Opens and initialises the CUDA driver (once per process). Returns
/// QUACK_RT_ERROR_DRIVER_UNAVAILABLE with a message when there is none.
QUACK_RT_EXPORT int quack_rt_driver_init(char *err_buf, size_t err_len);

/// Reads and validates the metadata file at \p meta_path and the cubin it
/// names (in the same directory). Does not touch the CUDA driver. On success
/// stores a new handle in \p out.
QUACK_RT_EXPORT int quack_rt_kernel_load(const char *meta_path,
                                         quack_rt_kernel *out, char *err_buf,
                                         size_t err_len);

/// Like quack_rt_kernel_load, from metadata text and an image in memory (a
/// cubin, a fatbin or PTX text of \p image_len bytes). Mainly for tests and
/// embedders that keep kernels inside their own binaries.
QUACK_RT_EXPORT int quack_rt_kernel_create(const char *meta_json,
                                           const void *image, size_t image_len,
                                           quack_rt_kernel *out, char *err_buf,
                                           size_t err_len);

/// Destroys a kernel, unloading its modules. Null is ignored.
QUACK_RT_EXPORT void quack_rt_kernel_destroy(quack_rt_kernel kernel);

/// Loads the kernel's module into the calling thread's current CUDA context
/// (or device 0's primary context, made current, when there is none). A
/// launch does this on first use; call it before capturing a CUDA graph.
QUACK_RT_EXPORT int quack_rt_kernel_prepare(quack_rt_kernel kernel,
                                            char *err_buf, size_t err_len);

/// Loads the kernel into the current context like quack_rt_kernel_prepare
/// and stores the cluster size of the variant that serves it. A kernel
/// whose cluster the device cannot co-schedule (or that is larger than
/// $QUACK_RT_MAX_CLUSTER_SIZE, when set) is served by the largest of its
/// metadata's "cluster_fallbacks" that can run; \p note (when not null)
/// then receives why, and an empty string when the kernel's own variant
/// serves.
QUACK_RT_EXPORT int quack_rt_kernel_cluster_in_use(quack_rt_kernel kernel,
                                                   unsigned *cluster_size,
                                                   char *note, size_t note_len,
                                                   char *err_buf,
                                                   size_t err_len);

/// Returns the number of cluster fallbacks read with the kernel.
QUACK_RT_EXPORT int quack_rt_kernel_num_cluster_fallbacks(
    quack_rt_kernel kernel);

/// Stores in \p bytes the size of the workspace argument a launch over \p m
/// rows needs, for the current context's device: 0 for kernels without a
/// workspace parameter. A workspace is 16-byte aligned, at least this size,
/// and used by one launch at a time; its contents need no initialisation.
QUACK_RT_EXPORT int quack_rt_kernel_workspace_size(quack_rt_kernel kernel,
                                                   int64_t m, uint64_t *bytes,
                                                   char *err_buf,
                                                   size_t err_len);

/// Launches the kernel over \p m rows on \p stream (a CUstream, null for the
/// legacy default stream) in the current CUDA context. \p args holds
/// \p nargs values, one per metadata parameter AFTER M, in metadata order
/// (see quack_rt_kernel_num_args). Arguments are checked first: count,
/// m >= 0, non-null pointers, row strides >= N, and alignment of every
/// pointer and of every row stride times the element size to the kernel's
/// "alignment". gridDim.x = ceil(m / rows_per_cta); m == 0 launches nothing
/// (and needs no driver). The launch is asynchronous: errors inside the
/// kernel surface at the next synchronisation.
QUACK_RT_EXPORT int quack_rt_kernel_launch(quack_rt_kernel kernel, int64_t m,
                                           const quack_rt_value *args,
                                           int nargs, void *stream,
                                           char *err_buf, size_t err_len);

/// Metadata accessors. Strings are owned by the kernel; a null kernel gives
/// "" or 0.
QUACK_RT_EXPORT const char *quack_rt_kernel_name(quack_rt_kernel kernel);
QUACK_RT_EXPORT const char *quack_rt_kernel_symbol(quack_rt_kernel kernel);
QUACK_RT_EXPORT const char *quack_rt_kernel_arch(quack_rt_kernel kernel);
QUACK_RT_EXPORT const char *quack_rt_kernel_hash(quack_rt_kernel kernel);
QUACK_RT_EXPORT int64_t quack_rt_kernel_n(quack_rt_kernel kernel);
QUACK_RT_EXPORT int64_t quack_rt_kernel_alignment(quack_rt_kernel kernel);
QUACK_RT_EXPORT int64_t quack_rt_kernel_rows_per_cta(quack_rt_kernel kernel);
/// Returns the number of values quack_rt_kernel_launch takes (parameters
/// after M).
QUACK_RT_EXPORT int quack_rt_kernel_num_args(quack_rt_kernel kernel);
/// Returns the number of entry-point parameters, M included.
QUACK_RT_EXPORT int quack_rt_kernel_num_params(quack_rt_kernel kernel);
/// Describes parameter \p index (0 is M).
QUACK_RT_EXPORT int quack_rt_kernel_param(quack_rt_kernel kernel, int index,
                                          quack_rt_param_info *info);
/// Returns the value of binding \p key ("N", "T", ...) or null if absent.
QUACK_RT_EXPORT const char *quack_rt_kernel_binding(quack_rt_kernel kernel,
                                                    const char *key);
/// Writes the block and cluster dimensions and the shared memory sizes.
QUACK_RT_EXPORT void quack_rt_kernel_launch_shape(quack_rt_kernel kernel,
                                                  unsigned block[3],
                                                  unsigned cluster[3],
                                                  int64_t *static_smem,
                                                  int64_t *dynamic_smem);

#ifdef __cplusplus
}
#endif

#endif /* QUACK_C_RUNTIME_H */
