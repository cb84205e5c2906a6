//===- KernelMetadataTest.cpp - Metadata validation and launch checks -----===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestKernels.h"
#include "quack/Runtime/KernelMetadata.h"

#include "gtest/gtest.h"

using namespace quack::runtime;

namespace {

/// The example of docs/abi.md.
const char *const exampleMetadata = R"({
  "schema": 1,
  "kernel": "rmsnorm_fwd",
  "symbol": "rmsnorm_fwd",
  "cubin": "rmsnorm_fwd__T-bf16__N-4096__a16.cubin",
  "arch": "sm_90",
  "bindings": {"N": 4096, "T": "bf16"},
  "params": [
    {"name": "M", "kind": "rows", "type": "i64"},
    {"name": "x", "kind": "matrix", "role": "input", "dtype": "bf16"},
    {"name": "x.row_stride", "kind": "row_stride", "of": "x", "type": "i64"},
    {"name": "w", "kind": "row", "role": "input", "dtype": "bf16"},
    {"name": "eps", "kind": "scalar", "role": "input", "type": "f32"},
    {"name": "y", "kind": "matrix", "role": "output", "dtype": "bf16"},
    {"name": "y.row_stride", "kind": "row_stride", "of": "y", "type": "i64"},
    {"name": "rstd", "kind": "per_row", "role": "output", "dtype": "f32"}
  ],
  "N": 4096,
  "alignment": 16,
  "grid": {"kind": "rows", "rows_per_cta": 1},
  "block": [256, 1, 1],
  "cluster": [1, 1, 1],
  "shared_bytes": {"static": 32, "dynamic": 0},
  "config": {"threads_per_row": 256, "rows_per_cta": 1, "vector": 8,
             "vectors_per_thread": 2},
  "resources": {"registers": 32, "spill_stores": 0, "spill_loads": 0,
                "stack_bytes": 0, "shared_bytes": 32},
  "limits": {"max_N": 16384},
  "hash": "5f1c\u2026"
})";

using quack_test::replaced;

/// Returns the example with the first occurrence of \p from replaced.
std::string withReplaced(const std::string &from, const std::string &to) {
  return replaced(exampleMetadata, from, to);
}

/// Parses \p text, expecting failure, and returns the message.
std::string rejection(const std::string &text) {
  KernelMetadata meta;
  std::string error;
  EXPECT_EQ(parseKernelMetadata(text, meta, error), Status::InvalidMetadata);
  return error;
}

KernelMetadata example() {
  KernelMetadata meta;
  std::string error;
  EXPECT_EQ(parseKernelMetadata(exampleMetadata, meta, error), Status::Ok)
      << error;
  return meta;
}

#define EXPECT_CONTAINS(haystack, needle)                                      \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)             \
      << "message: " << (haystack)

TEST(KernelMetadataTest, ParsesTheAbiExample) {
  KernelMetadata meta = example();
  EXPECT_EQ(meta.schema, 1);
  EXPECT_EQ(meta.kernel, "rmsnorm_fwd");
  EXPECT_EQ(meta.symbol, "rmsnorm_fwd");
  EXPECT_EQ(meta.cubin, "rmsnorm_fwd__T-bf16__N-4096__a16.cubin");
  EXPECT_EQ(meta.arch, "sm_90");
  ASSERT_EQ(meta.bindings.size(), 2u);
  EXPECT_EQ(meta.bindings[0].first, "N");
  EXPECT_EQ(meta.bindings[0].second, "4096");
  EXPECT_EQ(meta.bindings[1].second, "bf16");
  EXPECT_EQ(meta.n, 4096);
  EXPECT_EQ(meta.alignment, 16);
  EXPECT_EQ(meta.rowsPerCta, 1);
  EXPECT_EQ(meta.block[0], 256u);
  EXPECT_EQ(meta.getClusterSize(), 1u);
  EXPECT_EQ(meta.staticSharedBytes, 32);
  EXPECT_EQ(meta.dynamicSharedBytes, 0);
  ASSERT_EQ(meta.params.size(), 8u);
  EXPECT_EQ(meta.getNumArgs(), 7u);
  EXPECT_EQ(meta.params[0].kind, ParamKind::Rows);
  EXPECT_EQ(meta.params[1].kind, ParamKind::Matrix);
  EXPECT_EQ(meta.params[1].type, ScalarType::BF16);
  EXPECT_EQ(meta.params[1].role, "input");
  EXPECT_EQ(meta.params[2].kind, ParamKind::RowStride);
  EXPECT_EQ(meta.params[2].of, 1);
  EXPECT_EQ(meta.params[4].kind, ParamKind::Scalar);
  EXPECT_EQ(meta.params[4].type, ScalarType::F32);
  EXPECT_EQ(meta.params[6].of, 5);
  EXPECT_EQ(meta.params[7].kind, ParamKind::PerRow);
  EXPECT_EQ(meta.params[7].role, "output");
}

TEST(KernelMetadataTest, OptionalFieldsDefault) {
  std::string text = withReplaced(R"("cluster": [1, 1, 1],)", "");
  text.replace(
      text.find(R"("shared_bytes")"),
      std::string(R"("shared_bytes": {"static": 32, "dynamic": 0},)").size(),
      "");
  KernelMetadata meta;
  std::string error;
  ASSERT_EQ(parseKernelMetadata(text, meta, error), Status::Ok) << error;
  EXPECT_EQ(meta.getClusterSize(), 1u);
  EXPECT_EQ(meta.dynamicSharedBytes, 0);
}

TEST(KernelMetadataTest, RejectsOtherSchemas) {
  EXPECT_CONTAINS(rejection(withReplaced(R"("schema": 1)", R"("schema": 2)")),
                  "unsupported schema 2");
  EXPECT_CONTAINS(rejection(withReplaced(R"("schema": 1,)", "")), "\"schema\"");
  EXPECT_CONTAINS(rejection(withReplaced(R"("schema": 1)", R"("schema": "1")")),
                  "\"schema\"");
}

TEST(KernelMetadataTest, RejectsBadJson) {
  EXPECT_CONTAINS(rejection("{\"schema\": 1,"), "JSON parse error");
  EXPECT_CONTAINS(rejection("[]"), "must be a JSON object");
}

TEST(KernelMetadataTest, RejectsMissingAndMistypedFields) {
  EXPECT_CONTAINS(rejection(withReplaced(R"("symbol": "rmsnorm_fwd",)", "")),
                  "missing field \"symbol\"");
  EXPECT_CONTAINS(
      rejection(withReplaced("\"N\": 4096,\n", "\"N\": \"4096\",\n")),
      "\"N\" must be an integer");
  EXPECT_CONTAINS(rejection(withReplaced("\"N\": 4096,\n", "\"N\": 0,\n")),
                  "\"N\" must be at least 1");
  EXPECT_CONTAINS(
      rejection(withReplaced(R"("alignment": 16)", R"("alignment": 12)")),
      "power of two");
  EXPECT_CONTAINS(
      rejection(withReplaced(R"("block": [256, 1, 1])", R"("block": [256])")),
      "array of 3 integers");
  EXPECT_CONTAINS(rejection(withReplaced(R"("block": [256, 1, 1])",
                                         R"("block": [1024, 2, 1])")),
                  "more than 1024 threads");
  EXPECT_CONTAINS(rejection(withReplaced(R"("grid": {"kind": "rows")",
                                         R"("grid": {"kind": "tiles")")),
                  "unsupported grid kind \"tiles\"");
  EXPECT_CONTAINS(
      rejection(withReplaced(R"("rows_per_cta": 1})", R"("rows_per_cta": 0})")),
      "grid.rows_per_cta");
  EXPECT_CONTAINS(rejection(withReplaced(R"("cubin": "rmsnorm_fwd__)",
                                         R"("cubin": "../rmsnorm_fwd__)")),
                  "beside the metadata");
  EXPECT_CONTAINS(
      rejection(withReplaced(R"("dynamic": 0)", R"("dynamic": -1)")),
      "shared_bytes.dynamic");
}

TEST(KernelMetadataTest, RejectsBadParams) {
  EXPECT_CONTAINS(
      rejection(withReplaced(R"("kind": "per_row")", R"("kind": "column")")),
      "unknown parameter kind \"column\"");
  EXPECT_CONTAINS(
      rejection(withReplaced(R"("dtype": "f32")", R"("dtype": "f64")")),
      "unknown type \"f64\"");
  EXPECT_CONTAINS(rejection(withReplaced(R"("role": "output", "dtype": "f32")",
                                         R"("role": "inout", "dtype": "f32")")),
                  "\"input\" or \"output\"");
  // M must come first.
  EXPECT_CONTAINS(rejection(withReplaced(
                      R"({"name": "M", "kind": "rows", "type": "i64"},)", "")),
                  "first parameter must be M");
  // A row stride must follow its own matrix.
  EXPECT_CONTAINS(rejection(withReplaced(R"("of": "y")", R"("of": "x")")),
                  "must directly follow matrix \"x\"");
  EXPECT_CONTAINS(
      rejection(withReplaced(
          R"({"name": "x.row_stride", "kind": "row_stride", "of": "x", "type": "i64"},)",
          "")),
      "\"x\" must be followed by its row stride");
  EXPECT_CONTAINS(rejection(withReplaced(R"("name": "w")", R"("name": "x")")),
                  "duplicate parameter name \"x\"");
  EXPECT_CONTAINS(
      rejection(withReplaced(R"("type": "f32")", R"("type": "bf16")")),
      "scalar \"eps\" must have type f32, i32 or i64");
  EXPECT_CONTAINS(
      rejection(withReplaced(R"("name": "M", "kind": "rows", "type": "i64")",
                             R"("name": "M", "kind": "rows", "type": "i32")")),
      "must have type i64");
  EXPECT_CONTAINS(
      rejection(withReplaced(R"("params": [)", R"("params": [] ,"x": [)")),
      "non-empty array");
}

/// Arguments for the example: x, x.row_stride, w, eps, y, y.row_stride, rstd.
std::vector<ArgValue> exampleArgs(uint64_t x = 0x10000, int64_t xs = 4096,
                                  uint64_t w = 0x20000, uint64_t y = 0x30000,
                                  int64_t ys = 4096, uint64_t rstd = 0x40000) {
  std::vector<ArgValue> args(7);
  args[0].u = x;
  args[1].i = xs;
  args[2].u = w;
  args[3].f = 1e-6;
  args[4].u = y;
  args[5].i = ys;
  args[6].u = rstd;
  return args;
}

Status check(int64_t m, const std::vector<ArgValue> &args,
             std::string *message = nullptr) {
  static KernelMetadata meta = example();
  std::string error;
  Status s = checkLaunchArguments(meta, m, args.data(), args.size(), error);
  if (message)
    *message = error;
  return s;
}

TEST(KernelMetadataTest, AcceptsGoodArguments) {
  EXPECT_EQ(check(32768, exampleArgs()), Status::Ok);
  // A wider row stride, still 16-byte aligned.
  EXPECT_EQ(check(3, exampleArgs(0x10000, 4096 + 8)), Status::Ok);
  // With one row, the stride is never used to step.
  EXPECT_EQ(check(1, exampleArgs(0x10000, 0)), Status::Ok);
  // With no rows, nothing is touched: null pointers are fine.
  EXPECT_EQ(check(0, exampleArgs(0, 4096, 0, 0, 4096, 0)), Status::Ok);
}

TEST(KernelMetadataTest, RejectsBadArguments) {
  std::string msg;
  std::vector<ArgValue> args = exampleArgs();
  args.pop_back();
  EXPECT_EQ(check(4, args, &msg), Status::InvalidArgument);
  EXPECT_CONTAINS(msg, "expected 7 arguments after M, got 6");

  EXPECT_EQ(check(-1, exampleArgs(), &msg), Status::InvalidArgument);
  EXPECT_CONTAINS(msg, "M must be non-negative");

  EXPECT_EQ(check(4, exampleArgs(0x10000, 4096, 0), &msg),
            Status::InvalidArgument);
  EXPECT_CONTAINS(msg, "\"w\" is a null pointer");

  EXPECT_EQ(check(4, exampleArgs(0x10000, 4000), &msg),
            Status::InvalidArgument);
  EXPECT_CONTAINS(msg, "smaller than N = 4096");

  EXPECT_EQ(check(4, exampleArgs(0x10000, -4096), &msg),
            Status::InvalidArgument);
  EXPECT_CONTAINS(msg, "must be non-negative");
}

TEST(KernelMetadataTest, RejectsMisalignedArguments) {
  std::string msg;
  EXPECT_EQ(check(4, exampleArgs(0x10008), &msg), Status::Misaligned);
  EXPECT_CONTAINS(msg, "\"x\" (address 0x10008) is not aligned to 16 bytes");

  EXPECT_EQ(check(4, exampleArgs(0x10000, 4096, 0x20000, 0x30000, 4097), &msg),
            Status::Misaligned);
  EXPECT_CONTAINS(msg, "row stride \"y.row_stride\" (4097 elements of bf16 = "
                       "8194 bytes) is not a multiple of the kernel's "
                       "alignment of 16 bytes");

  EXPECT_EQ(check(4,
                  exampleArgs(0x10000, 4096, 0x20000, 0x30000, 4096, 0x40004),
                  &msg),
            Status::Misaligned);
  EXPECT_CONTAINS(msg, "\"rstd\"");
}

TEST(KernelMetadataTest, GridSize) {
  KernelMetadata meta = example();
  std::string error;
  unsigned grid = 0;
  ASSERT_EQ(computeGridSize(meta, 32768, grid, error), Status::Ok);
  EXPECT_EQ(grid, 32768u);
  meta.rowsPerCta = 4;
  ASSERT_EQ(computeGridSize(meta, 3, grid, error), Status::Ok);
  EXPECT_EQ(grid, 1u);
  ASSERT_EQ(computeGridSize(meta, 9, grid, error), Status::Ok);
  EXPECT_EQ(grid, 3u);
  // A cluster that splits a row over 4 CTAs.
  meta.rowsPerCta = 1;
  meta.ctasPerRowGroup = 4;
  meta.cluster = {4, 1, 1};
  ASSERT_EQ(computeGridSize(meta, 5, grid, error), Status::Ok);
  EXPECT_EQ(grid, 20u);
  // Whole clusters only.
  meta.ctasPerRowGroup = 1;
  meta.cluster = {2, 1, 1};
  ASSERT_EQ(computeGridSize(meta, 5, grid, error), Status::Ok);
  EXPECT_EQ(grid, 6u);
  EXPECT_EQ(computeGridSize(meta, int64_t(1) << 40, grid, error),
            Status::InvalidArgument);
  EXPECT_CONTAINS(error, "grid limit");
}

TEST(KernelMetadataTest, DynamicSharedOptIn) {
  KernelMetadata meta = example();
  // No dynamic bytes: nothing to opt in to, whatever the static bytes.
  meta.staticSharedBytes = 40 * 1024;
  EXPECT_EQ(getDynamicSharedOptIn(meta), 0);
  // Static and dynamic within 48 KB together.
  meta.staticSharedBytes = 16 * 1024;
  meta.dynamicSharedBytes = 32 * 1024;
  EXPECT_EQ(getDynamicSharedOptIn(meta), 0);
  // Past 48 KB only with the static bytes counted (32896 + 32896).
  meta.staticSharedBytes = 32896;
  meta.dynamicSharedBytes = 32896;
  EXPECT_EQ(getDynamicSharedOptIn(meta), 32896);
  // Past 48 KB with the dynamic bytes alone.
  meta.staticSharedBytes = 128;
  meta.dynamicSharedBytes = 131200;
  EXPECT_EQ(getDynamicSharedOptIn(meta), 131200);
}

TEST(KernelMetadataTest, ClusterSplitNeedsOneRowPerCta) {
  std::string text = withReplaced(R"("rows_per_cta": 1})",
                                  R"("rows_per_cta": 2, "ctas_per_rows": 2})");
  EXPECT_CONTAINS(rejection(text), "ctas_per_rows");
}

} // namespace

namespace {
/// The example turned into a kernel with a sum over rows: a row-vector
/// output dw, a workspace, a persistent grid and a finishing entry point.
std::string persistentExample() {
  std::string text = exampleMetadata;
  auto replace = [&](const std::string &from, const std::string &to) {
    size_t pos = text.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    text.replace(pos, from.size(), to);
  };
  replace(R"({"name": "rstd", "kind": "per_row", "role": "output", "dtype": "f32"})",
          R"({"name": "rstd", "kind": "per_row", "role": "output", "dtype": "f32"},
    {"name": "dw", "kind": "row", "role": "output", "dtype": "bf16"},
    {"name": "workspace", "kind": "workspace", "role": "scratch", "dtype": "f32"})");
  replace(R"("grid": {"kind": "rows", "rows_per_cta": 1},)",
          R"("grid": {"kind": "persistent", "rows_per_cta": 2},
  "finish": {"symbol": "rmsnorm_fwd_finish", "block": [512, 1, 1],
             "columns_per_cta": 128, "outputs": ["dw"]},)");
  return text;
}
} // namespace

TEST(KernelMetadataTest, ParsesAPersistentKernel) {
  KernelMetadata meta;
  std::string error;
  ASSERT_EQ(parseKernelMetadata(persistentExample(), meta, error), Status::Ok)
      << error;
  EXPECT_TRUE(meta.persistent);
  EXPECT_EQ(meta.finishSymbol, "rmsnorm_fwd_finish");
  EXPECT_EQ(meta.finishBlock[0], 512u);
  EXPECT_EQ(meta.finishColumnsPerCta, 128);
  ASSERT_EQ(meta.finishOutputs.size(), 1u);
  EXPECT_EQ(meta.params[meta.finishOutputs[0]].name, "dw");
  EXPECT_EQ(meta.params[meta.workspaceParam].kind, ParamKind::Workspace);

  // The grid never holds more row groups than the device keeps resident,
  // and the workspace holds one f32 row of N per row slot and output.
  unsigned gridX = 0;
  uint64_t bytes = 0;
  computePersistentGrid(meta, 1000000, 264, gridX, bytes);
  EXPECT_EQ(gridX, 264u);
  EXPECT_EQ(bytes, 264u * 2 * 4096 * 4);
  computePersistentGrid(meta, 5, 264, gridX, bytes);
  EXPECT_EQ(gridX, 3u);
  computePersistentGrid(meta, 0, 264, gridX, bytes);
  EXPECT_EQ(gridX, 0u);
  EXPECT_EQ(bytes, 0u);
}

TEST(KernelMetadataTest, RejectsInconsistentPersistentKernels) {
  std::string text = persistentExample();
  auto without = [&](const std::string &from, const std::string &to) {
    std::string t = text;
    size_t pos = t.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    t.replace(pos, from.size(), to);
    return rejection(t);
  };
  EXPECT_CONTAINS(without(R"("kind": "persistent")", R"("kind": "rows")"),
                  "go together");
  EXPECT_CONTAINS(without(R"("outputs": ["dw"])", R"("outputs": ["y"])"),
                  "row-vector outputs");
  EXPECT_CONTAINS(without(R"("role": "scratch")", R"("role": "output")"),
                  "must be \"scratch\"");
  EXPECT_CONTAINS(without(R"("kind": "workspace", "role": "scratch", "dtype": "f32")",
                          R"("kind": "workspace", "role": "scratch", "dtype": "bf16")"),
                  "must have dtype f32");
  EXPECT_CONTAINS(
      without(R"({"name": "workspace", "kind": "workspace", "role": "scratch", "dtype": "f32"})",
              R"({"name": "workspace", "kind": "workspace", "role": "scratch", "dtype": "f32"},
    {"name": "ws2", "kind": "workspace", "role": "scratch", "dtype": "f32"})"),
      "more than one workspace parameter");
  EXPECT_CONTAINS(without(R"("outputs": ["dw"])", R"("outputs": [])"),
                  "non-empty \"outputs\" array");
  EXPECT_CONTAINS(without(R"("block": [512, 1, 1])", R"("block": [0, 1, 1])"),
                  "\"finish.block\" entries must be integers in [1, 1024]");
  EXPECT_CONTAINS(without(R"("block": [512, 1, 1])", R"("block": [512, 4, 1])"),
                  "\"finish.block\" has more than 1024 threads");
  EXPECT_CONTAINS(without(R"("finish": {)", R"("unfinished": {)"),
                  "go together");
}

TEST(KernelMetadataTest, ParsesAPersistentKernelWithoutSums) {
  // A loop over rows (the cluster path's prefetching kernels) needs no
  // workspace and no finishing entry point.
  std::string text = exampleMetadata;
  std::string from = R"("grid": {"kind": "rows", "rows_per_cta": 1},)";
  size_t pos = text.find(from);
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, from.size(),
               R"("grid": {"kind": "persistent", "rows_per_cta": 1},)");
  KernelMetadata meta;
  std::string error;
  ASSERT_EQ(parseKernelMetadata(text, meta, error), Status::Ok) << error;
  EXPECT_TRUE(meta.persistent);
  EXPECT_TRUE(meta.finishSymbol.empty());
  EXPECT_LT(meta.workspaceParam, 0);
  unsigned gridX = 0;
  uint64_t bytes = 1;
  computePersistentGrid(meta, 1000000, 264, gridX, bytes);
  EXPECT_EQ(gridX, 264u);
  EXPECT_EQ(bytes, 0u);
}

TEST(KernelMetadataTest, PersistentLaunchChecks) {
  KernelMetadata meta;
  std::string error;
  ASSERT_EQ(parseKernelMetadata(persistentExample(), meta, error), Status::Ok);
  // x, x.row_stride, w, eps, y, y.row_stride, rstd, dw, workspace.
  std::vector<ArgValue> args(meta.getNumArgs());
  for (ArgValue &a : args)
    a.u = 0x10000;
  args[1].i = 4096;
  args[5].i = 4096;
  EXPECT_EQ(checkLaunchArguments(meta, 8, args.data(), args.size(), error),
            Status::Ok)
      << error;
  args[8].u = 0x10008;
  EXPECT_EQ(checkLaunchArguments(meta, 8, args.data(), args.size(), error),
            Status::Misaligned);
  EXPECT_CONTAINS(error, "workspace");
  // With no rows the sums are still written (zeros): dw may not be null,
  // the workspace may.
  args[8].u = 0;
  args[7].u = 0;
  EXPECT_EQ(checkLaunchArguments(meta, 0, args.data(), args.size(), error),
            Status::InvalidArgument);
  EXPECT_CONTAINS(error, "\"dw\" is a null pointer");
  args[7].u = 0x10000;
  EXPECT_EQ(checkLaunchArguments(meta, 0, args.data(), args.size(), error),
            Status::Ok);
}

namespace {
/// The example with tensor maps \p maps ("tensor_maps").
std::string withTensorMaps(const std::string &maps) {
  return withReplaced("\"alignment\": 16,",
                      "\"tensor_maps\": " + maps + ", \"alignment\": 16,");
}
} // namespace

TEST(KernelMetadataTest, ParsesTensorMaps) {
  KernelMetadata meta;
  std::string error;
  ASSERT_EQ(parseKernelMetadata(
                withTensorMaps(R"([{"of": "x", "dtype": "bf16",
                                   "columns": 4096, "box": [256, 16, 2]}])"),
                meta, error),
            Status::Ok)
      << error;
  ASSERT_EQ(meta.tensorMaps.size(), 1u);
  EXPECT_EQ(meta.tensorMaps[0].param, 1);
  EXPECT_EQ(meta.tensorMaps[0].rowStrideParam, 2);
  EXPECT_EQ(meta.tensorMaps[0].type, ScalarType::BF16);
  EXPECT_EQ(meta.tensorMaps[0].columns, 4096);
  EXPECT_EQ(meta.tensorMaps[0].box[0], 256u);
  EXPECT_EQ(meta.tensorMaps[0].box[1], 16u);
  EXPECT_EQ(meta.tensorMaps[0].box[2], 2u);
  // Callers pass the same arguments: the maps are the runtime's.
  EXPECT_EQ(meta.getNumArgs(), 7u);
  EXPECT_TRUE(example().tensorMaps.empty());
}

TEST(KernelMetadataTest, RejectsBadTensorMaps) {
  EXPECT_CONTAINS(rejection(withTensorMaps("{}")),
                  "\"tensor_maps\" must be an array");
  // A matrix of integers has no tensor copies.
  std::string ints = withReplaced(
      "{\"name\": \"x\", \"kind\": \"matrix\", \"role\": \"input\", \"dtype\": \"bf16\"}",
      "{\"name\": \"x\", \"kind\": \"matrix\", \"role\": \"input\", \"dtype\": \"i32\"}");
  ints.replace(ints.find("\"alignment\": 16,"),
               std::string("\"alignment\": 16,").size(),
               R"("tensor_maps": [{"of": "x", "dtype": "i32", "columns": 4096,
                   "box": [256, 16, 1]}], "alignment": 16,)");
  EXPECT_CONTAINS(rejection(ints), "must be f32, f16 or bf16, got \"i32\"");
  // One recipe of x (bf16, N = 4096) with one field changed.
  struct Case {
    const char *fields;
    const char *message;
  };
  const Case cases[] = {
      {R"("of": "y", "dtype": "bf16", "columns": 4096, "box": [256, 16, 1])",
       "must name a matrix input, got \"y\""},
      {R"("of": "x", "dtype": "f32", "columns": 4096, "box": [256, 16, 1])",
       "must be the matrix's dtype (bf16)"},
      {R"("of": "x", "dtype": "bf16", "columns": 4000, "box": [256, 16, 1])",
       "must be N = 4096, got 4000"},
      {R"("of": "x", "dtype": "bf16", "columns": 4096, "box": [512, 1, 1])",
       "entries must be integers in [1, 256]"},
      {R"("of": "x", "dtype": "bf16", "columns": 4096, "box": [4, 1, 1])",
       "multiple of 16 bytes"},
      {R"("of": "x", "dtype": "bf16", "columns": 4096, "box": [24, 1, 1])",
       "divides N = 4096, got 24"},
      {R"("of": "x", "dtype": "bf16", "columns": 4096)",
       "must be [inner, groups, rows]"},
  };
  for (const Case &c : cases)
    EXPECT_CONTAINS(
        rejection(withTensorMaps(std::string("[{") + c.fields + "}]")),
        c.message);
}

TEST(KernelMetadataTest, TensorCopiesNeedRowsWith32BitCoordinates) {
  KernelMetadata meta;
  std::string error;
  ASSERT_EQ(parseKernelMetadata(
                withTensorMaps(R"([{"of": "x", "dtype": "bf16",
                                   "columns": 4096, "box": [256, 16, 1]}])"),
                meta, error),
            Status::Ok)
      << error;
  std::vector<ArgValue> args = exampleArgs();
  EXPECT_EQ(checkLaunchArguments(meta, int64_t(1) << 31, args.data(),
                                 args.size(), error),
            Status::Unsupported);
  EXPECT_CONTAINS(error, "32-bit coordinates");
  EXPECT_EQ(checkLaunchArguments(meta, 32768, args.data(), args.size(), error),
            Status::Ok);
}

namespace {
/// The example on a cluster of \p size CTAs splitting each row.
std::string clusterExample(unsigned size, const std::string &extra = "") {
  const std::string c = std::to_string(size);
  std::string text = withReplaced(
      R"("grid": {"kind": "rows", "rows_per_cta": 1},)",
      R"("grid": {"kind": "rows", "rows_per_cta": 1, "ctas_per_rows": )" + c +
          "}," + extra);
  return replaced(text, R"("cluster": [1, 1, 1],)",
                  "\"cluster\": [" + c + ", 1, 1],");
}

KernelMetadata parsed(const std::string &text) {
  KernelMetadata meta;
  std::string error;
  EXPECT_EQ(parseKernelMetadata(text, meta, error), Status::Ok) << error;
  return meta;
}
} // namespace

TEST(KernelMetadataTest, ParsesClusterFallbacks) {
  KernelMetadata meta = parsed(
      clusterExample(16, R"("cluster_fallbacks": ["k__c8.json", "k__c4.json"],)"));
  ASSERT_EQ(meta.clusterFallbacks.size(), 2u);
  EXPECT_EQ(meta.clusterFallbacks[0], "k__c8.json");
  EXPECT_EQ(meta.clusterFallbacks[1], "k__c4.json");
  EXPECT_TRUE(parsed(clusterExample(16)).clusterFallbacks.empty());
}

TEST(KernelMetadataTest, RejectsBadClusterFallbacks) {
  EXPECT_CONTAINS(
      rejection(clusterExample(8, R"("cluster_fallbacks": "k__c4.json",)")),
      "must be an array");
  EXPECT_CONTAINS(
      rejection(clusterExample(8, R"("cluster_fallbacks": [4],)")),
      "entries must name metadata files");
  EXPECT_CONTAINS(
      rejection(clusterExample(8, R"("cluster_fallbacks": ["../k.json"],)")),
      "beside this one");
  EXPECT_CONTAINS(rejection(withReplaced(R"("cluster": [1, 1, 1],)",
                                         R"("cluster": [1, 1, 1],
                                            "cluster_fallbacks": ["k.json"],)")),
                  "needs a cluster of 2 or more");
}

TEST(KernelMetadataTest, ChecksThatAFallbackMatchesTheKernel) {
  KernelMetadata own = parsed(clusterExample(16));
  std::string error;
  EXPECT_EQ(checkClusterFallback(own, parsed(clusterExample(8)), 16, error),
            Status::Ok)
      << error;
  // A cluster of 1: the CTA-level path serves the row.
  EXPECT_EQ(checkClusterFallback(own, example(), 2, error), Status::Ok)
      << error;

  auto refused = [&](const KernelMetadata &fallback, unsigned larger) {
    std::string message;
    EXPECT_EQ(checkClusterFallback(own, fallback, larger, message),
              Status::InvalidMetadata);
    return message;
  };
  EXPECT_CONTAINS(refused(parsed(clusterExample(16)), 16), "not smaller");
  EXPECT_CONTAINS(refused(parsed(clusterExample(8)), 8), "not smaller");
  // The fallback on 8 CTAs with one field changed.
  auto changed = [](const std::string &from, const std::string &to) {
    return parsed(replaced(clusterExample(8), from, to));
  };
  EXPECT_CONTAINS(refused(changed("\"rmsnorm_fwd\"", "\"softmax_fwd\""), 16),
                  "another kernel");
  EXPECT_CONTAINS(refused(changed("\"bf16\"}", "\"f16\"}"), 16),
                  "bindings differ");
  EXPECT_CONTAINS(refused(changed("\"eps\"", "\"alpha\""), 16),
                  "parameters differ");
  EXPECT_CONTAINS(
      refused(changed("\"alignment\": 16", "\"alignment\": 8"), 16),
      "alignment differs");
  // Sums over rows written by another finishing step (no valid metadata
  // pairs them with equal parameters: built in memory).
  KernelMetadata sums = parsed(clusterExample(8));
  sums.finishOutputs = {3};
  EXPECT_CONTAINS(refused(sums, 16), "sums over rows differ");
  EXPECT_CONTAINS(
      refused(parsed(clusterExample(8, R"("cluster_fallbacks": ["x.json"],)")),
              16),
      "fallbacks of its own");
}

TEST(KernelMetadataTest, AFallbackMayLoopOverRowsOnlyWithoutSums) {
  // A loop over rows (prefetching bulk copies) on 4 CTAs may fall back to a
  // grid over rows on 2: no workspace, so the grids need not match.
  std::string looping = replaced(clusterExample(4), R"("grid": {"kind": "rows")",
                                 R"("grid": {"kind": "persistent")");
  KernelMetadata own = parsed(looping);
  std::string error;
  EXPECT_EQ(checkClusterFallback(own, parsed(clusterExample(2)), 4, error),
            Status::Ok)
      << error;
  EXPECT_EQ(checkClusterFallback(parsed(clusterExample(4)), parsed(looping),
                                 8, error),
            Status::Ok)
      << error;
}
