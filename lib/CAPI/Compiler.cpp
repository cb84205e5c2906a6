//===- Compiler.cpp - C API of the quack compiler -------------------------===//
//
// Part of the quack project.
//
// Thin wrappers over quack::compileSource: the handles own C++ objects and
// the strings handed out through the C interface.
//
//===----------------------------------------------------------------------===//

#include "quack-c/Compiler.h"
#include "quack/Compiler/Compiler.h"

#include <string>
#include <vector>

namespace {

/// A diagnostic whose strings the handle owns.
struct DiagnosticRecord {
  ::quack::Diagnostic diag;

  quack_diagnostic view() const {
    return {static_cast<int>(diag.severity), diag.file.c_str(), diag.line,
            diag.column, diag.message.c_str()};
  }
};

} // namespace

struct quack_compiler_options_st {
  ::quack::CompileOptions options;
  quack_diagnostic_callback callback = nullptr;
  void *userData = nullptr;
};

struct quack_artifacts_st {
  ::quack::Artifacts artifacts;
  std::vector<DiagnosticRecord> diagnostics;
  /// One metadata text per kernel, made on request.
  std::vector<std::string> metadata;
};

struct quack_error_st {
  int status;
  std::string message;
  std::vector<DiagnosticRecord> diagnostics;
};

static int fail(quack_error_t *error, int status, std::string message) {
  if (error)
    *error = new quack_error_st{status, std::move(message), {}};
  return status;
}

static int succeed(quack_error_t *error) {
  if (error)
    *error = nullptr;
  return QUACK_OK;
}

extern "C" {

int quack_api_version(void) { return QUACK_API_VERSION; }

const char *quack_compiler_version(void) { return ::quack::kCompilerVersion; }

const char *quack_status_name(int status) {
  switch (status) {
  case QUACK_OK:
    return "QUACK_OK";
  case QUACK_ERROR_INVALID_ARGUMENT:
    return "QUACK_ERROR_INVALID_ARGUMENT";
  case QUACK_ERROR_COMPILE:
    return "QUACK_ERROR_COMPILE";
  default:
    return "QUACK_ERROR_UNKNOWN";
  }
}

const char *quack_severity_name(int severity) {
  if (severity < QUACK_SEVERITY_ERROR || severity > QUACK_SEVERITY_REMARK)
    return "unknown";
  // The C enumerators follow ::quack::Severity.
  return ::quack::severityName(static_cast<::quack::Severity>(severity)).data();
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

int quack_error_status(quack_error_t error) {
  return error ? error->status : QUACK_OK;
}

const char *quack_error_message(quack_error_t error) {
  return error ? error->message.c_str() : "";
}

size_t quack_error_num_diagnostics(quack_error_t error) {
  return error ? error->diagnostics.size() : 0;
}

int quack_error_diagnostic(quack_error_t error, size_t index,
                           quack_diagnostic *out) {
  if (!error || !out || index >= error->diagnostics.size())
    return QUACK_ERROR_INVALID_ARGUMENT;
  *out = error->diagnostics[index].view();
  return QUACK_OK;
}

void quack_error_destroy(quack_error_t error) { delete error; }

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

quack_compiler_options_t quack_compiler_options_create(void) {
  return new quack_compiler_options_st();
}

void quack_compiler_options_destroy(quack_compiler_options_t options) {
  delete options;
}

int quack_compiler_options_set_arch(quack_compiler_options_t options,
                                    const char *arch, quack_error_t *error) {
  if (!options || !arch || !*arch)
    return fail(error, QUACK_ERROR_INVALID_ARGUMENT,
                "set_arch: needs options and a non-empty architecture");
  options->options.arch = arch;
  return succeed(error);
}

int quack_compiler_options_set_emit(quack_compiler_options_t options,
                                    const char *stage, quack_error_t *error) {
  if (!options || !stage)
    return fail(error, QUACK_ERROR_INVALID_ARGUMENT,
                "set_emit: needs options and a stage name");
  std::optional<::quack::Stage> parsed = ::quack::parseStage(stage);
  if (!parsed) {
    std::string known;
    for (llvm::StringRef name : ::quack::stageNames())
      known += (known.empty() ? "" : ", ") + name.str();
    return fail(error, QUACK_ERROR_INVALID_ARGUMENT,
                "unknown stage '" + std::string(stage) + "'; known: " + known);
  }
  options->options.emit = *parsed;
  return succeed(error);
}

int quack_compiler_options_add_binding(quack_compiler_options_t options,
                                       const char *name, const char *value,
                                       quack_error_t *error) {
  if (!options || !name || !*name || !value || !*value)
    return fail(error, QUACK_ERROR_INVALID_ARGUMENT,
                "add_binding: needs options, a name and a value");
  options->options.bindings[name] = value;
  return succeed(error);
}

int quack_compiler_options_set_kernel(quack_compiler_options_t options,
                                      const char *kernel,
                                      quack_error_t *error) {
  if (!options)
    return fail(error, QUACK_ERROR_INVALID_ARGUMENT, "set_kernel: no options");
  options->options.kernel = kernel ? kernel : "";
  return succeed(error);
}

int quack_compiler_options_set_config(quack_compiler_options_t options,
                                      const char *config,
                                      quack_error_t *error) {
  if (!options || !config)
    return fail(error, QUACK_ERROR_INVALID_ARGUMENT,
                "set_config: needs options and a config string");
  // Parse into a copy so that a bad string leaves the options unchanged.
  ::quack::CompileOptions updated = options->options;
  std::string message = ::quack::parseConfigOverrides(config, updated);
  if (!message.empty())
    return fail(error, QUACK_ERROR_INVALID_ARGUMENT, message);
  options->options = std::move(updated);
  return succeed(error);
}

int quack_compiler_options_set_ptxas(quack_compiler_options_t options,
                                     const char *path, quack_error_t *error) {
  if (!options)
    return fail(error, QUACK_ERROR_INVALID_ARGUMENT, "set_ptxas: no options");
  options->options.ptxas = path ? path : "";
  return succeed(error);
}

int quack_compiler_options_set_diagnostic_callback(
    quack_compiler_options_t options, quack_diagnostic_callback callback,
    void *user_data) {
  if (!options)
    return QUACK_ERROR_INVALID_ARGUMENT;
  options->callback = callback;
  options->userData = user_data;
  return QUACK_OK;
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

int quack_compile(const char *source, size_t length, const char *name,
                  quack_compiler_options_t options,
                  quack_artifacts_t *artifacts, quack_error_t *error) {
  if (artifacts)
    *artifacts = nullptr;
  if ((!source && length) || !name || !artifacts)
    return fail(error, QUACK_ERROR_INVALID_ARGUMENT,
                "quack_compile: needs a source, a name and an artifacts "
                "pointer");
  static const quack_compiler_options_st defaults;
  const quack_compiler_options_st &opts = options ? *options : defaults;

  std::vector<DiagnosticRecord> diagnostics;
  auto collect = [&](const ::quack::Diagnostic &diag) {
    diagnostics.push_back({diag});
    if (opts.callback) {
      quack_diagnostic view = diagnostics.back().view();
      opts.callback(&view, opts.userData);
    }
  };
  mlir::FailureOr<::quack::Artifacts> result =
      ::quack::compileSource(llvm::StringRef(source ? source : "", length),
                             name, opts.options, collect);
  if (mlir::failed(result)) {
    std::string message;
    for (const DiagnosticRecord &record : diagnostics)
      if (record.diag.severity == ::quack::Severity::Error)
        message += (message.empty() ? "" : "\n") + record.diag.str();
    if (message.empty())
      message = "compilation failed";
    if (error)
      *error = new quack_error_st{QUACK_ERROR_COMPILE, std::move(message),
                                  std::move(diagnostics)};
    return QUACK_ERROR_COMPILE;
  }
  auto *handle = new quack_artifacts_st();
  handle->artifacts = std::move(*result);
  handle->diagnostics = std::move(diagnostics);
  handle->metadata.resize(handle->artifacts.kernels.size());
  *artifacts = handle;
  return succeed(error);
}

//===----------------------------------------------------------------------===//
// Artifacts
//===----------------------------------------------------------------------===//

const char *quack_artifacts_text(quack_artifacts_t artifacts, size_t *length) {
  if (length)
    *length = artifacts ? artifacts->artifacts.text.size() : 0;
  return artifacts ? artifacts->artifacts.text.c_str() : "";
}

const void *quack_artifacts_cubin(quack_artifacts_t artifacts, size_t *size) {
  bool have = artifacts && !artifacts->artifacts.cubin.empty();
  if (size)
    *size = have ? artifacts->artifacts.cubin.size() : 0;
  return have ? artifacts->artifacts.cubin.data() : nullptr;
}

const char *quack_artifacts_ptxas_log(quack_artifacts_t artifacts) {
  return artifacts ? artifacts->artifacts.ptxasLog.c_str() : "";
}

size_t quack_artifacts_num_kernels(quack_artifacts_t artifacts) {
  return artifacts ? artifacts->artifacts.kernels.size() : 0;
}

const char *quack_artifacts_kernel_name(quack_artifacts_t artifacts,
                                        size_t index) {
  if (!artifacts || index >= artifacts->artifacts.kernels.size())
    return nullptr;
  return artifacts->artifacts.kernels[index].kernel.c_str();
}

const char *quack_artifacts_kernel_metadata_json(quack_artifacts_t artifacts,
                                                 size_t index,
                                                 const char *cubin_file) {
  if (!artifacts || index >= artifacts->artifacts.kernels.size())
    return nullptr;
  const ::quack::KernelMetadata &md = artifacts->artifacts.kernels[index];
  std::string cubin = cubin_file ? cubin_file : md.kernel + ".cubin";
  artifacts->metadata[index] = md.toJSON(cubin);
  return artifacts->metadata[index].c_str();
}

size_t quack_artifacts_num_diagnostics(quack_artifacts_t artifacts) {
  return artifacts ? artifacts->diagnostics.size() : 0;
}

int quack_artifacts_diagnostic(quack_artifacts_t artifacts, size_t index,
                               quack_diagnostic *out) {
  if (!artifacts || !out || index >= artifacts->diagnostics.size())
    return QUACK_ERROR_INVALID_ARGUMENT;
  *out = artifacts->diagnostics[index].view();
  return QUACK_OK;
}

void quack_artifacts_destroy(quack_artifacts_t artifacts) { delete artifacts; }

} // extern "C"
