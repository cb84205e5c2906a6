//===- CompileSourceTest.cpp - the embedding facade and the C API ---------===//
//
// Part of the quack project.
//
// compileSource and quack_compile: structured diagnostics, and concurrent
// compiles from several threads giving identical artifacts.
//
//===----------------------------------------------------------------------===//

#include "quack-c/Compiler.h"
#include "quack/Compiler/Compiler.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

/// A small RMSNorm description; the tests own it so that changes to the
/// kernel catalogue do not move them.
constexpr const char *kRmsNorm =
    R"(kernel rmsnorm_fwd<T, N>(x: T[M, N], w: T[N], eps: f32)
    -> (y: T[M, N], rstd: f32[M]) {
  r = rsqrt(mean(x * x) + eps)
  y = x * r * w
  rstd = r
}
)";

quack::CompileOptions ptxOptions() {
  quack::CompileOptions options;
  options.emit = quack::Stage::PTX;
  options.bindings = {{"T", "bf16"}, {"N", "4096"}};
  return options;
}

TEST(CompileSource, CompilesToPTX) {
  std::vector<quack::Diagnostic> diagnostics;
  auto result =
      quack::compileSource(kRmsNorm, "rms.qk", ptxOptions(), &diagnostics);
  ASSERT_TRUE(mlir::succeeded(result));
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_NE(result->text.find(".entry rmsnorm_fwd"), std::string::npos);
  ASSERT_EQ(result->kernels.size(), 1u);
  EXPECT_EQ(result->kernels[0].kernel, "rmsnorm_fwd");
  EXPECT_EQ(result->kernels[0].rowLength, 4096);
}

TEST(CompileSource, ReportsStructuredDiagnostics) {
  quack::CompileOptions options = ptxOptions();
  options.bindings["T"] = "f99";
  std::vector<quack::Diagnostic> diagnostics;
  auto result = quack::compileSource(kRmsNorm, "rms.qk", options, &diagnostics);
  EXPECT_TRUE(mlir::failed(result));
  ASSERT_FALSE(diagnostics.empty());
  const quack::Diagnostic &d = diagnostics.front();
  EXPECT_EQ(d.severity, quack::Severity::Error);
  EXPECT_EQ(d.file, "rms.qk");
  EXPECT_EQ(d.line, 1u);
  EXPECT_GT(d.column, 0u);
  EXPECT_NE(d.message.find("f99"), std::string::npos);
  EXPECT_EQ(d.str().rfind("rms.qk:1:", 0), 0u);
}

TEST(CompileSource, UnknownArchHasNoPosition) {
  quack::CompileOptions options = ptxOptions();
  options.arch = "gfx90a";
  std::vector<quack::Diagnostic> diagnostics;
  EXPECT_TRUE(mlir::failed(
      quack::compileSource(kRmsNorm, "rms.qk", options, &diagnostics)));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].file, "");
  EXPECT_EQ(diagnostics[0].line, 0u);
}

TEST(CompileSource, ParsesConfigOverrides) {
  quack::CompileOptions options;
  EXPECT_EQ(quack::parseConfigOverrides("threads=64,rows=2", options), "");
  EXPECT_EQ(options.threadsPerRow, 64);
  EXPECT_EQ(options.rowsPerCta, 2);
  EXPECT_NE(quack::parseConfigOverrides("warps=2", options), "");
  EXPECT_NE(quack::parseConfigOverrides("threads=-1", options), "");
}

/// Four threads compile the same description, each in its own context; the
/// PTX and the metadata must match a single-threaded compile exactly.
TEST(CompileSource, ConcurrentCompilesAgree) {
  auto reference = quack::compileSource(kRmsNorm, "rms.qk", ptxOptions());
  ASSERT_TRUE(mlir::succeeded(reference));
  std::string referenceJson = reference->kernels.at(0).toJSON("k.cubin");

  constexpr int kThreads = 4;
  std::vector<std::string> texts(kThreads), jsons(kThreads);
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      auto result = quack::compileSource(kRmsNorm, "rms.qk", ptxOptions());
      if (mlir::failed(result) || result->kernels.size() != 1)
        return;
      ok[i] = 1;
      texts[i] = result->text;
      jsons[i] = result->kernels[0].toJSON("k.cubin");
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(ok[i]) << "thread " << i;
    EXPECT_EQ(texts[i], reference->text) << "thread " << i;
    EXPECT_EQ(jsons[i], referenceJson) << "thread " << i;
  }
}

//===----------------------------------------------------------------------===//
// The C API
//===----------------------------------------------------------------------===//

quack_compiler_options_t cOptions(const char *type) {
  quack_compiler_options_t options = quack_compiler_options_create();
  EXPECT_EQ(quack_compiler_options_set_emit(options, "ptx", nullptr), QUACK_OK);
  EXPECT_EQ(quack_compiler_options_add_binding(options, "T", type, nullptr),
            QUACK_OK);
  EXPECT_EQ(quack_compiler_options_add_binding(options, "N", "4096", nullptr),
            QUACK_OK);
  return options;
}

TEST(CAPI, CompilesAndReportsErrors) {
  EXPECT_EQ(quack_api_version(), QUACK_API_VERSION);
  quack_compiler_options_t options = cOptions("bf16");
  quack_artifacts_t artifacts = nullptr;
  quack_error_t error = nullptr;
  ASSERT_EQ(quack_compile(kRmsNorm, strlen(kRmsNorm), "rms.qk", options,
                          &artifacts, &error),
            QUACK_OK)
      << quack_error_message(error);
  EXPECT_EQ(error, nullptr);
  size_t length = 0;
  EXPECT_NE(std::string(quack_artifacts_text(artifacts, &length))
                .find(".entry rmsnorm_fwd"),
            std::string::npos);
  EXPECT_GT(length, 0u);
  ASSERT_EQ(quack_artifacts_num_kernels(artifacts), 1u);
  EXPECT_STREQ(quack_artifacts_kernel_name(artifacts, 0), "rmsnorm_fwd");
  EXPECT_EQ(quack_artifacts_kernel_name(artifacts, 1), nullptr);
  std::string json = quack_artifacts_kernel_metadata_json(artifacts, 0, "x");
  EXPECT_NE(json.find("\"schema\": 1"), std::string::npos);
  EXPECT_NE(json.find("\"cubin\": \"x\""), std::string::npos);
  size_t cubinSize = 1;
  EXPECT_EQ(quack_artifacts_cubin(artifacts, &cubinSize), nullptr);
  EXPECT_EQ(cubinSize, 0u);
  quack_artifacts_destroy(artifacts);
  quack_compiler_options_destroy(options);

  // A bad binding: an error with a located record, seen by the callback.
  options = cOptions("f99");
  int calls = 0;
  quack_compiler_options_set_diagnostic_callback(
      options,
      [](const quack_diagnostic *d, void *user) {
        ++*static_cast<int *>(user);
        EXPECT_EQ(d->severity, QUACK_SEVERITY_ERROR);
      },
      &calls);
  EXPECT_EQ(quack_compile(kRmsNorm, strlen(kRmsNorm), "rms.qk", options,
                          &artifacts, &error),
            QUACK_ERROR_COMPILE);
  EXPECT_EQ(artifacts, nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(quack_error_status(error), QUACK_ERROR_COMPILE);
  ASSERT_GE(quack_error_num_diagnostics(error), 1u);
  EXPECT_EQ(calls, static_cast<int>(quack_error_num_diagnostics(error)));
  quack_diagnostic d;
  ASSERT_EQ(quack_error_diagnostic(error, 0, &d), QUACK_OK);
  EXPECT_STREQ(d.file, "rms.qk");
  EXPECT_EQ(d.line, 1u);
  EXPECT_EQ(std::string(quack_error_message(error)).rfind("rms.qk:1:", 0), 0u);
  quack_error_destroy(error);
  quack_compiler_options_destroy(options);
}

TEST(CAPI, RejectsBadArguments) {
  quack_error_t error = nullptr;
  quack_compiler_options_t options = quack_compiler_options_create();
  EXPECT_EQ(quack_compiler_options_set_emit(options, "sass", &error),
            QUACK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(quack_error_message(error)).find("known: quack"),
            std::string::npos);
  quack_error_destroy(error);
  EXPECT_EQ(quack_compiler_options_set_config(options, "rows=0", &error),
            QUACK_ERROR_INVALID_ARGUMENT);
  quack_error_destroy(error);
  EXPECT_EQ(quack_compiler_options_set_arch(nullptr, "sm_90", nullptr),
            QUACK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(quack_compile("", 0, "x.qk", options, nullptr, &error),
            QUACK_ERROR_INVALID_ARGUMENT);
  quack_error_destroy(error);
  quack_compiler_options_destroy(options);
}

/// Four threads, one options handle shared read-only, identical PTX.
TEST(CAPI, ConcurrentCompilesAgree) {
  quack_compiler_options_t options = cOptions("bf16");
  constexpr int kThreads = 4;
  std::vector<std::string> texts(kThreads);
  std::vector<int> status(kThreads, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      quack_artifacts_t artifacts = nullptr;
      status[i] = quack_compile(kRmsNorm, strlen(kRmsNorm), "rms.qk", options,
                                &artifacts, nullptr);
      if (artifacts)
        texts[i] = quack_artifacts_text(artifacts, nullptr);
      quack_artifacts_destroy(artifacts);
    });
  for (std::thread &t : threads)
    t.join();
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(status[i], QUACK_OK) << "thread " << i;
    EXPECT_FALSE(texts[i].empty());
    EXPECT_EQ(texts[i], texts[0]) << "thread " << i;
  }
  quack_compiler_options_destroy(options);
}

} // namespace
