/*===- quack-c/Compiler.h - C API of the quack compiler -----------*- C -*-===*\
|*                                                                            *|
|* Part of the quack project.                                                 *|
|*                                                                            *|
|*===----------------------------------------------------------------------===*|
|*                                                                            *|
|* The stable C interface of libquack_capi.so: compile a .qk description or  *|
|* an .mlir module to any stage (row-level IR ... PTX, cubin + metadata)      *|
|* from another compiler or language, without C++ or MLIR headers.           *|
|*                                                                            *|
|* Conventions:                                                               *|
|*  - Handles are opaque; each has a create (or is returned by quack_compile) *|
|*    and a destroy function. Destroying a null handle does nothing.         *|
|*  - Fallible functions return a quack_status. When `error` is not null,    *|
|*    a failure stores a new error object there (destroy it with             *|
|*    quack_error_destroy); success stores null.                              *|
|*  - Strings returned by accessors are NUL-terminated and owned by the      *|
|*    handle they come from; they live until it is destroyed.                 *|
|*  - Nothing is printed and nothing aborts the process on bad input:        *|
|*    diagnostics come back as records and through an optional callback.     *|
|*  - quack_compile may run on several threads at once, each call with its  *|
|*    own options handle (or sharing one that no thread modifies).           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef QUACK_C_COMPILER_H
#define QUACK_C_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define QUACK_CAPI_EXPORT __declspec(dllexport)
#else
#define QUACK_CAPI_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// The version of this interface; bumped on incompatible changes.
#define QUACK_API_VERSION 1

/// Result codes.
typedef enum quack_status {
  QUACK_OK = 0,
  /// A null handle or pointer, an unknown stage name, a malformed config
  /// string, an index out of range.
  QUACK_ERROR_INVALID_ARGUMENT = 1,
  /// The input did not compile; the error's diagnostics say why.
  QUACK_ERROR_COMPILE = 2
} quack_status;

/// How serious a diagnostic is.
typedef enum quack_severity {
  QUACK_SEVERITY_ERROR = 0,
  QUACK_SEVERITY_WARNING = 1,
  QUACK_SEVERITY_NOTE = 2,
  QUACK_SEVERITY_REMARK = 3
} quack_severity;

/// One diagnostic. `file` is the buffer name given to quack_compile, or ""
/// for a diagnostic about the whole input (a flag, a tool); `line` and
/// `column` are 1-based, 0 when unknown. The strings belong to the handle the
/// record came from (or, in a callback, live only during the call).
typedef struct quack_diagnostic {
  /// A quack_severity.
  int severity;
  const char *file;
  unsigned line;
  unsigned column;
  const char *message;
} quack_diagnostic;

/// Called once per diagnostic, on the thread running quack_compile, while it
/// runs.
typedef void (*quack_diagnostic_callback)(const quack_diagnostic *diagnostic,
                                          void *user_data);

/// What to compile and how; opaque.
typedef struct quack_compiler_options_st *quack_compiler_options_t;
/// What a compile produced; opaque.
typedef struct quack_artifacts_st *quack_artifacts_t;
/// Why a call failed; opaque.
typedef struct quack_error_st *quack_error_t;

/// Returns QUACK_API_VERSION of the library.
QUACK_CAPI_EXPORT int quack_api_version(void);

/// Returns the compiler's version string (part of every metadata hash).
QUACK_CAPI_EXPORT const char *quack_compiler_version(void);

/// Returns a static, human-readable name of \p status.
QUACK_CAPI_EXPORT const char *quack_status_name(int status);

/// Returns "error", "warning", "note" or "remark".
QUACK_CAPI_EXPORT const char *quack_severity_name(int severity);

/*===----------------------------------------------------------------------===*
 * Errors
 *===----------------------------------------------------------------------===*/

/// The quack_status of the failure.
QUACK_CAPI_EXPORT int quack_error_status(quack_error_t error);

/// A readable account of the failure: for a compile error, every error
/// diagnostic as `file:line:col: error: message`, one per line.
QUACK_CAPI_EXPORT const char *quack_error_message(quack_error_t error);

/// The diagnostics of a failed compile (0 for other failures).
QUACK_CAPI_EXPORT size_t quack_error_num_diagnostics(quack_error_t error);

/// Stores diagnostic \p index of a failed compile in \p out.
QUACK_CAPI_EXPORT int quack_error_diagnostic(quack_error_t error, size_t index,
                                             quack_diagnostic *out);

QUACK_CAPI_EXPORT void quack_error_destroy(quack_error_t error);

/*===----------------------------------------------------------------------===*
 * Options
 *===----------------------------------------------------------------------===*/

/// Default options: sm_90, stage "cubin", no bindings, every kernel, config
/// chosen by the compiler, 16-byte alignment, ptxas found on PATH.
QUACK_CAPI_EXPORT quack_compiler_options_t quack_compiler_options_create(void);

QUACK_CAPI_EXPORT void
quack_compiler_options_destroy(quack_compiler_options_t options);

/// The target: "sm_90", "sm_90a", "sm_100", ... (checked by quack_compile).
QUACK_CAPI_EXPORT int
quack_compiler_options_set_arch(quack_compiler_options_t options,
                                const char *arch, quack_error_t *error);

/// The stage to stop at: "quack", "config", "gpu", "nvvm", "llvm", "ptx" or
/// "cubin" (quackc --emit).
QUACK_CAPI_EXPORT int
quack_compiler_options_set_emit(quack_compiler_options_t options,
                                const char *stage, quack_error_t *error);

/// Binds a compile-time parameter of a .qk description (quackc -D
/// NAME=VALUE); binding a name again replaces its value.
QUACK_CAPI_EXPORT int
quack_compiler_options_add_binding(quack_compiler_options_t options,
                                   const char *name, const char *value,
                                   quack_error_t *error);

/// Compiles only the kernel named \p kernel ("" or null: every kernel).
QUACK_CAPI_EXPORT int
quack_compiler_options_set_kernel(quack_compiler_options_t options,
                                  const char *kernel, quack_error_t *error);

/// Forces config knobs, quackc --config syntax: "threads=<n>,rows=<n>",
/// any subset of the knobs `quackc --help` lists under --config.
QUACK_CAPI_EXPORT int
quack_compiler_options_set_config(quack_compiler_options_t options,
                                  const char *config, quack_error_t *error);

/// The ptxas to run for the cubin stage ("" or null: $QUACK_PTXAS, PATH,
/// then /usr/local/cuda/bin).
QUACK_CAPI_EXPORT int
quack_compiler_options_set_ptxas(quack_compiler_options_t options,
                                 const char *path, quack_error_t *error);

/// Registers \p callback (null: none) to receive every diagnostic of the
/// compiles that use these options, as it is emitted.
QUACK_CAPI_EXPORT int quack_compiler_options_set_diagnostic_callback(
    quack_compiler_options_t options, quack_diagnostic_callback callback,
    void *user_data);

/*===----------------------------------------------------------------------===*
 * Compiling
 *===----------------------------------------------------------------------===*/

/// Compiles \p source (\p length bytes, not necessarily NUL-terminated), a
/// .qk description unless \p name ends in ".mlir". \p name appears in
/// diagnostics; \p options may be null for the defaults. On success stores a
/// new handle in \p artifacts; on failure returns QUACK_ERROR_COMPILE (or
/// QUACK_ERROR_INVALID_ARGUMENT) and stores null there.
QUACK_CAPI_EXPORT int quack_compile(const char *source, size_t length,
                                    const char *name,
                                    quack_compiler_options_t options,
                                    quack_artifacts_t *artifacts,
                                    quack_error_t *error);

/*===----------------------------------------------------------------------===*
 * Artifacts
 *===----------------------------------------------------------------------===*/

/// The textual output of the stages quack ... ptx ("" for cubin); its
/// length is stored in \p length when not null.
QUACK_CAPI_EXPORT const char *quack_artifacts_text(quack_artifacts_t artifacts,
                                                   size_t *length);

/// The cubin of the cubin stage (null and size 0 otherwise).
QUACK_CAPI_EXPORT const void *quack_artifacts_cubin(quack_artifacts_t artifacts,
                                                    size_t *size);

/// ptxas' verbose output for the cubin stage ("" otherwise).
QUACK_CAPI_EXPORT const char *
quack_artifacts_ptxas_log(quack_artifacts_t artifacts);

/// The kernels that reached the gpu stage (0 for the quack and config
/// stages).
QUACK_CAPI_EXPORT size_t
quack_artifacts_num_kernels(quack_artifacts_t artifacts);

/// The entry-point name of kernel \p index (null when out of range).
QUACK_CAPI_EXPORT const char *
quack_artifacts_kernel_name(quack_artifacts_t artifacts, size_t index);

/// The launch metadata of kernel \p index (docs/abi.md, schema 1) as JSON,
/// naming \p cubin_file as its cubin (null: "<kernel>.cubin"). The string
/// lives until the next call for the same kernel or until \p artifacts is
/// destroyed. Null when out of range.
QUACK_CAPI_EXPORT const char *
quack_artifacts_kernel_metadata_json(quack_artifacts_t artifacts, size_t index,
                                     const char *cubin_file);

/// The warnings, notes and remarks of a successful compile.
QUACK_CAPI_EXPORT size_t
quack_artifacts_num_diagnostics(quack_artifacts_t artifacts);

/// Stores diagnostic \p index in \p out.
QUACK_CAPI_EXPORT int quack_artifacts_diagnostic(quack_artifacts_t artifacts,
                                                 size_t index,
                                                 quack_diagnostic *out);

QUACK_CAPI_EXPORT void quack_artifacts_destroy(quack_artifacts_t artifacts);

#ifdef __cplusplus
}
#endif

#endif /* QUACK_C_COMPILER_H */
