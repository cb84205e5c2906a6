//===- KernelConfig.h - how a kernel's rows map onto threads ------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_TRANSFORMS_KERNELCONFIG_H
#define QUACK_DIALECT_QUACK_TRANSFORMS_KERNELCONFIG_H

#include "quack/Layout/TVLayout.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

#include <algorithm>
#include <optional>
#include <string>

namespace mlir::quack {

class KernelOp;

/// The launch configuration of a row kernel (the `quack.config` attribute).
struct KernelConfig {
  /// Elements per vector access.
  int64_t vector = 1;
  /// Threads that share one row.
  int64_t threadsPerRow = 1;
  /// Vectors each thread owns (the last ones may fall past N).
  int64_t vectorsPerThread = 1;
  /// Rows handled by one CTA.
  int64_t rowsPerCta = 1;
  /// CTAs of a thread-block cluster that split each row between them (1: a
  /// row stays in one CTA). Each CTA owns a contiguous chunk of the row and
  /// reductions exchange partials through distributed shared memory.
  int64_t clusterSize = 1;
  /// CTAs each SM must hold at once (ptxas .minnctapersm, which caps the
  /// registers per thread); 0 leaves ptxas free.
  int64_t minCtasPerSm = 0;
  /// Persistent kernels (sums over rows): load the next row group's inputs
  /// while the current one is reduced, exchanged and written, at the cost
  /// of holding two row groups' inputs in registers.
  bool prefetch = false;
  /// Keep 16-bit rows packed across exchanges between threads: widen them
  /// again where each phase uses them and recompute cheap values over them,
  /// so that fewer registers stay live (more CTAs per SM), at the cost of
  /// the recomputation.
  bool remat = false;
  /// After the last exchange, finish and store each fragment of the row
  /// before computing the next (quack-sink-to-uses), so that one
  /// fragment's f32 values are live at a time rather than all of them.
  bool sinkTail = false;
  /// How matrix inputs reach the threads.
  ///   Global: each thread loads its vectors with 128-bit ld.global into
  ///     registers.
  ///   Bulk (`copy=bulk`): one thread of the CTA copies each input row's
  ///     slice into shared memory with cp.async.bulk, completing on an
  ///     mbarrier; threads read their vectors from shared memory where each
  ///     phase uses them, so rows need not stay in registers across
  ///     exchanges, and with prefetch the next row group's copies land in a
  ///     second buffer while this one is used.
  ///   Tensor (`copy=tensor`): the same staging, but each input's slice of
  ///     the CTA's rows arrives in boxes of (TensorBox) columns x rows through
  ///     cp.async.bulk.tensor, from a tensor map the runtime encodes per
  ///     launch (the metadata's `tensor_maps`); the copy engine fills what
  ///     lies past N or M with zeros.
  enum class Copy { Global, Bulk, Tensor };
  Copy copy = Copy::Global;
  /// With bulk copies and prefetch: the shared-memory buffers the loop
  /// cycles through (2: the next row group is copied while this one is
  /// used; S: the S - 1 next ones).
  int64_t stages = 2;
  /// Kernels with sums over rows (`sums=shared`, or `sums=K` for the last
  /// K): the number of the kernel's sums over rows, the last ones in program
  /// order, whose f32 partial sums each thread keeps in its own slots of
  /// dynamic shared memory (after the bulk-copy buffers) instead of
  /// registers, adding to them once per row. Frees a register per column a
  /// thread owns and such sum, where the row and the partials together
  /// would not fit, at the cost of shared-memory traffic (8 bytes per
  /// element and sum). Config selection clamps it to the kernel's sums.
  int64_t sharedSums = 0;
  /// Byte alignment assumed for every pointer and row stride.
  int64_t alignment = 16;
  /// Whether a table of measured configs chose the split, and which one
  /// (its file name; not part of the attribute: config selection marks the
  /// kernel with kConfigTunedAttrName, whose value is that name, instead).
  bool tuned = false;
  std::string table;
  /// The shared sums (K of `sums=K`) of the table entry whose loop the
  /// kernel runs, 0 where none (config selection marks the kernel with
  /// kConfigTableSumsAttrName).
  int64_t tableSums = 0;
  /// Why these values were chosen, for --print-config.
  std::string reason;

  int64_t ctaThreads() const { return threadsPerRow * rowsPerCta; }
  /// Columns of a row each CTA owns (the last CTA's may lie past N).
  int64_t colsPerCta() const {
    return threadsPerRow * vector * vectorsPerThread;
  }
  /// Whether matrix inputs are staged through shared memory by the copy
  /// engine (bulk or tensor copies).
  bool staged() const { return copy != Copy::Global; }
  /// How many of a kernel's `numSums` sums over rows keep their partials in
  /// shared memory (the last ones).
  int64_t sharedSumCount(int64_t numSums) const {
    return std::clamp<int64_t>(sharedSums, 0, numSums);
  }
  /// Bytes of shared memory the partial sums of a kernel with `numSums` sums
  /// over rows take: four per column each thread owns, per shared sum.
  int64_t sharedSumBytes(int64_t numSums) const {
    return sharedSumCount(numSums) * ctaThreads() * vectorsPerThread *
           vector * 4;
  }

  /// Builds the dictionary attribute stored on a kernel.
  DictionaryAttr toAttr(MLIRContext *context) const;
  /// Reads the dictionary attribute stored on a kernel.
  static FailureOr<KernelConfig> fromKernel(KernelOp kernel);
};

/// The attribute config selection puts on a kernel whose split a table of
/// measured configs chose: the table's file name (e.g. "sm_90.tsv").
inline constexpr llvm::StringLiteral kConfigTunedAttrName = "quack.config_tuned";
/// On a kernel that runs a table entry's loop with `sums=K`: K.
inline constexpr llvm::StringLiteral kConfigTableSumsAttrName =
    "quack.config_table_sums";

/// The words of a config's reason where config selection gave up the bulk
/// copies it wanted for a prefetching loop (the loop's buffers do not fit
/// in shared memory) and reads the rows with 128-bit loads instead; quackc
/// looks for them to try the single buffer again where those loads spill.
inline constexpr llvm::StringLiteral kBulkWithoutPrefetchNote =
    "one buffer without prefetch loses to 128-bit loads";

/// The name of a copy path in configs and metadata ("global", "bulk",
/// "tensor"), and back (std::nullopt for another name).
StringRef stringifyCopy(KernelConfig::Copy copy);
std::optional<KernelConfig::Copy> parseCopy(StringRef name);

/// Largest box of a tensor copy, per dimension (cuTensorMapEncodeTiled).
inline constexpr int64_t kMaxTensorBox = 256;

/// The box of a tensor copy. The tensor map sees a matrix [M, N] as
/// [M, N / inner, inner] (innermost last), so that one box, of `inner` x
/// `groups` x the CTA's rows elements, spans inner * groups consecutive
/// columns of each row although no box dimension exceeds kMaxTensorBox.
struct TensorBox {
  int64_t inner = 0;
  int64_t groups = 0;
  int64_t columns() const { return inner * groups; }
};

/// Where the staged copy paths (KernelConfig::staged()) keep its buffers in
/// dynamic shared memory: the mbarriers (8 bytes per buffer) in the first
/// kBarrierBytes, then each buffer, holding every matrix input's slice of
/// the CTA's rows, in the kernel's load order, each 128-byte aligned. Config
/// selection sizes it; convert-quack-to-gpu lays the buffers out by it.
struct BulkBufferLayout {
  static constexpr int64_t kBarrierBytes = 128;
  /// The matrix loads staged, in program order, with their byte offsets in
  /// a buffer and element sizes.
  SmallVector<Operation *> loads;
  SmallVector<int64_t> offsets;
  SmallVector<int64_t> elementBytes;
  /// Tensor copies: the box of each input (see TensorBox). A box spans W =
  /// TensorBox::columns() columns of each of the CTA's rows and lands row
  /// by row, so column c of row r of the slice sits at element
  /// ((c / W) * rows + r) * W + c % W of the input's buffer. Empty for bulk
  /// copies.
  SmallVector<TensorBox> tensorBoxes;
  /// Elements of a row each CTA owns, and bytes of one buffer.
  int64_t colsPerCta = 0;
  int64_t bufferBytes = 0;

  /// Dynamic shared memory for `buffers` buffers.
  int64_t totalBytes(int64_t buffers) const {
    return kBarrierBytes + buffers * bufferBytes;
  }
};

/// The bulk-copy buffers of `kernel` under `config`.
BulkBufferLayout getBulkBufferLayout(KernelOp kernel,
                                     const KernelConfig &config);

/// The box for a slice of `colsPerCta` columns of `rows` rows of
/// `rowLength`-element rows of `elementBytes`-byte elements: `inner` the
/// widest power of two of at most kMaxTensorBox that divides N and the
/// slice and spans a multiple of 16 bytes; `groups` the most, at most
/// kMaxTensorBox, that divide the slice's groups and, where the slice takes
/// several boxes, make a box a multiple of 128 bytes (each box lands
/// 128-byte aligned). std::nullopt if there is none.
std::optional<TensorBox> getTensorBox(int64_t rowLength, int64_t colsPerCta,
                                      int64_t rows, int64_t elementBytes);

class TVLayoutAttr;

/// Name of the attribute holding a thread-value layout: on a kernel, the
/// layout of its tiles; on an op, the layout of the tiles it produces or
/// reads (quack-assign-layouts).
inline constexpr llvm::StringLiteral kTVLayoutAttrName = "quack.tv_layout";

/// The thread-value layout of `kernel`'s tiles under `config`: the row
/// partition of the layout library (::quack::layout::makeRowTVLayout);
/// reports failure on the kernel.
FailureOr<::quack::layout::RowTVLayout>
buildRowTVLayout(KernelOp kernel, const KernelConfig &config);

/// The row partition `layout` as a `#quack.tv_layout`.
TVLayoutAttr getTVLayoutAttr(MLIRContext *context,
                             const ::quack::layout::RowTVLayout &layout);

/// Name of the kernel attribute holding its config.
inline constexpr llvm::StringLiteral kConfigAttrName = "quack.config";

/// Largest CTA a row kernel uses.
inline constexpr int64_t kMaxCtaThreads = 1024;
/// Most vectors one thread may own on the CTA-level path.
inline constexpr int64_t kMaxVectorsPerThread = 16;
/// Longest row the CTA-level path holds in registers without spilling, for
/// every catalogue kernel and element type (ptxas over the catalogue: at
/// 32768 a two-input kernel such as softmax_bwd starts to spill). Longer
/// rows are split over the CTAs of a cluster, each holding at most this many
/// elements.
inline constexpr int64_t kMaxCtaRowLength = 16384;
/// Largest cluster a row is split over (sizes above 8 are non-portable:
/// Hopper allows 16 with cudaFuncAttributeNonPortableClusterSizeAllowed).
inline constexpr int64_t kMaxClusterSize = 16;
/// Longest row any path holds: a cluster of kMaxClusterSize CTAs.
inline constexpr int64_t kMaxRowLength = kMaxClusterSize * kMaxCtaRowLength;

} // namespace mlir::quack

#endif // QUACK_DIALECT_QUACK_TRANSFORMS_KERNELCONFIG_H
