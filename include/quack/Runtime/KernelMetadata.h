//===- KernelMetadata.h - Kernel metadata and launch checks -----*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The in-memory form of a kernel's metadata file (docs/abi.md, schema 1),
/// its validation, and the checks a launch's arguments must pass. Nothing
/// here touches the CUDA driver, so all of it is testable without a GPU.
///
//===----------------------------------------------------------------------===//

#ifndef QUACK_RUNTIME_KERNELMETADATA_H
#define QUACK_RUNTIME_KERNELMETADATA_H

#include "quack/Runtime/Json.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace quack {
namespace runtime {

/// Outcome of a runtime operation; the values match `quack_rt_status`.
enum class Status : int {
  Ok = 0,
  InvalidArgument = 1,
  InvalidMetadata = 2,
  IoError = 3,
  DriverUnavailable = 4,
  DriverError = 5,
  Misaligned = 6,
  Unsupported = 7,
};

/// The role of an entry-point parameter (docs/abi.md, "kind").
enum class ParamKind { Rows, Matrix, RowStride, Row, PerRow, Scalar, Workspace };

/// Element and scalar types of the ABI.
enum class ScalarType { F32, F16, BF16, I32, I64 };

/// Returns the ABI spelling of \p kind ("matrix", ...).
const char *stringifyParamKind(ParamKind kind);
/// Returns the ABI spelling of \p type ("bf16", ...).
const char *stringifyScalarType(ScalarType type);
/// Returns the size in bytes of one element of \p type.
unsigned getScalarTypeSize(ScalarType type);

/// One entry-point parameter, in entry-point order.
struct Param {
  std::string name;
  ParamKind kind = ParamKind::Scalar;
  /// The element type (matrix, row, per_row) or the value type (rows,
  /// row_stride, scalar).
  ScalarType type = ScalarType::F32;
  /// "input", "output", or empty for rows and row_stride.
  std::string role;
  /// For a row_stride, the index of the matrix parameter it belongs to.
  int of = -1;

  /// True for parameters that are device pointers.
  bool isPointer() const {
    return kind == ParamKind::Matrix || kind == ParamKind::Row ||
           kind == ParamKind::PerRow || kind == ParamKind::Workspace;
  }
};

/// One launch argument: a pointer (`u`), an integer (`i`) or a floating-point
/// scalar (`f`), chosen by the parameter's kind and type.
union ArgValue {
  int64_t i;
  uint64_t u;
  double f;
};

/// A tensor map the runtime encodes at each launch of a kernel with tensor
/// copies (docs/abi.md, "tensor_maps") and passes after the parameters: a
/// 3-D map over the [M, columns] elements of a matrix parameter seen as
/// [M, columns / box[0], box[0]], read in boxes of box[0] x box[1] x box[2]
/// (innermost first: box[0] * box[1] consecutive columns of box[2] rows).
struct TensorMapRecipe {
  /// Parameter indices of the matrix and of its row stride.
  int param = -1;
  int rowStrideParam = -1;
  ScalarType type = ScalarType::F32;
  int64_t columns = 0;
  std::array<unsigned, 3> box = {1, 1, 1};
};

/// Bytes and alignment of one encoded tensor map (CUtensorMap).
constexpr size_t kTensorMapBytes = 128;
constexpr size_t kTensorMapAlignment = 64;

/// The parsed and validated contents of a metadata file.
struct KernelMetadata {
  int64_t schema = 0;
  std::string kernel;
  std::string symbol;
  std::string cubin;
  std::string arch;
  /// The compile-time bindings, values rendered as text (4096, "bf16").
  std::vector<std::pair<std::string, std::string>> bindings;
  std::vector<Param> params;
  int64_t n = 0;
  int64_t alignment = 0;
  int64_t rowsPerCta = 1;
  /// CTAs that cooperate on one group of rows (optional "ctas_per_rows" in
  /// "grid", default 1; a cluster that splits a row sets it).
  int64_t ctasPerRowGroup = 1;
  std::array<unsigned, 3> block = {1, 1, 1};
  std::array<unsigned, 3> cluster = {1, 1, 1};
  int64_t staticSharedBytes = 0;
  int64_t dynamicSharedBytes = 0;
  std::string hash;

  /// Grid kind "persistent": a grid of at most as many row groups as the
  /// device holds at once, which loop over the rows; with sums over rows,
  /// then the finishing entry point below (without, there is none).
  bool persistent = false;
  std::string finishSymbol;
  std::array<unsigned, 3> finishBlock = {1, 1, 1};
  int64_t finishColumnsPerCta = 1;
  /// Parameter indices of the row-vector outputs the finish writes, and of
  /// the workspace.
  std::vector<int> finishOutputs;
  int workspaceParam = -1;
  /// Tensor maps appended after the parameters, in order.
  std::vector<TensorMapRecipe> tensorMaps;
  /// Metadata files beside this one: the same kernel on smaller clusters,
  /// largest first ("cluster_fallbacks").
  std::vector<std::string> clusterFallbacks;

  /// Number of launch arguments a caller passes: every parameter but M.
  size_t getNumArgs() const { return params.empty() ? 0 : params.size() - 1; }
  unsigned getClusterSize() const {
    return cluster[0] * cluster[1] * cluster[2];
  }
};

/// Checks that \p fallback can stand in for \p meta on a smaller cluster:
/// the same kernel, bindings, parameters, alignment and sums over rows (its
/// grid may loop over rows where the kernel's does not, or the other way
/// round, only without sums), a cluster smaller than \p largerCluster, and
/// no fallbacks of its own.
Status checkClusterFallback(const KernelMetadata &meta,
                            const KernelMetadata &fallback,
                            unsigned largerCluster, std::string &error);

/// The dynamic shared-memory bytes a kernel must opt in to (the function's
/// MAX_DYNAMIC_SHARED_SIZE_BYTES) before it launches, or 0 when it needs no
/// opt-in: without one, a block gets 48 KB in all, its static bytes included.
int64_t getDynamicSharedOptIn(const KernelMetadata &meta);

/// Parses and validates metadata text. On failure returns
/// Status::InvalidMetadata and a message naming the offending field.
Status parseKernelMetadata(const std::string &text, KernelMetadata &meta,
                           std::string &error);

/// Checks launch arguments against \p meta: the count, M >= 0, non-null
/// pointers, strides of at least N, and every pointer and every row stride
/// times the element size a multiple of the metadata's alignment. \p args
/// holds one value per parameter after M, in parameter order.
Status checkLaunchArguments(const KernelMetadata &meta, int64_t m,
                            const ArgValue *args, size_t numArgs,
                            std::string &error);

/// For a persistent kernel: gridDim.x for \p m rows when the device keeps
/// \p residentGroups row groups (CTAs, or clusters) at once, and the bytes
/// of workspace that grid needs.
void computePersistentGrid(const KernelMetadata &meta, int64_t m,
                           int64_t residentGroups, unsigned &gridX,
                           uint64_t &workspaceBytes);

/// Computes gridDim.x for \p m rows: ceil(m / rows_per_cta) times the CTAs
/// per row group, rounded up to a whole number of clusters. Fails when the
/// grid exceeds the hardware's limit.
Status computeGridSize(const KernelMetadata &meta, int64_t m, unsigned &gridX,
                       std::string &error);

} // namespace runtime
} // namespace quack

#endif // QUACK_RUNTIME_KERNELMETADATA_H
