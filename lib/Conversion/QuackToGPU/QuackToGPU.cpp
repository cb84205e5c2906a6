//===- QuackToGPU.cpp - distribute row kernels over CTAs -------------------===//
//
// Part of the quack project.
//
// Lowers configured `quack.kernel` ops to `gpu.func` kernels: every row value
// is split into per-thread fragments of 128-bit vectors, elementwise math is
// applied fragment by fragment, and row reductions become an in-thread
// reduction, a quack.allreduce across the row's threads (a warp's or a
// block's) and, for rows split over a thread-block cluster, an exchange of
// the CTAs' partials through distributed shared memory.
//
//===----------------------------------------------------------------------===//

#include "quack/Conversion/Passes.h"
#include "quack/Dialect/Quack/IR/QuackAttrs.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/KernelConfig.h"
#include "quack/Layout/TVLayout.h"

#include "../Combine.h"
#include "../TargetInfo.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::quack {
#define GEN_PASS_DEF_CONVERTQUACKTOGPU
#include "quack/Conversion/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

constexpr int64_t kWarpSize = 32;
/// The finishing kernel of sums over rows: column lanes per CTA, row-slot
/// splits per CTA, and slots each thread loads before adding.
constexpr int64_t kFinishLanes = 32;
constexpr int64_t kFinishSplits = 16;
constexpr int64_t kFinishUnroll = 4;
/// Largest shared-memory buffer (bytes) in which the rows of a CTA add their
/// partial sums before writing them (see combineRowSums).
constexpr int64_t kMaxCombinedRowSumBytes = 32 * 1024;
/// Shared memory (static and dynamic) one CTA may use on sm_90.
constexpr int64_t kMaxSharedBytesPerCta = 227 * 1024;

/// What a kernel argument became in the gpu.func signature.
struct LoweredArg {
  ArgKind kind = ArgKind::Invalid;
  Type elementType;
  Value pointer;   // matrices, row and per-row vectors
  Value rowStride; // matrices, in elements
  Value scalar;    // scalars
};

/// The name of an element type as written in metadata.
std::string dtypeName(Type type) {
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isInteger(32))
    return "i32";
  if (type.isInteger(64))
    return "i64";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

StringRef kindName(ArgKind kind) {
  switch (kind) {
  case ArgKind::Matrix:
    return "matrix";
  case ArgKind::Row:
    return "row";
  case ArgKind::PerRow:
    return "per_row";
  case ArgKind::Scalar:
    return "scalar";
  case ArgKind::Invalid:
    break;
  }
  return "invalid";
}

/// Lowers one configured kernel into a gpu.func inside `gpuModule`.
class RowKernelLowering {
public:
  RowKernelLowering(KernelOp kernel, const KernelConfig &config,
                    gpu::GPUModuleOp gpuModule)
      : kernel(kernel), config(config), gpuModule(gpuModule),
        b(kernel.getContext()), loc(kernel.getLoc()) {
    rowLength = kernel.getRowLength().value_or(1);
    vectorsPerRow = rowLength / config.vector;
  }

  LogicalResult run();

private:
  // Set-up.
  void buildSignature();
  void buildPreamble();
  LogicalResult allocateSharedMemory();

  // Per-op lowering.
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerLoad(LoadOp op);
  LogicalResult lowerStore(StoreOp op);
  /// Lowers a run of adjacent reductions over the row (quack.reduce,
  /// quack.logsumexp) with one exchange between threads for all of them;
  /// adjacent reductions never depend on each other.
  LogicalResult lowerReductions(ArrayRef<Operation *> group);
  LogicalResult lowerGather(GatherOp op);
  /// Moves gathers before the first matrix store (see run()).
  LogicalResult orderGathersBeforeStores();
  LogicalResult lowerColumn(ColumnOp op);
  LogicalResult lowerSumRows(SumRowsOp op);

  // Sums over rows (quack.sum_rows): a persistent grid whose CTAs loop over
  // row groups, keeping f32 partial sums in registers; at the end each CTA
  // writes its partials to the workspace, and a second kernel sums them.
  // With config.prefetch (forced, for kernels without sums), the same loop
  // without partial sums, workspace or second kernel.
  /// Computes `row` and `rowValid` for the row group `group` (i64).
  void setRowGroup(Value group);
  /// Opens the loop over row groups, carrying the partial sums (and, with
  /// config.prefetch, the next row group's inputs).
  LogicalResult beginRowLoop();
  /// Lowers the prefetched loads for the current row group and returns
  /// their values in order (a matrix load's fragments, a per-row scalar).
  FailureOr<SmallVector<Value>> loadRowInputs();
  /// Maps the prefetched loads' results to `values` (as loadRowInputs
  /// orders them).
  void mapRowInputs(ValueRange values);
  /// Closes it and writes the partial sums to the workspace.
  void endRowLoop();
  /// Builds `<kernel>_finish`: sums the workspace's partials column by
  /// column in a fixed order and writes each row-vector output.
  void buildFinishKernel();
  /// One reduction of a group: its term of the exchange (a value combined
  /// with its kind, the online pair (max, sum of exp(x - max)) of a
  /// logsumexp, or the (value, column) pair of an argmax) and this thread's
  /// partial values.
  struct PendingReduction {
    Operation *op;
    ReductionTerm term;
    SmallVector<Value, 3> partial;
  };
  /// This thread's partial of a quack.reduce, quack.logsumexp or
  /// quack.argmax.
  FailureOr<PendingReduction> beginReduction(Operation *op);
  /// Maps the reduction's result from its combined values.
  void finishReduction(const PendingReduction &pending,
                       ArrayRef<Value> combined);
  /// This thread's reduction of its fragments, vectors past the row's end
  /// giving the identity (null when `frags` is empty).
  Value reduceInThread(CombiningKind kind, ArrayRef<Value> frags, Value ident);
  /// A quack.allreduce of `terms` across groups of `lanes` threads with
  /// `scope` (convert-quack-allreduce-to-nvvm lowers it).
  SmallVector<Value> allReduce(ArrayRef<ReductionTerm> terms,
                               ValueRange acc, ReduceScope scope,
                               int64_t lanes);
  /// This thread's lane modulo `groups` (a power of two up to 32, i32): the
  /// slot a lane reads when a warp combines `groups` partials.
  Value laneSlot(int64_t groups);
  /// Combines every thread's partials of `terms` (32-bit values, a pair's
  /// two in order) across the row's lanes of a warp, its CTA's warps
  /// (quack.allreduce) and its cluster's CTAs in one round: every thread of
  /// the row ends with the same bits.
  SmallVector<Value> exchange(ArrayRef<ReductionTerm> terms,
                              SmallVector<Value> acc);
  /// The cluster step of exchange(): one quack.cluster.exchange (every CTA
  /// pushes its partials into every peer's slots of its rank, completing on
  /// the peer's mbarrier for this round); lane j gets rank j mod
  /// clusterSize's values, which a warp allreduce over the ranks then
  /// combines in the same lanes and order in every CTA.
  /// convert-quack-cluster-to-nvvm lowers the exchange;
  /// quack-verify-cluster-protocol checks its protocol.
  SmallVector<Value> sendToCluster(ArrayRef<Value> partial);
  /// Initialises one mbarrier per cluster round, each expecting the bytes
  /// that the cluster's CTAs will send it (quack.cluster.barrier_init), and
  /// arrives on the cluster barrier; the matching wait comes before the
  /// first exchange, so it hides behind the row's loads.
  void initClusterBarriers();
  /// Arms every round's mbarrier for its next phase (quack.cluster.
  /// barrier_arm; barrier_init when `initialise`): the phase completes once
  /// the cluster's clusterSize partials (4 bytes per value of the round)
  /// have landed.
  void armClusterBarriers(bool initialise);
  /// Emits the cluster wait that matches initClusterBarriers' arrive, once.
  void waitForClusterInit();
  LogicalResult lowerElementwise(Operation *op);
  /// col == s or col != s for a per-row scalar s, in 32 bits; failure when
  /// `cmp` is not such a compare.
  LogicalResult lowerColumnCompare(arith::CmpIOp cmp);
  /// Whether a logsumexp of `input` keeps its exponentials in registers
  /// for a later exp(input - lse).
  bool keepsExponentials(Value input);
  /// exp(x - lse) from the exponentials the logsumexp of x kept, or exp(x -
  /// s) for a per-row s over a row widened from 16 bits as an fma and an
  /// exp2 per element; failure when `exp` is neither.
  LogicalResult lowerShiftedExp(math::ExpOp exp);
  /// Whether `row` is a bf16 or f16 row widened to f32.
  bool widenedFrom16Bits(Value row);
  /// exp(frag - shift) of every fragment; with `fused`, as
  /// exp2(fma(frag, log2 e, -shift log2 e)).
  SmallVector<Value> shiftedExps(ArrayRef<Value> frags, Value shift,
                                 bool fused);

  // Staged copies (config.staged()): one thread of the CTA copies each
  // matrix input's slice of the CTA's rows into a shared-memory buffer with
  // cp.async.bulk (one copy per row) or cp.async.bulk.tensor (one per box
  // of columns x rows), completing on the buffer's mbarrier; threads read their
  // vectors from the buffer in each phase that uses them. With a loop over
  // row groups and prefetch, two buffers alternate: the next row group's
  // copies land in one while the CTA reads the other.
  /// Lays out dynamic shared memory (the bulk-copy buffers, then the
  /// shared sums) and declares it.
  LogicalResult allocateBulkBuffers();
  /// Decides combineRowSums and declares its shared-memory buffer (after
  /// the other shared memory is laid out, which it must fit beside).
  void allocateRowSumBuffer();
  /// Lays out the bulk-copy buffers; returns the bytes they take.
  FailureOr<int64_t> allocateStagingBuffers();
  /// Initialises every buffer's mbarrier (quack.stage.init).
  void initBulkBarriers();
  /// The symbol of the bulk-copy shared memory.
  FlatSymbolRefAttr bulkSymbol();
  /// Columns of the row from column `start` (i64) on, 0 past its end.
  Value columnsFrom(Value start);
  /// Creates the quack.stage.fill of the mbarrier at byte `barrier` (i64)
  /// expecting `bytes` (i64), moves the builder into its body and returns
  /// the mbarrier's address there.
  Value beginFill(Value barrier, Value bytes);
  /// Address (shared) of `offset` bytes plus `dynamicOffset` (i64, may be
  /// null) into the bulk-copy shared memory.
  Value bulkAddress(int64_t offset, Value dynamicOffset);
  /// One quack.stage.fill of buffer `stage` (i64) with row group `group`
  /// (i64): thread 0 expects the group's bytes on the buffer's mbarrier and
  /// issues the copies, one bulk copy per input and row, or (tensor copies)
  /// one per input and box.
  void issueBulkCopies(Value stage, Value group);
  /// The tensor copies of issueBulkCopies into the fill of the mbarrier at
  /// byte `barrier` (i64): this CTA's slice starts at column `start` (i64)
  /// and the group at row `firstRow` (i64).
  void issueTensorCopies(Value stage, Value barrier, Value start,
                         Value firstRow);
  /// Every thread waits for phase `parity` (i32) of buffer `stage`'s
  /// mbarrier (quack.stage.wait) and reads from that buffer until the next
  /// call.
  void waitBulkCopies(Value stage, Value parity);
  /// The fragments of a staged row in the current phase, read (and
  /// widened) from the current buffer on the phase's first use.
  const SmallVector<Value> *stagedFragments(Value v);

  // Helpers.
  bool isRowValue(Value v) const {
    auto type = dyn_cast<VectorType>(v.getType());
    return type && type.getRank() == 1 && type.getDimSize(0) == rowLength;
  }
  VectorType fragmentType(Type elementType) const {
    return VectorType::get({config.vector}, elementType);
  }
  Value constI32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value constI64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  }
  /// Builds the thread-value layout of a CTA's tile with the layout
  /// algebra and splits its thread mode into row and column parts.
  LogicalResult buildPartition();
  /// Column of the first element of the k-th vector this thread owns (i64).
  Value vectorColumn(int64_t k);
  /// Whether the k-th vector lies inside the row; null when always true.
  Value vectorInBounds(int64_t k);
  Value andPredicates(Value a, Value c);
  /// Address of the k-th vector of the current row of a matrix, or of a row
  /// vector.
  Value vectorAddress(const LoweredArg &arg, int64_t k);
  /// Address of the current row's element of a per-row vector.
  Value perRowAddress(const LoweredArg &arg);
  Value predicatedLoad(Value predicate, Type type, Value address,
                       unsigned alignment);
  void predicatedStore(Value predicate, Value value, Value address,
                       unsigned alignment);
  /// A bulk or tensor quack.copy of `operands` (see the op).
  void asyncCopy(CopyAtom atom, ValueRange operands);
  FailureOr<LoweredArg> argFor(Value memref, Operation *user);
  Value combine(CombiningKind kind, Value a, Value c) {
    return combineValues(b, loc, kind, a, c);
  }
  Value onlineShift(Value max) {
    return mlir::quack::onlineShift(b, loc, max);
  }
  FailureOr<Value> identity(CombiningKind kind, Type type);

  KernelOp kernel;
  KernelConfig config;
  gpu::GPUModuleOp gpuModule;
  OpBuilder b;
  Location loc;
  int64_t rowLength;
  int64_t vectorsPerRow;

  gpu::GPUFuncOp func;
  SmallVector<LoweredArg> args;
  Value numRows, tid, tidInRow, rowInCta, row, rowValid;
  /// Column of this thread's first element (i64), from the TV layout.
  Value threadColumn;
  /// The TV layout of one CTA's tile of rows.
  std::optional<::quack::layout::RowTVLayout> partition;
  /// Largest value threadColumn takes over the CTA.
  int64_t maxThreadColumn = 0;
  /// Thread-mode leaves of the TV layout: (shape, row part, column part).
  struct ThreadMode {
    int64_t shape, rowStride, columnStride;
  };
  SmallVector<ThreadMode> threadModes;
  LLVM::GlobalOp sharedGlobal;
  int64_t sharedBytes = 0;
  int64_t sharedCursor = 0;
  /// Exchanges between threads, one per run of adjacent reductions over the
  /// row (quack-group-reductions makes independent ones adjacent), in
  /// program order; each gets its own shared-memory slots and, in a
  /// cluster, its own mbarrier. The values each round exchanges (a
  /// logsumexp's online pair counts two).
  SmallVector<int64_t> roundWidths;
  int64_t reductionRounds = 0;
  /// Cluster exchange: byte offsets of the mbarriers (8 bytes each) and of
  /// the partial slots (clusterSize x 4 bytes per value per round).
  int64_t clusterBarrierOffset = 0;
  int64_t clusterSlotOffset = 0;
  int64_t clusterSlotCursor = 0;
  int64_t clusterRound = 0;
  bool clusterWaitPending = false;
  /// This CTA's rank in its cluster (i32), when rows span a cluster.
  Value clusterRank;

  Operation *firstMatrixStore = nullptr;
  bool hasGathers = false;
  /// Gathers not yet lowered, and whether the cluster barrier that orders
  /// every CTA's gathers before the first matrix store has had its arrive
  /// (right after the wait before the first exchange, once every gather
  /// is issued: the arrive releases their loads), so that the first store
  /// only waits.
  int64_t gathersLeft = 0;
  bool gathersArrived = false;
  bool firstStoreLowered = false;

  /// Row offset of this thread inside its CTA's row group (i64), and the
  /// thread's first row group (i64).
  Value rowPart, firstRowGroup;
  SmallVector<SumRowsOp> rowSums;
  /// The grid is persistent and CTAs loop over row groups: with sums over
  /// rows, or with config.prefetch.
  bool looping = false;
  scf::ForOp rowLoop;
  /// Partial sums, [sum][vector], as the loop body sees and updates them.
  SmallVector<Value> partials;
  /// config.sharedSums: the partial sums of rowSums[firstSharedSum] on
  /// live in this thread's slots of dynamic shared memory from byte
  /// sumsOffset on, in chunks of sumChunk f32 (at most 16 bytes); a chunk's
  /// slots of consecutive threads are consecutive, so that a warp's
  /// accesses hit distinct banks. The earlier sums' partials are carried
  /// by the row loop, in registers.
  bool sharedSums = false;
  int64_t firstSharedSum = 0;
  bool inSharedMemory(int64_t sum) const {
    return sharedSums && sum >= firstSharedSum;
  }
  /// With several rows per CTA (CTA-level path, partial sums in
  /// registers): the CTA's rows add their partials in shared memory
  /// (rowSumsGlobal, rowsPerCta x rowSumColumns f32, one sum at a time)
  /// before the CTA writes them, so that the workspace holds one slot per
  /// row group instead of one per row: rowsPerCta times fewer partials for
  /// the finishing kernel to read, which otherwise dominates short rows
  /// (at N = 256 a few CTAs read megabytes of partials).
  bool combineRowSums = false;
  int64_t rowSumColumns = 0;
  LLVM::GlobalOp rowSumsGlobal;
  /// Dynamic shared memory the kernel takes (allocateBulkBuffers).
  int64_t dynamicSharedBytes = 0;
  /// Writes the partial sums through rowSumsGlobal (combineRowSums).
  void writeCombinedRowSums();
  int64_t sumsOffset = 0;
  int64_t sumChunk = 1;
  /// The address of this thread's slot of chunk `c` of vector `k` of sum
  /// `j` (one of the sums in shared memory).
  Value sumSlot(int64_t j, int64_t k, int64_t c);
  /// Chunk `c` of a fragment of f32.
  Value sumChunkOf(Value fragment, int64_t c);
  /// With config.prefetch: the loads of matrix rows and per-row scalars
  /// before the first store, which the loop issues one row group ahead,
  /// and their values for the next row group (yielded to the next
  /// iteration).
  SmallVector<LoadOp> prefetchedLoads;
  SmallVector<Value> nextInputs;
  /// Parity of the cluster mbarriers' phase in this iteration (i32).
  Value clusterParity;
  /// Row groups the grid holds at once (nctaid.x / clusterSize, i64).
  Value gridRowGroups;
  Value workspace;

  DenseMap<Value, SmallVector<Value>> fragments;
  IRMapping scalars;
  /// A logsumexp's own exponentials, exp(x - m) with m this thread's
  /// maximum (0 where it is -inf), kept for a later exp(x - lse) of the same
  /// row (see lowerShiftedExp).
  struct LseExponentials {
    Value input;
    SmallVector<Value> exps;
    Value threadMax;
  };
  DenseMap<Value, LseExponentials> lseExponentials;

  /// Bulk copies: the matrix inputs staged through shared memory, each
  /// with its byte offset in a buffer and its element size.
  struct StagedInput {
    LoweredArg arg;
    int64_t offset = 0;
    int64_t elementBytes = 0;
    /// Tensor copies: the entry-point parameter holding the input's tensor
    /// map, and its box (see BulkBufferLayout::tensorBoxes).
    Value tensorMap;
    TensorBox box;
  };
  /// Tensor copies: the tensor-map parameters, in the staged inputs' order.
  SmallVector<Value> tensorMapArgs;
  SmallVector<StagedInput> stagedInputs;
  DenseMap<Operation *, int64_t> stagedInputOf;
  /// A row read from a staged input (or its f32 widening): its fragments
  /// as read in phase `phase`.
  struct StagedRow {
    int64_t input = 0;
    bool widen = false;
    SmallVector<Value> frags;
    int64_t phase = -1;
  };
  DenseMap<Value, StagedRow> stagedRows;
  LLVM::GlobalOp bulkGlobal;
  /// Buffers (1 or 2) and bytes per buffer; buffers start at
  /// kBulkBuffersOffset, after the mbarriers.
  int64_t bulkStages = 0;
  int64_t bulkStageBytes = 0;
  static constexpr int64_t kBulkBuffersOffset =
      BulkBufferLayout::kBarrierBytes;
  /// Byte offset (i64) of the buffer threads read now.
  Value bulkReadOffset;
  /// Elements of a row each CTA owns (a contiguous slice).
  int64_t colsPerCta = 0;
  /// Iterations of the row loop so far (i32), which pick the buffer and the
  /// mbarrier phase.
  Value bulkIteration;

  /// A 16-bit float row widened to f32 (arith.extf): the lowering keeps the
  /// packed fragments and converts them where the f32 values are used,
  /// once per reduction phase (see rowFragments()), so that only the packed
  /// halves stay live across an exchange between threads.
  struct NarrowRow {
    SmallVector<Value> packed;
    /// The f32 fragments of the phase `phase`; empty before the first use.
    SmallVector<Value> wide;
    int64_t phase = -1;
  };
  DenseMap<Value, NarrowRow> narrowRows;
  /// Counts the points past which a widened row is converted again: each
  /// exchange between threads, and each pass of a thread over its
  /// fragments inside a reduction.
  int64_t phase = 0;
  /// The f32 fragments of row value `v` (null when the lowering has not
  /// seen it), converting a narrow row as needed.
  const SmallVector<Value> *rowFragments(Value v);
  /// `packed` (a fragment of bf16 or f16) widened to f32. `again` marks a
  /// conversion of values that an earlier phase converted too: it is
  /// written so that no common-subexpression pass (MLIR's, LLVM's or
  /// ptxas') merges it with the earlier one, which would keep the f32
  /// values live in between.
  Value widen(Value packed, bool again);
  /// Row values computed by cheap elementwise operations from narrow rows
  /// (and per-row scalars, constants and other such values), with the phase
  /// of their current fragments. A later phase recomputes them from the
  /// packed rows instead of keeping their f32 fragments live across the
  /// exchange in between: a few ALU operations per element, against
  /// registers that bound the CTAs (and bytes in flight) per SM.
  DenseMap<Value, int64_t> rematerialized;
  /// Records op's result in `rematerialized` when it qualifies.
  void noteRematerializable(Operation *op);
};

void RowKernelLowering::buildSignature() {
  MLIRContext *ctx = kernel.getContext();
  Type ptrType = LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1);
  Type i64 = b.getI64Type();
  SmallVector<Type> inputs = {i64};
  SmallVector<Attribute> abi;
  abi.push_back(b.getDictionaryAttr(
      {b.getNamedAttr("name", b.getStringAttr("M")),
       b.getNamedAttr("kind", b.getStringAttr("rows")),
       b.getNamedAttr("type", b.getStringAttr("i64"))}));
  for (auto [index, type] : llvm::enumerate(kernel.getArgumentTypes())) {
    ArgKind kind = classifyArgType(type);
    std::string name = kernel.getArgName(index);
    StringRef role = stringifyArgRole(kernel.getArgRole(index));
    Type elt = type;
    if (auto memref = dyn_cast<MemRefType>(type))
      elt = memref.getElementType();
    SmallVector<NamedAttribute> entry = {
        b.getNamedAttr("name", b.getStringAttr(name)),
        b.getNamedAttr("kind", b.getStringAttr(kindName(kind))),
        b.getNamedAttr("role", b.getStringAttr(role)),
        b.getNamedAttr(kind == ArgKind::Scalar ? "type" : "dtype",
                       b.getStringAttr(dtypeName(elt)))};
    abi.push_back(b.getDictionaryAttr(entry));
    if (kind == ArgKind::Scalar) {
      inputs.push_back(type);
      continue;
    }
    inputs.push_back(ptrType);
    if (kind == ArgKind::Matrix) {
      inputs.push_back(i64);
      abi.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("name", b.getStringAttr(name + ".row_stride")),
           b.getNamedAttr("kind", b.getStringAttr("row_stride")),
           b.getNamedAttr("of", b.getStringAttr(name)),
           b.getNamedAttr("type", b.getStringAttr("i64"))}));
    }
  }

  if (!rowSums.empty()) {
    inputs.push_back(ptrType);
    abi.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", b.getStringAttr("workspace")),
         b.getNamedAttr("kind", b.getStringAttr("workspace")),
         b.getNamedAttr("role", b.getStringAttr("scratch")),
         b.getNamedAttr("dtype", b.getStringAttr("f32"))}));
  }

  // Tensor copies: one tensor map per staged input, after the parameters
  // the caller passes (the runtime encodes them per launch from the
  // `quack.tensor_maps` recipes, and quack-lower-tensor-map-args makes
  // them 128-byte by-value kernel parameters).
  SmallVector<Attribute> tensorMaps;
  SmallVector<int64_t> tensorMapIndices;
  if (config.copy == KernelConfig::Copy::Tensor) {
    BulkBufferLayout layout = getBulkBufferLayout(kernel, config);
    for (auto [index, load] : llvm::enumerate(layout.loads)) {
      auto source = dyn_cast<BlockArgument>(cast<LoadOp>(load).getSource());
      if (!source)
        continue; // lowerLoad reports it.
      tensorMapIndices.push_back(inputs.size());
      inputs.push_back(LLVM::LLVMPointerType::get(ctx));
      auto type = cast<MemRefType>(source.getType());
      tensorMaps.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("of", b.getStringAttr(kernel.getArgName(
                                    source.getArgNumber()))),
           b.getNamedAttr("dtype",
                          b.getStringAttr(dtypeName(type.getElementType()))),
           b.getNamedAttr("columns", b.getI64IntegerAttr(rowLength)),
           b.getNamedAttr("box", b.getDenseI64ArrayAttr(
                                     {layout.tensorBoxes[index].inner,
                                      layout.tensorBoxes[index].groups,
                                      config.rowsPerCta}))}));
    }
  }

  b.setInsertionPointToEnd(gpuModule.getBody());
  func = gpu::GPUFuncOp::create(b, loc, kernel.getSymName(),
                                b.getFunctionType(inputs, {}));
  if (!tensorMaps.empty()) {
    func->setAttr("quack.tensor_maps", b.getArrayAttr(tensorMaps));
    func->setAttr("quack.tensor_map_args",
                  b.getDenseI64ArrayAttr(tensorMapIndices));
  }
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  int32_t threads = static_cast<int32_t>(config.ctaThreads());
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({threads, 1, 1}));
  // known_block_size becomes ptxas' .maxntid; where the config asks,
  // .minnctapersm caps the registers so that that many CTAs fit on an SM.
  if (config.minCtasPerSm > 0)
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  b.getI32IntegerAttr(config.minCtasPerSm));
  // A CTA of a cluster is alone on its SM; with sums over rows it holds
  // partial sums beside the row, and ptxas' default register target for a
  // 512-thread CTA spills: give it the SM's registers.
  if (!rowSums.empty() && config.clusterSize > 1 && config.minCtasPerSm == 0)
    func->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                  b.getI32IntegerAttr(static_cast<int32_t>(
                      std::min<int64_t>(255, 65536 / threads))));
  if (looping)
    func->setAttr("quack.persistent", b.getUnitAttr());
  func->setAttr("quack.abi", b.getArrayAttr(abi));
  func->setAttr(kConfigAttrName, config.toAttr(kernel.getContext()));
  func->setAttr("quack.row_length", b.getI64IntegerAttr(rowLength));

  // Map kernel arguments onto gpu.func arguments.
  Block &entry = func.getBody().front();
  unsigned next = 0;
  numRows = entry.getArgument(next++);
  for (Type type : kernel.getArgumentTypes()) {
    LoweredArg arg;
    arg.kind = classifyArgType(type);
    if (arg.kind == ArgKind::Scalar) {
      arg.elementType = type;
      arg.scalar = entry.getArgument(next++);
    } else {
      arg.elementType = cast<MemRefType>(type).getElementType();
      arg.pointer = entry.getArgument(next++);
      if (arg.kind == ArgKind::Matrix)
        arg.rowStride = entry.getArgument(next++);
    }
    args.push_back(arg);
  }
  if (!rowSums.empty())
    workspace = entry.getArgument(next++);
  for (size_t i = 0; i < tensorMaps.size(); ++i)
    tensorMapArgs.push_back(entry.getArgument(next++));
}

LogicalResult RowKernelLowering::buildPartition() {
  namespace ql = ::quack::layout;
  FailureOr<ql::RowTVLayout> tv = buildRowTVLayout(kernel, config);
  if (failed(tv))
    return failure();
  partition = *tv;
  // quack-assign-layouts put the layout of the config on the kernel and its
  // tiles; this lowering implements that row partition, one for all tiles.
  TVLayoutAttr expected = getTVLayoutAttr(kernel.getContext(), *partition);
  auto check = [&](Operation *op) -> LogicalResult {
    auto given = op->getAttrOfType<TVLayoutAttr>(kTVLayoutAttrName);
    if (!given || given == expected)
      return success();
    return op->emitOpError("has the thread-value layout ")
           << given << "; convert-quack-to-gpu lowers the tiles of this "
           << "kernel only by the row partition of its config, " << expected;
  };
  if (failed(check(kernel)))
    return failure();
  WalkResult walk = kernel.getBody().walk([&](Operation *op) {
    return failed(check(op)) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Thread mode of tv: thread -> r * tileCols + c. Each leaf's stride splits
  // into a row part and a column part (the tile is row-major).
  ql::Layout threads = partition->tv.mode(0);
  std::vector<int64_t> shapes = threads.getShape().leaves();
  std::vector<int64_t> strides = threads.getStride().leaves();
  for (auto [shape, stride] : llvm::zip(shapes, strides)) {
    ThreadMode mode{shape, stride / partition->tileCols,
                    stride % partition->tileCols};
    threadModes.push_back(mode);
    maxThreadColumn += (shape - 1) * mode.columnStride;
  }
  return success();
}

void RowKernelLowering::buildPreamble() {
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  Type i32 = b.getI32Type();
  Type i64 = b.getI64Type();
  tid = NVVM::ThreadIdXOp::create(b, loc, i32);
  Value cta = NVVM::BlockIdXOp::create(b, loc, i32);
  // The reduction exchange groups threads by row.
  tidInRow = arith::AndIOp::create(b, loc, tid,
                                   constI32(config.threadsPerRow - 1));

  // Row and column of this thread's first element, from the TV layout's
  // thread mode: coordinate_i = (tid / prod(shape_<i)) % shape_i, where tid
  // is the cluster-wide thread id (thread + threadsPerCta * rank) when rows
  // span a cluster.
  Value tid64 = arith::ExtUIOp::create(b, loc, i64, tid);
  if (config.clusterSize > 1) {
    clusterRank = NVVMTargetInfo(b, loc).clusterRank();
    Value rank64 = arith::ExtUIOp::create(b, loc, i64, clusterRank);
    tid64 = arith::AddIOp::create(
        b, loc, tid64,
        arith::MulIOp::create(b, loc, rank64,
                              constI64(config.ctaThreads())));
  }
  Value rowPart = constI64(0);
  threadColumn = constI64(0);
  int64_t below = 1;
  for (const ThreadMode &mode : threadModes) {
    if (mode.shape == 1)
      continue;
    Value coord = tid64;
    if (below != 1)
      coord = arith::DivUIOp::create(b, loc, coord, constI64(below));
    coord = arith::RemUIOp::create(b, loc, coord, constI64(mode.shape));
    below *= mode.shape;
    if (mode.rowStride)
      rowPart = arith::AddIOp::create(
          b, loc, rowPart,
          arith::MulIOp::create(b, loc, coord, constI64(mode.rowStride)));
    if (mode.columnStride)
      threadColumn = arith::AddIOp::create(
          b, loc, threadColumn,
          arith::MulIOp::create(b, loc, coord, constI64(mode.columnStride)));
  }
  rowInCta = arith::TruncIOp::create(b, loc, i32, rowPart);
  this->rowPart = rowPart;
  Value cta64 = arith::ExtUIOp::create(b, loc, i64, cta);
  // The CTAs of a cluster are consecutive in x and share their rows.
  firstRowGroup = cta64;
  if (config.clusterSize > 1)
    firstRowGroup = arith::DivUIOp::create(b, loc, cta64,
                                           constI64(config.clusterSize));
  if (!looping)
    setRowGroup(firstRowGroup);
  if (config.clusterSize > 1 && reductionRounds > 0)
    initClusterBarriers();
  if (config.staged()) {
    initBulkBarriers();
    if (!looping) {
      issueBulkCopies(constI64(0), firstRowGroup);
      waitBulkCopies(constI64(0), constI32(0));
    }
  }
}

void RowKernelLowering::setRowGroup(Value group) {
  Value first = arith::MulIOp::create(b, loc, group,
                                      constI64(config.rowsPerCta));
  row = arith::AddIOp::create(b, loc, first, rowPart);
  rowValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row,
                                   numRows);
}

FailureOr<SmallVector<Value>> RowKernelLowering::loadRowInputs() {
  SmallVector<Value> values;
  for (LoadOp load : prefetchedLoads) {
    if (failed(lowerLoad(load)))
      return failure();
    if (classifyArgType(load.getSource().getType()) == ArgKind::PerRow)
      values.push_back(scalars.lookup(load.getResult()));
    else
      llvm::append_range(values, fragments[load.getResult()]);
  }
  return values;
}

void RowKernelLowering::mapRowInputs(ValueRange values) {
  size_t next = 0;
  for (LoadOp load : prefetchedLoads) {
    if (classifyArgType(load.getSource().getType()) == ArgKind::PerRow) {
      scalars.map(load.getResult(), values[next++]);
      continue;
    }
    fragments[load.getResult()] = llvm::to_vector(
        values.slice(next, config.vectorsPerThread));
    next += config.vectorsPerThread;
  }
}

LogicalResult RowKernelLowering::beginRowLoop() {
  Type i32 = b.getI32Type();
  // The preamble's cluster arrive (after the mbarrier inits) is matched by
  // the wait before the first iteration's first remote store: peers signal
  // this CTA's mbarriers from then on.
  Value rowsPerCta = constI64(config.rowsPerCta);
  Value groups = arith::DivUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, numRows,
                                    constI64(config.rowsPerCta - 1)),
      rowsPerCta);
  Value ctas = arith::ExtUIOp::create(b, loc, b.getI64Type(),
                                      NVVM::GridDimXOp::create(b, loc, i32));
  gridRowGroups = ctas;
  if (config.clusterSize > 1)
    gridRowGroups =
        arith::DivUIOp::create(b, loc, ctas, constI64(config.clusterSize));
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(fragmentType(b.getF32Type()), 0.0f));
  SmallVector<Value> inits;
  if (sharedSums) {
    // Each thread zeroes its own slots, which no other thread touches.
    Value zeroChunk = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(VectorType::get({sumChunk}, b.getF32Type()),
                               0.0f));
    for (size_t j = firstSharedSum; j < rowSums.size(); ++j)
      for (int64_t k = 0; k < config.vectorsPerThread; ++k)
        for (int64_t c = 0; c < config.vector / sumChunk; ++c)
          predicatedStore(Value(), zeroChunk, sumSlot(j, k, c), 4 * sumChunk);
  }
  // The sums before firstSharedSum (all of them without shared sums).
  inits.assign(firstSharedSum * config.vectorsPerThread, zero);
  size_t numPartials = inits.size();
  if (!prefetchedLoads.empty()) {
    // The first row group's inputs, loaded before the loop.
    setRowGroup(firstRowGroup);
    FailureOr<SmallVector<Value>> first = loadRowInputs();
    if (failed(first))
      return failure();
    llvm::append_range(inits, *first);
  }
  size_t numInputs = inits.size() - numPartials;
  // With S bulk-copy buffers, the first S - 1 row groups' copies go out
  // before the loop, into buffers 0 .. S - 2.
  if (config.staged())
    for (int64_t s = 0; s + 1 < bulkStages; ++s)
      issueBulkCopies(constI64(s),
                      s ? arith::AddIOp::create(
                              b, loc, firstRowGroup,
                              arith::MulIOp::create(b, loc, gridRowGroups,
                                                    constI64(s)))
                        : firstRowGroup);
  if (config.staged())
    inits.push_back(constI32(0));
  if (config.clusterSize > 1)
    inits.push_back(constI32(0));
  rowLoop = scf::ForOp::create(b, loc, firstRowGroup, groups, gridRowGroups,
                               inits);
  // A loop that carries nothing (shared sums, no prefetch) gets an empty
  // yield from the builder; endRowLoop writes the real one.
  if (inits.empty())
    rowLoop.getBody()->getTerminator()->erase();
  b.setInsertionPointToStart(rowLoop.getBody());
  Value group = rowLoop.getInductionVar();
  auto iterArgs = rowLoop.getRegionIterArgs();
  partials.assign(iterArgs.begin(), iterArgs.begin() + numPartials);
  if (config.clusterSize > 1)
    clusterParity = iterArgs.back();
  Value bulkStage, bulkParity;
  if (config.staged()) {
    Type i64 = b.getI64Type();
    bulkIteration = iterArgs[numPartials + numInputs];
    if (bulkStages > 1) {
      // Iteration i reads buffer i % S in its phase i / S and copies row
      // group i + S - 1 into buffer (i + S - 1) % S, which the CTA
      // finished reading in iteration i - 1.
      int64_t stages = bulkStages;
      Value it64 = arith::ExtUIOp::create(b, loc, i64, bulkIteration);
      bulkStage = arith::RemUIOp::create(b, loc, it64, constI64(stages));
      Value round = arith::DivUIOp::create(b, loc, bulkIteration,
                                           constI32(stages));
      bulkParity = arith::AndIOp::create(b, loc, round, constI32(1));
      Value ahead = arith::RemUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, it64, constI64(stages - 1)),
          constI64(stages));
      issueBulkCopies(
          ahead, arith::AddIOp::create(
                     b, loc, group,
                     arith::MulIOp::create(b, loc, gridRowGroups,
                                           constI64(stages - 1))));
    } else {
      bulkStage = constI64(0);
      bulkParity = arith::AndIOp::create(b, loc, bulkIteration, constI32(1));
      issueBulkCopies(bulkStage, group);
    }
  }
  if (!prefetchedLoads.empty()) {
    // The next row group's loads go out first, so that they are in flight
    // while this one is reduced, exchanged and written (past M, their
    // predicates are false and nothing is read).
    setRowGroup(arith::AddIOp::create(b, loc, group, gridRowGroups));
    FailureOr<SmallVector<Value>> next = loadRowInputs();
    if (failed(next))
      return failure();
    nextInputs = std::move(*next);
    mapRowInputs(ValueRange(iterArgs).slice(numPartials, numInputs));
  }
  setRowGroup(group);
  if (config.staged())
    waitBulkCopies(bulkStage, bulkParity);
  return success();
}

void RowKernelLowering::endRowLoop() {
  NVVMTargetInfo target(b, loc);
  // The next iteration reuses this one's shared-memory slots: every thread
  // must have read them before any thread writes them again.
  bool clusterRounds = config.clusterSize > 1 && reductionRounds > 0;
  int64_t warpsPerRow = config.threadsPerRow / kWarpSize;
  if (clusterRounds) {
    // Re-arm each round's mbarrier for the next phase, then arrive on the
    // cluster barrier (release). The matching wait comes in the next
    // iteration, just before its first remote store, so that its loads
    // and the exchange inside the CTA proceed meanwhile: no peer sends the
    // next row's partials before every CTA has read this row's and armed
    // its barriers. The warps' slots in this CTA are reused before that
    // wait, so a CTA barrier orders them.
    armClusterBarriers(/*initialise=*/false);
    if (warpsPerRow > 1 || config.staged())
      target.barrier();
    ClusterArriveOp::create(b, loc, /*relaxed=*/false);
    clusterWaitPending = true;
  } else if (sharedBytes > 0 || config.staged()) {
    // (With bulk copies, the next iteration's copy overwrites a buffer
    // this one read.)
    target.barrier();
  }
  SmallVector<Value> yields(partials);
  llvm::append_range(yields, nextInputs);
  if (config.staged())
    yields.push_back(
        arith::AddIOp::create(b, loc, bulkIteration, constI32(1)));
  if (config.clusterSize > 1)
    yields.push_back(arith::XOrIOp::create(b, loc, clusterParity, constI32(1)));
  scf::YieldOp::create(b, loc, yields);
  b.setInsertionPointAfter(rowLoop);
  // With S buffers, the last S - 1 fills (row groups past M: no bytes,
  // their phases complete at the arm) are waited on after the loop, so that
  // every fill is followed by its wait (quack-verify-staging checks it):
  // fill k went to buffer k % S, phase k / S, and the loop waited on fills
  // 0 .. n - 1.
  if (config.staged() && bulkStages > 1) {
    Type i64 = b.getI64Type();
    Value waited = rowLoop.getResult(partials.size() + nextInputs.size());
    for (int64_t j = 0; j + 1 < bulkStages; ++j) {
      Value k = arith::AddIOp::create(b, loc, waited, constI32(j));
      Value stage = arith::RemUIOp::create(
          b, loc, arith::ExtUIOp::create(b, loc, i64, k),
          constI64(bulkStages));
      Value parity = arith::AndIOp::create(
          b, loc,
          arith::DivUIOp::create(b, loc, k, constI32(bulkStages)),
          constI32(1));
      StageWaitOp::create(b, loc, bulkSymbol(),
                          arith::MulIOp::create(b, loc, stage, constI64(8)),
                          parity);
    }
  }
  // The wait matching the last iteration's arrive (or, when the loop runs
  // no iteration, the preamble's).
  if (clusterRounds) {
    clusterWaitPending = true;
    waitForClusterInit();
  }
  if (rowSums.empty())
    return;

  if (combineRowSums) {
    writeCombinedRowSums();
    return;
  }
  // Partial sums of row slot p = group * rowsPerCta + rowInCta, where the
  // grid holds `groups` row groups at a time: workspace[sum][p][column].
  Type f32 = b.getF32Type();
  Value slots = arith::MulIOp::create(b, loc, gridRowGroups,
                                      constI64(config.rowsPerCta));
  Value slot = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, firstRowGroup, constI64(config.rowsPerCta)),
      rowPart);
  unsigned alignment = std::min<unsigned>(16, 4 * config.vector);
  for (size_t j = 0; j < rowSums.size(); ++j) {
    Value index = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, constI64(j), slots), slot);
    Value base = arith::MulIOp::create(b, loc, index, constI64(rowLength));
    for (int64_t k = 0; k < config.vectorsPerThread; ++k) {
      Value offset = arith::AddIOp::create(b, loc, base, vectorColumn(k));
      if (!inSharedMemory(j)) {
        Value address = LLVM::GEPOp::create(b, loc, workspace.getType(), f32,
                                            workspace, ValueRange{offset});
        predicatedStore(vectorInBounds(k),
                        rowLoop.getResult(j * config.vectorsPerThread + k),
                        address, alignment);
        continue;
      }
      Type chunkType = VectorType::get({sumChunk}, f32);
      for (int64_t c = 0; c < config.vector / sumChunk; ++c) {
        Value at = arith::AddIOp::create(b, loc, offset,
                                         constI64(c * sumChunk));
        Value address = LLVM::GEPOp::create(b, loc, workspace.getType(), f32,
                                            workspace, ValueRange{at});
        Value sum = predicatedLoad(Value(), chunkType, sumSlot(j, k, c),
                                   4 * sumChunk);
        predicatedStore(vectorInBounds(k), sum, address,
                        std::min<unsigned>(16, 4 * sumChunk));
      }
    }
  }
}

void RowKernelLowering::buildFinishKernel() {
  MLIRContext *ctx = kernel.getContext();
  OpBuilder::InsertionGuard guard(b);
  Type ptrType = LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1);
  Type smemPtr = LLVM::LLVMPointerType::get(ctx, NVVMTargetInfo::kShared);
  Type i32 = b.getI32Type();
  Type i64 = b.getI64Type();
  Type f32 = b.getF32Type();
  // A CTA owns kFinishLanes * width consecutive columns of one output and
  // kFinishSplits row slots at a time; width follows the main kernel's
  // vector, whose alignment the runtime has checked.
  const int64_t width = std::min<int64_t>(4, config.vector);
  const int64_t columns = kFinishLanes * width;
  const int64_t threads = kFinishLanes * kFinishSplits;
  SmallVector<Type> inputs = {i64, ptrType};
  inputs.append(rowSums.size(), ptrType);

  std::string name = (kernel.getSymName() + "_finish").str();
  b.setInsertionPointToStart(gpuModule.getBody());
  auto smemType = LLVM::LLVMArrayType::get(f32, kFinishSplits * columns);
  auto smemGlobal = LLVM::GlobalOp::create(
      b, loc, smemType, /*isConstant=*/false, LLVM::Linkage::Internal,
      "__quack_smem_" + name, Attribute(), /*alignment=*/16,
      /*addrSpace=*/NVVMTargetInfo::kShared);
  b.setInsertionPointToEnd(gpuModule.getBody());
  auto finish =
      gpu::GPUFuncOp::create(b, loc, name, b.getFunctionType(inputs, {}));
  finish->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  finish.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  func->setAttr("quack.finish",
                b.getDictionaryAttr(
                    {b.getNamedAttr("symbol", b.getStringAttr(name)),
                     b.getNamedAttr("threads", b.getI64IntegerAttr(threads)),
                     b.getNamedAttr("columns_per_cta",
                                    b.getI64IntegerAttr(columns))}));

  Block &entry = finish.getBody().front();
  b.setInsertionPointToStart(&entry);
  // The runtime passes row groups x rowsPerCta slots (docs/abi.md); where
  // the main kernel combined its rows, it wrote one slot per row group.
  Value slots = entry.getArgument(0);
  if (combineRowSums)
    slots = arith::DivUIOp::create(b, loc, slots,
                                   constI64(config.rowsPerCta));
  Value ws = entry.getArgument(1);
  Value t = NVVM::ThreadIdXOp::create(b, loc, i32);
  Value bx = arith::ExtUIOp::create(b, loc, i64,
                                    NVVM::BlockIdXOp::create(b, loc, i32));
  Value by = NVVM::BlockIdYOp::create(b, loc, i32);
  Value lane = arith::AndIOp::create(b, loc, t, constI32(kFinishLanes - 1));
  Value split = arith::DivUIOp::create(b, loc, t, constI32(kFinishLanes));
  Value lane64 = arith::ExtUIOp::create(b, loc, i64, lane);
  Value split64 = arith::ExtUIOp::create(b, loc, i64, split);
  Value column = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bx, constI64(columns)),
      arith::MulIOp::create(b, loc, lane64, constI64(width)));
  Value inBounds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         column, constI64(rowLength));
  // Output `by` of the finish grid's y dimension.
  Value outputIndex = arith::ExtUIOp::create(b, loc, i64, by);
  Value plane = arith::MulIOp::create(b, loc, outputIndex, slots);

  // Each thread sums slots split, split + S, split + 2S, ... in that order,
  // loading kFinishUnroll of them before adding any.
  VectorType vecType = VectorType::get({width}, f32);
  Value zero =
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecType, 0.0f));
  auto loop = scf::ForOp::create(b, loc, split64, slots,
                                 constI64(kFinishSplits * kFinishUnroll),
                                 ValueRange{zero});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value acc = loop.getRegionIterArgs()[0];
    SmallVector<Value> loaded;
    for (int64_t u = 0; u < kFinishUnroll; ++u) {
      Value p = arith::AddIOp::create(b, loc, loop.getInductionVar(),
                                      constI64(u * kFinishSplits));
      Value valid = arith::AndIOp::create(
          b, loc, inBounds,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, p, slots));
      Value offset = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc,
                                arith::AddIOp::create(b, loc, plane, p),
                                constI64(rowLength)),
          column);
      Value address =
          LLVM::GEPOp::create(b, loc, ptrType, f32, ws, ValueRange{offset});
      loaded.push_back(predicatedLoad(valid, vecType, address, 4 * width));
    }
    for (Value v : loaded)
      acc = arith::AddFOp::create(b, loc, acc, v);
    scf::YieldOp::create(b, loc, acc);
  }

  // The splits' sums meet in shared memory; lane threads of split 0 add
  // them in split order, round once and store.
  NVVMTargetInfo target(b, loc);
  Value smem = LLVM::AddressOfOp::create(b, loc, smemGlobal);
  Value mine = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, split, constI32(columns)),
      arith::MulIOp::create(b, loc, lane, constI32(width)));
  LLVM::StoreOp::create(
      b, loc, loop.getResult(0),
      LLVM::GEPOp::create(b, loc, smemPtr, f32, smem, ValueRange{mine}),
      4 * width);
  target.barrier();
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, split,
                                      constI32(0));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{},
                                arith::AndIOp::create(b, loc, first, inBounds),
                                /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value sum;
  for (int64_t sIndex = 0; sIndex < kFinishSplits; ++sIndex) {
    Value index = arith::AddIOp::create(
        b, loc, constI32(sIndex * columns),
        arith::MulIOp::create(b, loc, lane, constI32(width)));
    Value part = LLVM::LoadOp::create(
        b, loc, vecType,
        LLVM::GEPOp::create(b, loc, smemPtr, f32, smem, ValueRange{index}),
        4 * width);
    sum = sum ? Value(arith::AddFOp::create(b, loc, sum, part)) : part;
  }
  // Output `by` takes the sum, in its own element type.
  for (auto [j, op] : llvm::enumerate(rowSums)) {
    Type elt = cast<MemRefType>(op.getDest().getType()).getElementType();
    Value store = sum;
    if (elt != f32)
      store = arith::TruncFOp::create(b, loc, VectorType::get({width}, elt),
                                      sum);
    unsigned bytes = elt.getIntOrFloatBitWidth() / 8;
    Value address = LLVM::GEPOp::create(b, loc, ptrType, elt,
                                        entry.getArgument(2 + j),
                                        ValueRange{column});
    Value isJ = rowSums.size() == 1
                    ? Value()
                    : Value(arith::CmpIOp::create(
                          b, loc, arith::CmpIPredicate::eq, by,
                          constI32(j)));
    predicatedStore(isJ, store, address, bytes * width);
  }
  b.setInsertionPointAfter(ifOp);
  gpu::ReturnOp::create(b, loc);
}

void RowKernelLowering::writeCombinedRowSums() {
  Type f32 = b.getF32Type();
  VectorType vecType = fragmentType(f32);
  Type smemPtr =
      LLVM::LLVMPointerType::get(b.getContext(), NVVMTargetInfo::kShared);
  Value smem = LLVM::AddressOfOp::create(b, loc, rowSumsGlobal);
  unsigned alignment = std::min<unsigned>(16, 4 * config.vector);
  auto smemAt = [&](Value rowOffset, int64_t k) {
    Value index = arith::AddIOp::create(b, loc, rowOffset, vectorColumn(k));
    return LLVM::GEPOp::create(b, loc, smemPtr, f32, smem, ValueRange{index});
  };
  NVVMTargetInfo target(b, loc);
  Value mine = arith::MulIOp::create(b, loc, rowPart, constI64(rowSumColumns));
  Value firstRow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         rowPart, constI64(0));
  for (size_t j = 0; j < rowSums.size(); ++j) {
    // Row 0's threads have read the previous sum's partials.
    if (j > 0)
      target.barrier();
    for (int64_t k = 0; k < config.vectorsPerThread; ++k)
      LLVM::StoreOp::create(b, loc,
                            rowLoop.getResult(j * config.vectorsPerThread + k),
                            smemAt(mine, k), alignment);
    target.barrier();
    // Row 0's threads add the rows in row order (the same order in every
    // CTA and every run) and write slot `group` of sum j:
    // workspace[j][group][column], groups slots per sum.
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, firstRow,
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value index = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, constI64(j), gridRowGroups),
        firstRowGroup);
    Value base = arith::MulIOp::create(b, loc, index, constI64(rowLength));
    for (int64_t k = 0; k < config.vectorsPerThread; ++k) {
      Value sum;
      for (int64_t r = 0; r < config.rowsPerCta; ++r) {
        Value part = LLVM::LoadOp::create(
            b, loc, vecType, smemAt(constI64(r * rowSumColumns), k),
            alignment);
        sum = sum ? Value(arith::AddFOp::create(b, loc, sum, part)) : part;
      }
      Value offset = arith::AddIOp::create(b, loc, base, vectorColumn(k));
      Value address = LLVM::GEPOp::create(b, loc, workspace.getType(), f32,
                                          workspace, ValueRange{offset});
      predicatedStore(vectorInBounds(k), sum, address, alignment);
    }
  }
}

LogicalResult RowKernelLowering::lowerSumRows(SumRowsOp op) {
  const SmallVector<Value> *frags = rowFragments(op.getValue());
  if (!frags)
    return op.emitOpError("sums a row the lowering has not seen");
  size_t j = llvm::find(rowSums, op) - rowSums.begin();
  // Rows past M contribute nothing (their loads read zeros, but the
  // expression of a zero row need not be zero).
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(fragmentType(b.getF32Type()), 0.0f));
  for (int64_t k = 0; k < config.vectorsPerThread; ++k) {
    Value term =
        arith::SelectOp::create(b, loc, rowValid, (*frags)[k], zero);
    if (!inSharedMemory(j)) {
      Value &acc = partials[j * config.vectorsPerThread + k];
      acc = arith::AddFOp::create(b, loc, acc, term);
      continue;
    }
    Type chunkType = VectorType::get({sumChunk}, b.getF32Type());
    for (int64_t c = 0; c < config.vector / sumChunk; ++c) {
      Value slot = sumSlot(j, k, c);
      Value sum = arith::AddFOp::create(
          b, loc, predicatedLoad(Value(), chunkType, slot, 4 * sumChunk),
          sumChunkOf(term, c));
      predicatedStore(Value(), sum, slot, 4 * sumChunk);
    }
  }
  return success();
}

void RowKernelLowering::armClusterBarriers(bool initialise) {
  SmallVector<int64_t> offsets, bytes;
  for (int64_t r = 0; r < reductionRounds; ++r) {
    offsets.push_back(clusterBarrierOffset + 8 * r);
    bytes.push_back(4 * roundWidths[r] * config.clusterSize);
  }
  auto smem = FlatSymbolRefAttr::get(sharedGlobal.getSymNameAttr());
  DenseI64ArrayAttr offsetsAttr = b.getDenseI64ArrayAttr(offsets);
  DenseI64ArrayAttr bytesAttr = b.getDenseI64ArrayAttr(bytes);
  if (initialise)
    ClusterBarrierInitOp::create(b, loc, smem, offsetsAttr, bytesAttr);
  else
    ClusterBarrierArmOp::create(b, loc, smem, offsetsAttr, bytesAttr);
}

void RowKernelLowering::initClusterBarriers() {
  // Each round's phase 0 completes when every CTA of the cluster (this one
  // included) has stored its partials: clusterSize * 4 bytes per value.
  armClusterBarriers(/*initialise=*/true);
  // Relaxed: the fence orders the inits before the arrive. The arms need
  // no such order: a peer's bytes that land before this CTA's expected
  // count only make the transaction count negative for a while, and the
  // phase cannot complete before this CTA's own arrival, which comes with
  // the arm. (A release arrive here cost the cluster softmax 5-7% on the
  // H200, 2026-12-04: the row's loads wait behind it.)
  ClusterArriveOp::create(b, loc, /*relaxed=*/true);
  clusterWaitPending = true;
}

void RowKernelLowering::waitForClusterInit() {
  if (!clusterWaitPending)
    return;
  ClusterWaitOp::create(b, loc);
  clusterWaitPending = false;
  // Every gather is issued and no row is written yet: arrive now for the
  // barrier before the first matrix store (see run()).
  if (hasGathers && firstMatrixStore && gathersLeft == 0 && !gathersArrived &&
      !firstStoreLowered) {
    ClusterArriveOp::create(b, loc, /*relaxed=*/false);
    gathersArrived = true;
  }
}

LogicalResult RowKernelLowering::allocateBulkBuffers() {
  int64_t bytes = 0;
  if (config.staged()) {
    FailureOr<int64_t> staged = allocateStagingBuffers();
    if (failed(staged))
      return failure();
    bytes = *staged;
  }
  if (sharedSums) {
    sumsOffset = llvm::alignTo(bytes, 128);
    bytes = sumsOffset + config.sharedSumBytes(rowSums.size());
    assert(config.sharedSumBytes(rowSums.size()) ==
               static_cast<int64_t>(rowSums.size() - firstSharedSum) *
                   config.ctaThreads() * config.vectorsPerThread *
                   config.vector * 4 &&
           "shared sums and their slots disagree");
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(gpuModule.getBody());
  // Dynamic shared memory: a declaration of no size, the bytes given at
  // launch (the metadata's shared_bytes.dynamic).
  auto arrayType = LLVM::LLVMArrayType::get(b.getI8Type(), 0);
  bulkGlobal = LLVM::GlobalOp::create(
      b, loc, arrayType, /*isConstant=*/false, LLVM::Linkage::External,
      ("__quack_bulk_" + kernel.getSymName()).str(), Attribute(),
      /*alignment=*/128, /*addrSpace=*/NVVMTargetInfo::kShared);
  func->setAttr("quack.dynamic_shared_bytes", b.getI64IntegerAttr(bytes));
  dynamicSharedBytes = bytes;
  return success();
}

FailureOr<int64_t> RowKernelLowering::allocateStagingBuffers() {
  BulkBufferLayout layout = getBulkBufferLayout(kernel, config);
  colsPerCta = layout.colsPerCta;
  if (colsPerCta != partition->colsPerCta)
    return kernel.emitOpError("copy=bulk: the config gives each CTA ")
           << colsPerCta << " columns, its thread-value layout "
           << partition->colsPerCta
           << " (vectors_per_thread must be the fewest that cover N)";
  for (auto [index, load] : llvm::enumerate(layout.loads)) {
    FailureOr<LoweredArg> arg =
        argFor(cast<LoadOp>(load).getSource(), load);
    if (failed(arg))
      continue; // lowerLoad reports it.
    StagedInput input;
    input.arg = *arg;
    input.offset = layout.offsets[index];
    input.elementBytes = layout.elementBytes[index];
    if (config.copy == KernelConfig::Copy::Tensor) {
      input.box = layout.tensorBoxes[index];
      if (input.box.inner == 0)
        return kernel.emitOpError("copy=tensor: no box for a slice of ")
               << colsPerCta << " columns of " << config.rowsPerCta
               << " row(s) of " << input.elementBytes << "-byte elements";
      input.tensorMap = tensorMapArgs[stagedInputs.size()];
    }
    stagedInputOf[load] = stagedInputs.size();
    stagedInputs.push_back(input);
  }
  bulkStageBytes = layout.bufferBytes;
  bulkStages = looping && config.prefetch ? config.stages : 1;
  return layout.totalBytes(bulkStages);
}

Value RowKernelLowering::sumSlot(int64_t j, int64_t k, int64_t c) {
  const int64_t chunks = config.vector / sumChunk;
  const int64_t chunkBytes = 4 * sumChunk;
  const int64_t slot =
      (((j - firstSharedSum) * config.vectorsPerThread + k) * chunks + c) *
      config.ctaThreads();
  Value thread = arith::MulIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), tid),
      constI64(chunkBytes));
  return bulkAddress(sumsOffset + slot * chunkBytes, thread);
}

Value RowKernelLowering::sumChunkOf(Value fragment, int64_t c) {
  if (sumChunk == config.vector)
    return fragment;
  SmallVector<int64_t> lanes;
  for (int64_t i = 0; i < sumChunk; ++i)
    lanes.push_back(c * sumChunk + i);
  return vector::ShuffleOp::create(b, loc, fragment, fragment, lanes);
}

Value RowKernelLowering::bulkAddress(int64_t offset, Value dynamicOffset) {
  Type ptr = LLVM::LLVMPointerType::get(b.getContext(),
                                        NVVMTargetInfo::kShared);
  Value base = LLVM::AddressOfOp::create(b, loc, ptr, bulkGlobal.getSymName());
  Value index = constI64(offset);
  if (dynamicOffset)
    index = arith::AddIOp::create(b, loc, dynamicOffset, index);
  return LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), base,
                             ValueRange{index});
}

void RowKernelLowering::initBulkBarriers() {
  SmallVector<int64_t> barriers;
  for (int64_t st = 0; st < bulkStages; ++st)
    barriers.push_back(8 * st);
  StageInitOp::create(b, loc, bulkSymbol(),
                      b.getDenseI64ArrayAttr(barriers));
}

Value RowKernelLowering::columnsFrom(Value start) {
  Value left = arith::SubIOp::create(b, loc, constI64(rowLength), start);
  return arith::MaxSIOp::create(b, loc, left, constI64(0));
}

Value RowKernelLowering::beginFill(Value barrier, Value bytes) {
  auto fill = StageFillOp::create(
      b, loc, bulkSymbol(), barrier,
      arith::TruncIOp::create(b, loc, b.getI32Type(), bytes));
  b.setInsertionPointToStart(&fill.getBody().front());
  return fill.getBarrierAddress();
}

FlatSymbolRefAttr RowKernelLowering::bulkSymbol() {
  return FlatSymbolRefAttr::get(bulkGlobal.getSymNameAttr());
}

void RowKernelLowering::issueBulkCopies(Value stage, Value group) {
  Type i32 = b.getI32Type();
  // This CTA's slice of the row: [start, start + columns).
  Value start = constI64(0);
  if (config.clusterSize > 1) {
    Value rank64 = arith::ExtUIOp::create(b, loc, b.getI64Type(), clusterRank);
    start = arith::MulIOp::create(b, loc, rank64, constI64(colsPerCta));
  }
  Value firstRow =
      arith::MulIOp::create(b, loc, group, constI64(config.rowsPerCta));
  Value barrier = arith::MulIOp::create(b, loc, stage, constI64(8));
  if (config.copy == KernelConfig::Copy::Tensor) {
    issueTensorCopies(stage, barrier, start, firstRow);
    return;
  }
  Value columns = constI64(std::min(colsPerCta, rowLength));
  bool mayBeEmpty = false;
  if (config.clusterSize > 1) {
    columns = arith::MinSIOp::create(b, loc, columnsFrom(start),
                                     constI64(colsPerCta));
    mayBeEmpty = colsPerCta * config.clusterSize > rowLength;
  }
  int64_t bytesPerColumn = 0;
  for (const StagedInput &input : stagedInputs)
    bytesPerColumn += input.elementBytes;
  Value rowBytes =
      arith::MulIOp::create(b, loc, columns, constI64(bytesPerColumn));
  SmallVector<Value> rows, valid;
  Value total = constI64(0);
  for (int64_t r = 0; r < config.rowsPerCta; ++r) {
    Value rowIndex = r ? arith::AddIOp::create(b, loc, firstRow, constI64(r))
                       : firstRow;
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                          rowIndex, numRows);
    rows.push_back(rowIndex);
    valid.push_back(inRange);
    total = arith::AddIOp::create(
        b, loc, total,
        arith::SelectOp::create(b, loc, inRange, rowBytes, constI64(0)));
  }
  Value stageOffset =
      arith::MulIOp::create(b, loc, stage, constI64(bulkStageBytes));
  // Thread 0 arms the stage's mbarrier for the bytes of the rows inside M
  // and copies each such row's slice of every staged input.
  OpBuilder::InsertionGuard guard(b);
  Value bar = beginFill(barrier, total);
  for (int64_t r = 0; r < config.rowsPerCta; ++r) {
    Value predicate = valid[r];
    if (mayBeEmpty)
      predicate = arith::AndIOp::create(
          b, loc, predicate,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, columns,
                                constI64(0)));
    auto rowIf = scf::IfOp::create(b, loc, TypeRange{}, predicate,
                                   /*withElseRegion=*/false);
    OpBuilder::InsertionGuard rowGuard(b);
    b.setInsertionPointToStart(rowIf.thenBlock());
    for (const StagedInput &input : stagedInputs) {
      const LoweredArg &arg = input.arg;
      Value element = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, rows[r], arg.rowStride),
          start);
      Value src = LLVM::GEPOp::create(b, loc, arg.pointer.getType(),
                                      arg.elementType, arg.pointer,
                                      ValueRange{element});
      Value dst = bulkAddress(kBulkBuffersOffset + input.offset +
                                  r * colsPerCta * input.elementBytes,
                              stageOffset);
      Value bytes = arith::TruncIOp::create(
          b, loc, i32,
          arith::MulIOp::create(b, loc, columns,
                                constI64(input.elementBytes)));
      asyncCopy(CopyAtom::Bulk, {dst, src, bytes, bar});
    }
  }
}

void RowKernelLowering::issueTensorCopies(Value stage, Value barrier,
                                          Value start, Value firstRow) {
  Type i32 = b.getI32Type();
  // The map sees the matrix as [M, N / inner, inner]; a box spans
  // inner * groups columns of each of the CTA's rows. The copy engine fills
  // what lies past N or M with zeros and counts those bytes too, so every
  // box issued brings its full size. Boxes are issued only for row groups
  // that start inside M and for columns that start inside N (the slices of
  // a cluster's last CTAs may lie past N): per input, the first `count`
  // boxes of the slice, one where the slice is one box and in a loop
  // otherwise, so that the code stays small however many boxes it takes.
  Value groupValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                           firstRow, numRows);
  SmallVector<Value> counts;
  Value total = constI64(0);
  for (const StagedInput &input : stagedInputs) {
    int64_t boxColumns = input.box.columns();
    int64_t perSlice = colsPerCta / boxColumns;
    Value count;
    if (config.clusterSize > 1) {
      Value left = columnsFrom(start);
      count = arith::DivUIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, left, constI64(boxColumns - 1)),
          constI64(boxColumns));
      count = arith::MinSIOp::create(b, loc, count, constI64(perSlice));
    } else {
      count = constI64(std::min(
          perSlice, static_cast<int64_t>(
                        llvm::divideCeil(rowLength, boxColumns))));
    }
    counts.push_back(count);
    int64_t boxBytes = boxColumns * config.rowsPerCta * input.elementBytes;
    total = arith::AddIOp::create(
        b, loc, total,
        arith::MulIOp::create(b, loc, count, constI64(boxBytes)));
  }
  total = arith::SelectOp::create(b, loc, groupValid, total, constI64(0));
  Value stageOffset =
      arith::MulIOp::create(b, loc, stage, constI64(bulkStageBytes));
  Value firstRow32 = arith::TruncIOp::create(b, loc, i32, firstRow);
  OpBuilder::InsertionGuard guard(b);
  Value bar = beginFill(barrier, total);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, groupValid,
                                /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  for (auto [input, count] : llvm::zip(stagedInputs, counts)) {
    OpBuilder::InsertionGuard loopGuard(b);
    Value j = constI64(0);
    if (input.box.columns() == colsPerCta) {
      // One box per slice: issued where it starts inside N.
      Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                        count, constI64(0));
      auto one = scf::IfOp::create(b, loc, TypeRange{}, any,
                                   /*withElseRegion=*/false);
      b.setInsertionPointToStart(one.thenBlock());
    } else {
      auto loop = scf::ForOp::create(b, loc, constI64(0), count, constI64(1));
      b.setInsertionPointToStart(loop.getBody());
      j = loop.getInductionVar();
    }
    Value column =
        arith::MulIOp::create(b, loc, j, constI64(input.box.columns()));
    // The box's first group of `inner` columns: the map's middle coordinate.
    Value group32 = arith::TruncIOp::create(
        b, loc, i32,
        arith::DivUIOp::create(b, loc,
                               arith::AddIOp::create(b, loc, start, column),
                               constI64(input.box.inner)));
    // Box j lands at j * (box bytes) in the input's buffer.
    Value dst = bulkAddress(
        kBulkBuffersOffset + input.offset,
        arith::AddIOp::create(
            b, loc, stageOffset,
            arith::MulIOp::create(b, loc, column,
                                  constI64(config.rowsPerCta *
                                           input.elementBytes))));
    asyncCopy(CopyAtom::Tensor,
              {dst, input.tensorMap, constI32(0), group32, firstRow32, bar});
  }
}

void RowKernelLowering::waitBulkCopies(Value stage, Value parity) {
  StageWaitOp::create(b, loc, bulkSymbol(),
                      arith::MulIOp::create(b, loc, stage, constI64(8)),
                      parity);
  bulkReadOffset = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, stage, constI64(bulkStageBytes)),
      constI64(kBulkBuffersOffset));
  // Rows read in an earlier iteration are read again from this buffer.
  for (auto &entry : stagedRows)
    entry.second.phase = -1;
}

const SmallVector<Value> *RowKernelLowering::stagedFragments(Value v) {
  StagedRow &row = stagedRows.find(v)->second;
  if (row.phase == phase)
    return &row.frags;
  const StagedInput &input = stagedInputs[row.input];
  Type eltType = input.arg.elementType;
  VectorType packedType = fragmentType(eltType);
  unsigned alignment = input.elementBytes * config.vector;
  // This thread's row of the buffer, and its first column in the CTA's
  // slice. Tensor copies land in boxes of W columns x rows: column c of
  // row r sits at element ((c / W) * rows + r) * W + c % W.
  int64_t boxColumns = input.box.inner ? input.box.columns() : colsPerCta;
  bool boxed = boxColumns != colsPerCta && config.rowsPerCta > 1;
  Value base = arith::AddIOp::create(
      b, loc, bulkReadOffset,
      arith::MulIOp::create(b, loc, rowPart,
                            constI64(boxColumns * input.elementBytes)));
  Value sliceStart = constI64(0);
  if (config.clusterSize > 1)
    sliceStart = arith::MulIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, b.getI64Type(), clusterRank),
        constI64(colsPerCta));
  row.frags.clear();
  for (int64_t k = 0; k < config.vectorsPerThread; ++k) {
    Value column = arith::SubIOp::create(b, loc, vectorColumn(k), sliceStart);
    if (boxed) {
      Value box = arith::DivUIOp::create(b, loc, column, constI64(boxColumns));
      Value within =
          arith::RemUIOp::create(b, loc, column, constI64(boxColumns));
      column = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, box,
                                constI64(boxColumns * config.rowsPerCta)),
          within);
    }
    Value offset = arith::AddIOp::create(
        b, loc, base,
        arith::MulIOp::create(b, loc, column, constI64(input.elementBytes)));
    Value address = bulkAddress(input.offset, offset);
    Value frag = predicatedLoad(andPredicates(rowValid, vectorInBounds(k)),
                                packedType, address, alignment);
    if (row.widen)
      frag = arith::ExtFOp::create(b, loc, fragmentType(b.getF32Type()), frag);
    row.frags.push_back(frag);
  }
  row.phase = phase;
  return &row.frags;
}

LogicalResult RowKernelLowering::allocateSharedMemory() {
  // One exchange slot per reduction that spans several warps, so that no
  // reduction ever overwrites a slot another thread may still read; in a
  // cluster, one mbarrier and one slot per CTA of the cluster per reduction.
  int64_t warpsPerRow = config.threadsPerRow / kWarpSize;
  bool previousReduces = false;
  for (Operation &op : kernel.getBody().front()) {
    int64_t width = getExchangedValues(&op);
    if (width && previousReduces)
      roundWidths.back() += width;
    else if (width)
      roundWidths.push_back(width);
    previousReduces = width != 0;
  }
  reductionRounds = roundWidths.size();
  int64_t values = 0;
  for (int64_t width : roundWidths)
    values += width;
  if (values == 0)
    return success();
  if (config.clusterSize > 1) {
    clusterBarrierOffset = 0;
    sharedCursor = 8 * reductionRounds;
  }
  if (warpsPerRow > 1)
    sharedBytes = sharedCursor + values * config.rowsPerCta * warpsPerRow * 4;
  else
    sharedBytes = sharedCursor;
  if (config.clusterSize > 1) {
    clusterSlotOffset = sharedBytes;
    clusterSlotCursor = clusterSlotOffset;
    sharedBytes += values * config.clusterSize * 4;
  }
  if (sharedBytes == 0)
    return success();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(gpuModule.getBody());
  auto arrayType = LLVM::LLVMArrayType::get(b.getI8Type(), sharedBytes);
  sharedGlobal = LLVM::GlobalOp::create(
      b, loc, arrayType, /*isConstant=*/false, LLVM::Linkage::Internal,
      ("__quack_smem_" + kernel.getSymName()).str(), Attribute(),
      /*alignment=*/16, /*addrSpace=*/3);
  return success();
}

/// Column offset of value `k * vector` of thread 0: the k-th vector's place
/// in the row (its row part is zero by construction).
static int64_t valueColumn(const ::quack::layout::RowTVLayout &tv,
                           int64_t vector, int64_t k) {
  return tv(0, k * vector) % tv.tileCols;
}

Value RowKernelLowering::vectorColumn(int64_t k) {
  int64_t offset = valueColumn(*partition, config.vector, k);
  if (offset == 0)
    return threadColumn;
  return arith::AddIOp::create(b, loc, threadColumn, constI64(offset));
}

Value RowKernelLowering::vectorInBounds(int64_t k) {
  int64_t last = valueColumn(*partition, config.vector, k) + maxThreadColumn;
  if (last + config.vector <= rowLength)
    return {};
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                               vectorColumn(k), constI64(rowLength));
}

void RowKernelLowering::allocateRowSumBuffer() {
  if (rowSums.empty() || sharedSums || config.rowsPerCta == 1 ||
      config.clusterSize != 1)
    return;
  // Columns up to the end of every thread's last vector (past N where the
  // row's last vectors are partly or wholly outside it).
  rowSumColumns = 0;
  for (int64_t k = 0; k < config.vectorsPerThread; ++k)
    rowSumColumns = std::max(rowSumColumns,
                             valueColumn(*partition, config.vector, k) +
                                 maxThreadColumn + config.vector);
  int64_t bytes = config.rowsPerCta * rowSumColumns * 4;
  if (bytes > kMaxCombinedRowSumBytes ||
      dynamicSharedBytes + sharedBytes + bytes > kMaxSharedBytesPerCta)
    return;
  combineRowSums = true;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(gpuModule.getBody());
  auto arrayType = LLVM::LLVMArrayType::get(b.getF32Type(),
                                            config.rowsPerCta * rowSumColumns);
  rowSumsGlobal = LLVM::GlobalOp::create(
      b, loc, arrayType, /*isConstant=*/false, LLVM::Linkage::Internal,
      ("__quack_rowsums_" + kernel.getSymName()).str(), Attribute(),
      /*alignment=*/16, /*addrSpace=*/NVVMTargetInfo::kShared);
}

Value RowKernelLowering::andPredicates(Value a, Value c) {
  if (!a)
    return c;
  if (!c)
    return a;
  return arith::AndIOp::create(b, loc, a, c);
}

Value RowKernelLowering::vectorAddress(const LoweredArg &arg, int64_t k) {
  Type ptrType = arg.pointer.getType();
  Value offset = vectorColumn(k);
  if (arg.kind == ArgKind::Matrix) {
    Value rowOffset = arith::MulIOp::create(b, loc, row, arg.rowStride);
    offset = arith::AddIOp::create(b, loc, rowOffset, offset);
  }
  return LLVM::GEPOp::create(b, loc, ptrType, arg.elementType, arg.pointer,
                             ValueRange{offset});
}

Value RowKernelLowering::perRowAddress(const LoweredArg &arg) {
  return LLVM::GEPOp::create(b, loc, arg.pointer.getType(), arg.elementType,
                             arg.pointer, ValueRange{row});
}

Value RowKernelLowering::predicatedLoad(Value predicate, Type type,
                                        Value address, unsigned alignment) {
  return CopyOp::create(b, loc, type,
                        CopyAtomAttr::get(b.getContext(), CopyAtom::Vector),
                        ValueRange{address}, predicate,
                        b.getI64IntegerAttr(alignment))
      .getResult();
}

void RowKernelLowering::predicatedStore(Value predicate, Value value,
                                        Value address, unsigned alignment) {
  CopyOp::create(b, loc, Type(),
                 CopyAtomAttr::get(b.getContext(), CopyAtom::Vector),
                 ValueRange{value, address}, predicate,
                 b.getI64IntegerAttr(alignment));
}

void RowKernelLowering::asyncCopy(CopyAtom atom, ValueRange operands) {
  CopyOp::create(b, loc, Type(), CopyAtomAttr::get(b.getContext(), atom),
                 operands, Value(), IntegerAttr());
}

FailureOr<LoweredArg> RowKernelLowering::argFor(Value memref,
                                                Operation *user) {
  auto arg = dyn_cast<BlockArgument>(memref);
  if (!arg || arg.getOwner()->getParentOp() != kernel.getOperation())
    return user->emitOpError("operand must be an argument of the kernel");
  return args[arg.getArgNumber()];
}

LogicalResult RowKernelLowering::lowerLoad(LoadOp op) {
  FailureOr<LoweredArg> arg = argFor(op.getSource(), op);
  if (failed(arg))
    return failure();
  unsigned eltBytes =
      llvm::divideCeil(arg->elementType.getIntOrFloatBitWidth(), 8);
  if (arg->kind == ArgKind::PerRow) {
    Value v = predicatedLoad(rowValid, arg->elementType, perRowAddress(*arg),
                             eltBytes);
    scalars.map(op.getResult(), v);
    return success();
  }
  auto staged = stagedInputOf.find(op.getOperation());
  if (staged != stagedInputOf.end()) {
    StagedRow row;
    row.input = staged->second;
    stagedRows[op.getResult()] = std::move(row);
    return success();
  }
  VectorType fragType = fragmentType(arg->elementType);
  unsigned alignment = eltBytes * config.vector;
  SmallVector<Value> frags;
  for (int64_t k = 0; k < config.vectorsPerThread; ++k) {
    Value predicate = vectorInBounds(k);
    if (arg->kind == ArgKind::Matrix)
      predicate = andPredicates(rowValid, predicate);
    frags.push_back(predicatedLoad(predicate, fragType,
                                   vectorAddress(*arg, k), alignment));
  }
  fragments[op.getResult()] = std::move(frags);
  return success();
}

LogicalResult RowKernelLowering::lowerStore(StoreOp op) {
  FailureOr<LoweredArg> arg = argFor(op.getDest(), op);
  if (failed(arg))
    return failure();
  unsigned eltBytes =
      llvm::divideCeil(arg->elementType.getIntOrFloatBitWidth(), 8);
  if (arg->kind == ArgKind::PerRow) {
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        tidInRow, constI32(0));
    Value value = scalars.lookupOrNull(op.getValue());
    if (!value)
      return op.emitOpError("stores a value the lowering has not seen");
    predicatedStore(andPredicates(rowValid, first), value,
                    perRowAddress(*arg), eltBytes);
    return success();
  }
  const SmallVector<Value> *frags = rowFragments(op.getValue());
  if (!frags)
    return op.emitOpError("stores a row the lowering has not seen");
  unsigned alignment = eltBytes * config.vector;
  for (int64_t k = 0; k < config.vectorsPerThread; ++k)
    predicatedStore(andPredicates(rowValid, vectorInBounds(k)),
                    (*frags)[k], vectorAddress(*arg, k), alignment);
  return success();
}

FailureOr<Value> RowKernelLowering::identity(CombiningKind kind, Type type) {
  TypedAttr attr;
  if (auto floatType = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &sem = floatType.getFloatSemantics();
    switch (kind) {
    case CombiningKind::Add:
      attr = b.getFloatAttr(type, 0.0);
      break;
    case CombiningKind::Max:
      attr = b.getFloatAttr(type, llvm::APFloat::getInf(sem, true));
      break;
    case CombiningKind::Min:
      attr = b.getFloatAttr(type, llvm::APFloat::getInf(sem, false));
      break;
    }
  } else {
    unsigned width = type.getIntOrFloatBitWidth();
    switch (kind) {
    case CombiningKind::Add:
      attr = b.getIntegerAttr(type, 0);
      break;
    case CombiningKind::Max:
      attr = b.getIntegerAttr(type, llvm::APInt::getSignedMinValue(width));
      break;
    case CombiningKind::Min:
      attr = b.getIntegerAttr(type, llvm::APInt::getSignedMaxValue(width));
      break;
    }
  }
  return Value(arith::ConstantOp::create(b, loc, attr));
}

/// The exchange's term of a plain reduction.
static ReductionTerm termOf(CombiningKind kind) {
  switch (kind) {
  case CombiningKind::Add:
    return ReductionTerm::Add;
  case CombiningKind::Max:
    return ReductionTerm::Max;
  case CombiningKind::Min:
    return ReductionTerm::Min;
  }
  llvm_unreachable("unknown combining kind");
}

FailureOr<RowKernelLowering::PendingReduction>
RowKernelLowering::beginReduction(Operation *op) {
  Value input = op->getOperand(0);
  const SmallVector<Value> *frags = rowFragments(input);
  if (!frags)
    return op->emitOpError("reduces a row the lowering has not seen");
  Type f32 = b.getF32Type();
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    Type elt = reduce.getResult().getType();
    if (!elt.isF32() && !elt.isInteger(32))
      return op->emitOpError("reduces ")
             << elt << "; the lowering supports f32 and i32 reductions";
    FailureOr<Value> ident = identity(reduce.getKind(), elt);
    if (failed(ident))
      return failure();
    return PendingReduction{
        op, termOf(reduce.getKind()),
        {reduceInThread(reduce.getKind(), *frags, *ident)}};
  }
  if (isa<ArgMaxOp>(op)) {
    // This thread's best (value, column): the maximum of its elements
    // (NaN-propagating), then the first column that holds it (or a NaN),
    // scanning from the last column back. A thread with no element of the
    // row keeps the identity (-inf, INT32_MAX), which every element beats.
    // Two cheap passes instead of one pass of pair comparisons: an argmax
    // has the arithmetic of a reduction, not of a comparison per pair.
    Value negInf = arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(f32, -std::numeric_limits<double>::infinity()));
    Value best = reduceInThread(CombiningKind::Max, *frags, negInf);
    Value bestColumn = constI32(std::numeric_limits<int32_t>::max());
    for (int64_t k = static_cast<int64_t>(frags->size()) - 1; k >= 0; --k) {
      Value frag = (*frags)[k];
      Value first =
          arith::TruncIOp::create(b, loc, b.getI32Type(), vectorColumn(k));
      Value inBounds = vectorInBounds(k);
      for (int64_t l = config.vector - 1; l >= 0; --l) {
        Value v = vector::ExtractOp::create(b, loc, frag, l);
        Value column =
            l ? arith::AddIOp::create(b, loc, first, constI32(l)) : first;
        // best is NaN exactly when one of the thread's elements is.
        Value hit = arith::OrIOp::create(
            b, loc,
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, v, best),
            arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v));
        if (inBounds)
          hit = arith::AndIOp::create(b, loc, hit, inBounds);
        bestColumn = arith::SelectOp::create(b, loc, hit, column, bestColumn);
      }
    }
    return PendingReduction{op, ReductionTerm::ArgMax, {best, bestColumn}};
  }
  if (isa<MomentsOp>(op)) {
    // This thread's count, sum and squared deviations from its own mean:
    // vectors past the row's end count nothing. A thread with no element
    // keeps (0, 0, 0), which the exchange's update treats as empty.
    // Without a tail every thread counts the same constant, which the
    // exchange then knows at every step (see exchange()).
    Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, 0.0));
    int64_t fixed = 0;
    Value count;
    for (int64_t k = 0; k < static_cast<int64_t>(frags->size()); ++k) {
      Value inBounds = vectorInBounds(k);
      if (!inBounds) {
        fixed += config.vector;
        continue;
      }
      Value n = arith::ConstantOp::create(
          b, loc, b.getFloatAttr(f32, static_cast<double>(config.vector)));
      n = arith::SelectOp::create(b, loc, inBounds, n, zero);
      count = count ? arith::AddFOp::create(b, loc, count, n) : n;
    }
    Value fixedCount = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(f32, static_cast<double>(fixed)));
    count = count ? arith::AddFOp::create(b, loc, count, fixedCount)
                  : fixedCount;
    Value sum = reduceInThread(CombiningKind::Add, *frags, zero);
    Value nonEmpty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, count, zero);
    Value mean = arith::SelectOp::create(
        b, loc, nonEmpty, arith::DivFOp::create(b, loc, sum, count), zero);
    Value meanFrag =
        vector::BroadcastOp::create(b, loc, fragmentType(f32), mean);
    // The second pass over the thread's elements converts a narrow row
    // again.
    ++phase;
    frags = rowFragments(input);
    SmallVector<Value> squares;
    for (Value frag : *frags) {
      Value d = arith::SubFOp::create(b, loc, frag, meanFrag);
      squares.push_back(arith::MulFOp::create(b, loc, d, d));
    }
    Value m2 = reduceInThread(CombiningKind::Add, squares, zero);
    return PendingReduction{op, ReductionTerm::Moments, {count, sum, m2}};
  }
  // A logsumexp is one exchange of the online pair: each thread takes the
  // maximum m of its own elements and the sum of exp(x - m) over them (a
  // thread whose elements are all -inf shifts by 0, so its sum is 0, not
  // NaN), then the pairs combine across the row.
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(f32, -std::numeric_limits<double>::infinity()));
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, 0.0));
  Value max = reduceInThread(CombiningKind::Max, *frags, negInf);
  // The second pass over the thread's elements converts a narrow row again.
  ++phase;
  frags = rowFragments(input);
  SmallVector<Value> exps =
      shiftedExps(*frags, onlineShift(max), widenedFrom16Bits(input));
  Value sum = reduceInThread(CombiningKind::Add, exps, zero);
  if (keepsExponentials(input))
    lseExponentials[op->getResult(0)] = {input, exps, max};
  return PendingReduction{op, ReductionTerm::LogSumExp, {max, sum}};
}

void RowKernelLowering::finishReduction(const PendingReduction &pending,
                                        ArrayRef<Value> combined) {
  if (pending.term == ReductionTerm::ArgMax) {
    scalars.map(pending.op->getResult(0),
                arith::ExtUIOp::create(b, loc, b.getI64Type(), combined[1]));
    return;
  }
  if (pending.term == ReductionTerm::Moments) {
    scalars.map(pending.op->getResult(0), combined[1]);
    scalars.map(pending.op->getResult(1), combined[2]);
    return;
  }
  if (pending.term != ReductionTerm::LogSumExp) {
    scalars.map(pending.op->getResult(0), combined[0]);
    return;
  }
  // lse = shift + log(sum); a row that is all -inf gives -inf.
  Value shift = onlineShift(combined[0]);
  Value lse = arith::AddFOp::create(b, loc, shift,
                                    math::LogOp::create(b, loc, combined[1]));
  scalars.map(pending.op->getResult(0), lse);
}

LogicalResult
RowKernelLowering::lowerReductions(ArrayRef<Operation *> group) {
  SmallVector<PendingReduction> pending;
  SmallVector<ReductionTerm> terms;
  SmallVector<Value> partials;
  for (Operation *op : group) {
    FailureOr<PendingReduction> p = beginReduction(op);
    if (failed(p))
      return failure();
    terms.push_back(p->term);
    partials.append(p->partial.begin(), p->partial.end());
    pending.push_back(std::move(*p));
  }
  SmallVector<Value> combined = exchange(terms, partials);
  ++phase;
  size_t next = 0;
  for (const PendingReduction &p : pending) {
    int64_t width = AllReduceOp::getTermWidth(p.term);
    finishReduction(p, ArrayRef(combined).slice(next, width));
    next += width;
  }
  return success();
}

Value RowKernelLowering::reduceInThread(CombiningKind kind,
                                        ArrayRef<Value> frags, Value ident) {
  bool isFloat = isa<FloatType>(ident.getType());
  vector::CombiningKind vectorKind;
  switch (kind) {
  case CombiningKind::Add:
    vectorKind = vector::CombiningKind::ADD;
    break;
  case CombiningKind::Max:
    vectorKind =
        isFloat ? vector::CombiningKind::MAXIMUMF : vector::CombiningKind::MAXSI;
    break;
  case CombiningKind::Min:
    vectorKind =
        isFloat ? vector::CombiningKind::MINIMUMF : vector::CombiningKind::MINSI;
    break;
  }
  // Each fragment, then the fragments in order.
  Value acc;
  for (auto [k, frag] : llvm::enumerate(frags)) {
    Value part = vector::ReductionOp::create(b, loc, vectorKind, frag);
    if (Value inBounds = vectorInBounds(k))
      part = arith::SelectOp::create(b, loc, inBounds, part, ident);
    acc = acc ? combine(kind, acc, part) : part;
  }
  return acc;
}

SmallVector<Value> RowKernelLowering::allReduce(ArrayRef<ReductionTerm> terms,
                                               ValueRange acc,
                                               ReduceScope scope,
                                               int64_t lanes) {
  SmallVector<int32_t> kinds;
  for (ReductionTerm term : terms)
    kinds.push_back(static_cast<int32_t>(term));
  FlatSymbolRefAttr smem;
  IntegerAttr scratch, groups;
  if (scope == ReduceScope::Block) {
    // Slots [row][warp][value], 4 bytes each.
    int64_t warps = lanes / kWarpSize;
    int64_t bytes = config.rowsPerCta * warps * acc.size() * 4;
    smem = FlatSymbolRefAttr::get(sharedGlobal.getSymNameAttr());
    scratch = b.getI64IntegerAttr(sharedCursor);
    groups = b.getI64IntegerAttr(config.rowsPerCta);
    sharedCursor += bytes;
  }
  auto op = AllReduceOp::create(
      b, loc, ReduceScopeAttr::get(b.getContext(), scope),
      b.getI64IntegerAttr(lanes), b.getDenseI32ArrayAttr(kinds), acc, smem,
      scratch, groups);
  return SmallVector<Value>(op.getResults());
}

Value RowKernelLowering::laneSlot(int64_t groups) {
  Value lane = arith::AndIOp::create(b, loc, tid, constI32(kWarpSize - 1));
  return arith::AndIOp::create(b, loc, lane, constI32(groups - 1));
}

SmallVector<Value>
RowKernelLowering::exchange(ArrayRef<ReductionTerm> terms,
                            SmallVector<Value> acc) {
  // 1. Across the row's threads of the CTA: a butterfly in its warp, or,
  // when the row spans several warps, in each warp and then across them
  // through shared memory behind a barrier.
  int64_t lanes = config.threadsPerRow;
  // A moments term whose count is a constant (no thread's vectors reach
  // past the row) has a known count after each step: the lowering of the
  // allreduce skips its shuffles, and here the combined counts are
  // constants again, so that the cluster's step knows them too.
  SmallVector<std::pair<size_t, double>> fixedCounts;
  for (size_t i = 0, t = 0; t < terms.size();
       i += AllReduceOp::getTermWidth(terms[t++])) {
    FloatAttr count;
    if (terms[t] == ReductionTerm::Moments &&
        matchPattern(acc[i], m_Constant(&count)))
      fixedCounts.push_back({i, count.getValueAsDouble()});
  }
  auto setCounts = [&](SmallVector<Value> &values, int64_t scale) {
    for (auto [i, count] : fixedCounts)
      values[i] = arith::ConstantOp::create(
          b, loc,
          b.getFloatAttr(b.getF32Type(), count * static_cast<double>(scale)));
  };
  if (lanes > kWarpSize)
    acc = allReduce(terms, acc, ReduceScope::Block, lanes);
  else if (lanes > 1)
    acc = allReduce(terms, acc, ReduceScope::Warp, lanes);
  setCounts(acc, lanes);

  // 2. Across the CTAs of the row's cluster.
  if (config.clusterSize > 1) {
    SmallVector<Value> fromPeers = sendToCluster(acc);
    setCounts(fromPeers, lanes);
    acc = allReduce(terms, fromPeers, ReduceScope::Warp, config.clusterSize);
    setCounts(acc, lanes * config.clusterSize);
  }
  return acc;
}

SmallVector<Value>
RowKernelLowering::sendToCluster(ArrayRef<Value> partial) {
  int64_t clusterSize = config.clusterSize;
  int64_t round = clusterRound++;
  int64_t slots = clusterSlotCursor;
  clusterSlotCursor += 4 * clusterSize * partial.size();

  // Peers may only signal an mbarrier once it is initialised everywhere.
  waitForClusterInit();

  // Every CTA sends its partials into every peer's slots of its rank; lane
  // j then reads rank j mod clusterSize's values.
  Value parity = clusterParity ? clusterParity : constI32(0);
  auto exchange = ClusterExchangeOp::create(
      b, loc, sharedGlobal.getSymName(), clusterBarrierOffset + 8 * round,
      slots, parity, laneSlot(clusterSize), partial, clusterSize,
      config.ctaThreads());
  return SmallVector<Value>(exchange.getResults());
}

LogicalResult RowKernelLowering::lowerGather(GatherOp op) {
  --gathersLeft;
  FailureOr<LoweredArg> arg = argFor(op.getSource(), op);
  if (failed(arg))
    return failure();
  Value index = scalars.lookupOrNull(op.getIndex());
  if (!index)
    return op.emitOpError("gathers at an index the lowering has not seen");
  Type i64 = b.getI64Type();
  if (index.getType() != i64)
    index = arith::ExtSIOp::create(b, loc, i64, index);
  // Only indices in [0, N) read memory; others give NaN (or 0).
  Value lower = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                      index, constI64(0));
  Value upper = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                      index, constI64(rowLength));
  Value inside = andPredicates(rowValid, andPredicates(lower, upper));
  Value offset = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, row, arg->rowStride), index);
  Value address = LLVM::GEPOp::create(b, loc, arg->pointer.getType(),
                                      arg->elementType, arg->pointer,
                                      ValueRange{offset});
  Type elt = arg->elementType;
  TypedAttr otherwise = cast<TypedAttr>(b.getZeroAttr(elt));
  if (auto floatType = dyn_cast<FloatType>(elt))
    otherwise = b.getFloatAttr(
        elt, llvm::APFloat::getQNaN(floatType.getFloatSemantics()));
  unsigned bytes = llvm::divideCeil(elt.getIntOrFloatBitWidth(), 8);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{elt}, inside,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc,
                         ValueRange{LLVM::LoadOp::create(b, loc, elt, address,
                                                         bytes)});
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(
        b, loc, ValueRange{arith::ConstantOp::create(b, loc, otherwise)});
  }
  scalars.map(op.getResult(), ifOp.getResult(0));
  return success();
}

LogicalResult RowKernelLowering::lowerColumn(ColumnOp op) {
  Type elt = op.getResult().getType().getElementType();
  VectorType fragType = fragmentType(elt);
  SmallVector<Attribute> lanes;
  for (int64_t i = 0; i < config.vector; ++i)
    lanes.push_back(b.getIntegerAttr(elt, i));
  Value laneOffsets = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(fragType, lanes));
  SmallVector<Value> frags;
  for (int64_t k = 0; k < config.vectorsPerThread; ++k) {
    Value start = vectorColumn(k);
    if (elt != start.getType())
      start = arith::TruncIOp::create(b, loc, elt, start);
    Value splat = vector::BroadcastOp::create(b, loc, fragType, start);
    frags.push_back(arith::AddIOp::create(b, loc, splat, laneOffsets));
  }
  fragments[op.getResult()] = std::move(frags);
  return success();
}

LogicalResult RowKernelLowering::lowerColumnCompare(arith::CmpIOp cmp) {
  // col == s (or !=) for a per-row scalar s, as in a one-hot
  // where(col == target, 1, 0): instead of a 64-bit column per element and a
  // 64-bit compare, one 32-bit distance from this thread's first column to
  // s per row, compared with each element's constant offset (a 32-bit
  // compare against an immediate). col == s exactly when the offset equals
  // s - threadColumn; a distance outside [0, 2^31) matches no offset and
  // becomes -1.
  auto pred = cmp.getPredicate();
  if (pred != arith::CmpIPredicate::eq && pred != arith::CmpIPredicate::ne)
    return failure();
  Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
  if (!lhs.getDefiningOp<ColumnOp>())
    std::swap(lhs, rhs);
  auto bcast = rhs.getDefiningOp<vector::BroadcastOp>();
  Value scalar = bcast ? scalars.lookupOrNull(bcast.getSource()) : Value();
  if (!lhs.getDefiningOp<ColumnOp>() || !scalar ||
      !isa<IntegerType>(scalar.getType()))
    return failure();
  int64_t lastOffset =
      valueColumn(*partition, config.vector, config.vectorsPerThread - 1) +
      config.vector;
  if (lastOffset + maxThreadColumn >= (int64_t(1) << 31) ||
      scalar.getType().getIntOrFloatBitWidth() > 64)
    return failure();
  Type i32 = b.getI32Type();
  Value s = scalar;
  if (s.getType().getIntOrFloatBitWidth() < 64)
    s = arith::ExtSIOp::create(b, loc, b.getI64Type(), s);
  Value distance = arith::SubIOp::create(b, loc, s, threadColumn);
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        distance, constI64(int64_t(1) << 31));
  Value distance32 = arith::SelectOp::create(
      b, loc, inRange, arith::TruncIOp::create(b, loc, i32, distance),
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(-1)));
  VectorType fragType = fragmentType(i32);
  Value splat = vector::BroadcastOp::create(b, loc, fragType, distance32);
  SmallVector<Value> frags;
  for (int64_t k = 0; k < config.vectorsPerThread; ++k) {
    SmallVector<Attribute> offsets;
    int64_t first = valueColumn(*partition, config.vector, k);
    for (int64_t i = 0; i < config.vector; ++i)
      offsets.push_back(b.getI32IntegerAttr(first + i));
    Value lanes = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(fragType, offsets));
    frags.push_back(arith::CmpIOp::create(b, loc, pred, splat, lanes));
  }
  fragments[cmp.getResult()] = std::move(frags);
  return success();
}

bool RowKernelLowering::keepsExponentials(Value input) {
  // Only a row held in registers (a staged one is read again from shared
  // memory instead), not rematerialized to save registers, and at most 64
  // elements per thread: the f32 exponentials stay live across the
  // exchange, in place of the row (which a 16-bit row holds in half as
  // many registers).
  if (stagedRows.count(input) || config.remat ||
      config.vectorsPerThread * config.vector > 64)
    return false;
  // Only where the row is used again as exp(row - lse) of this logsumexp.
  return llvm::any_of(input.getUsers(), [&](Operation *user) {
    auto sub = dyn_cast<arith::SubFOp>(user);
    return sub && sub.getLhs() == input &&
           llvm::any_of(sub->getUsers(),
                        [](Operation *u) { return isa<math::ExpOp>(u); });
  });
}

bool RowKernelLowering::widenedFrom16Bits(Value row) {
  auto ext = row.getDefiningOp<arith::ExtFOp>();
  return ext && getElementTypeOrSelf(ext.getIn().getType())
                         .getIntOrFloatBitWidth() == 16;
}

SmallVector<Value> RowKernelLowering::shiftedExps(ArrayRef<Value> frags,
                                                  Value shift, bool fused) {
  Type f32 = b.getF32Type();
  VectorType fragType = fragmentType(f32);
  SmallVector<Value> exps;
  if (!fused) {
    Value shiftFrag = vector::BroadcastOp::create(b, loc, fragType, shift);
    for (Value frag : frags)
      exps.push_back(math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, frag, shiftFrag)));
    return exps;
  }
  // exp(x - s) = 2^(x log2 e - s log2 e): one fma per element, with
  // s log2 e once per thread. The argument is off by half an ulp of
  // s log2 e and by x times the rounding of log2 e: a relative error of
  // about 2^-24 (|x| + |s|) log2 e in exp (1e-5 at 100, 1e-4 at 1000),
  // far under the half ulp of a bf16 (2e-3) or f16 (5e-4) result, which is
  // why only rows of those types take it.
  constexpr double kLog2E = 1.4426950408889634;
  Value log2e = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(kLog2E));
  Value negShift = arith::NegFOp::create(
      b, loc, arith::MulFOp::create(b, loc, shift, log2e));
  Value log2eFrag = vector::BroadcastOp::create(b, loc, fragType, log2e);
  Value negShiftFrag = vector::BroadcastOp::create(b, loc, fragType, negShift);
  for (Value frag : frags)
    exps.push_back(math::Exp2Op::create(
        b, loc, math::FmaOp::create(b, loc, frag, log2eFrag, negShiftFrag)));
  return exps;
}

LogicalResult RowKernelLowering::lowerShiftedExp(math::ExpOp exp) {
  // exp(x - lse) = exp(x - m) * exp(m - lse) for this thread's maximum m:
  // the logsumexp's exponentials times one factor per thread, instead of
  // a second exponential per element. A thread whose elements are all -inf
  // kept exp(x - 0) = 0 and gets the factor exp(-inf - lse) = 0 (NaN when
  // the whole row is -inf, as exp(-inf - -inf) is); m <= lse otherwise, so
  // the factor never overflows.
  auto sub = exp.getOperand().getDefiningOp<arith::SubFOp>();
  if (!sub)
    return failure();
  auto bcast = sub.getRhs().getDefiningOp<vector::BroadcastOp>();
  if (!bcast)
    return failure();
  auto kept = lseExponentials.find(bcast.getSource());
  if (kept == lseExponentials.end() || kept->second.input != sub.getLhs()) {
    // No kept exponentials: exp(x - s) for a per-row s, fused for a row
    // widened from 16 bits (a cross-entropy gradient from the saved lse).
    // The cheap tests first: rowFragments may widen or recompute the row.
    Value shift = scalars.lookupOrNull(bcast.getSource());
    if (!shift || !shift.getType().isF32() ||
        !widenedFrom16Bits(sub.getLhs()))
      return failure();
    const SmallVector<Value> *frags = rowFragments(sub.getLhs());
    if (!frags)
      return failure();
    fragments[exp.getResult()] = shiftedExps(*frags, shift, /*fused=*/true);
    return success();
  }
  Value lse = scalars.lookupOrNull(bcast.getSource());
  if (!lse)
    return failure();
  Value factor = math::ExpOp::create(
      b, loc, arith::SubFOp::create(b, loc, kept->second.threadMax, lse));
  Value factorFrag =
      vector::BroadcastOp::create(b, loc, fragmentType(b.getF32Type()), factor);
  SmallVector<Value> frags;
  for (Value e : kept->second.exps)
    frags.push_back(arith::MulFOp::create(b, loc, e, factorFrag));
  fragments[exp.getResult()] = std::move(frags);
  return success();
}

const SmallVector<Value> *RowKernelLowering::rowFragments(Value v) {
  if (stagedRows.count(v))
    return stagedFragments(v);
  auto it = fragments.find(v);
  if (it != fragments.end()) {
    auto remat = rematerialized.find(v);
    if (remat == rematerialized.end() || remat->second == phase)
      return &it->second;
    if (failed(lowerElementwise(v.getDefiningOp())))
      return nullptr;
    return &fragments.find(v)->second;
  }
  auto narrow = narrowRows.find(v);
  if (narrow == narrowRows.end())
    return nullptr;
  NarrowRow &row = narrow->second;
  if (row.phase != phase) {
    bool again = row.phase >= 0;
    row.wide.clear();
    for (Value packed : row.packed)
      row.wide.push_back(widen(packed, again));
    row.phase = phase;
  }
  return &row.wide;
}

void RowKernelLowering::noteRematerializable(Operation *op) {
  if (!isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::NegFOp,
           arith::DivFOp, arith::SelectOp, arith::CmpFOp, arith::MaximumFOp,
           arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp, math::FmaOp,
           math::AbsFOp>(op))
    return;
  bool fromNarrow = false;
  for (Value operand : op->getOperands()) {
    if (narrowRows.count(operand) || rematerialized.count(operand) ||
        stagedRows.count(operand)) {
      fromNarrow = true;
      continue;
    }
    // Splats of constants and per-row scalars are the same in every phase.
    Operation *def = operand.getDefiningOp();
    if (!def || !isa<arith::ConstantOp, vector::BroadcastOp>(def))
      return;
  }
  if (fromNarrow)
    rematerialized[op->getResult(0)] = phase;
}

Value RowKernelLowering::widen(Value packed, bool again) {
  VectorType wide = fragmentType(b.getF32Type());
  if (!again)
    return arith::ExtFOp::create(b, loc, wide, packed);
  // A conversion that an earlier phase made too must not be merged with it
  // (nor hoisted above the exchange in between). For bf16, each phase
  // widens with its own byte permutation: a bf16 is the upper half of the
  // f32 of the same value, and prmt takes the zero bytes from different
  // lanes of a zero register in each phase, so neither LLVM nor ptxas sees
  // two equal instructions. f16 takes its packed words through a `mov`
  // that LLVM must keep (inline assembly with side effects).
  auto type = cast<VectorType>(packed.getType());
  int64_t bits = type.getNumElements() * 16;
  bool words = bits % 32 == 0;
  Type word = words ? b.getI32Type() : b.getI16Type();
  int64_t count = words ? bits / 32 : type.getNumElements();
  VectorType wordsType = VectorType::get({count}, word);
  Value value = vector::BitCastOp::create(b, loc, wordsType, packed);
  if (words && type.getElementType().isBF16()) {
    // Selector nibbles: result byte i comes from byte sel[i] of {b, a};
    // bytes 4-7 are the zero register's.
    int64_t variant = phase % 15 + 1;
    int64_t z0 = 4 + variant % 4, z1 = 4 + variant / 4;
    Value zero = constI32(0);
    Value result = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(wide, 0.0f));
    for (int64_t i = 0; i < count; ++i) {
      Value w = vector::ExtractOp::create(b, loc, value, i);
      for (int64_t half = 0; half < 2; ++half) {
        int64_t sel = (half ? 0x3200 : 0x1000) | (z1 << 4) | z0;
        std::string asmText =
            llvm::formatv("prmt.b32 $0, $1, $2, {0:x};", sel).str();
        auto prmt = LLVM::InlineAsmOp::create(
            b, loc, TypeRange{b.getI32Type()}, ValueRange{w, zero}, asmText,
            "=r,r,r", /*has_side_effects=*/false, /*is_align_stack=*/false,
            LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
            ArrayAttr());
        Value f = arith::BitcastOp::create(b, loc, b.getF32Type(),
                                           prmt.getResult(0));
        result = vector::InsertOp::create(b, loc, f, result, 2 * i + half);
      }
    }
    return result;
  }
  for (int64_t i = 0; i < count; ++i) {
    Value w = vector::ExtractOp::create(b, loc, value, i);
    auto mov = LLVM::InlineAsmOp::create(
        b, loc, TypeRange{word}, ValueRange{w},
        words ? "mov.b32 $0, $1;" : "mov.b16 $0, $1;",
        words ? "=r,r" : "=h,h", /*has_side_effects=*/true,
        /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
    value = vector::InsertOp::create(b, loc, mov.getResult(0), value, i);
  }
  Value repacked = vector::BitCastOp::create(b, loc, type, value);
  return arith::ExtFOp::create(b, loc, wide, repacked);
}

LogicalResult RowKernelLowering::lowerElementwise(Operation *op) {
  // Splat constants and broadcasts give the same fragment to every slot.
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    auto splat = dyn_cast<SplatElementsAttr>(cst.getValue());
    if (!splat)
      return op->emitOpError("row constants must be splats");
    auto fragType = fragmentType(splat.getElementType());
    Value frag = arith::ConstantOp::create(
        b, loc, SplatElementsAttr::get(fragType,
                                       splat.getSplatValue<Attribute>()));
    fragments[cst.getResult()] =
        SmallVector<Value>(config.vectorsPerThread, frag);
    return success();
  }
  if (auto bcast = dyn_cast<vector::BroadcastOp>(op)) {
    Value source = scalars.lookupOrNull(bcast.getSource());
    if (!source)
      return op->emitOpError("broadcasts a value that is not a per-row "
                             "scalar");
    Value frag = vector::BroadcastOp::create(
        b, loc, fragmentType(source.getType()), source);
    fragments[bcast.getResult()] =
        SmallVector<Value>(config.vectorsPerThread, frag);
    return success();
  }
  // A row divided by a per-row scalar: one reciprocal per thread, then
  // multiplies (x / s == x * (1 / s) up to rounding of the reciprocal).
  if (auto div = dyn_cast<arith::DivFOp>(op)) {
    auto bcast = div.getRhs().getDefiningOp<vector::BroadcastOp>();
    Value scalar = bcast ? scalars.lookupOrNull(bcast.getSource()) : Value();
    const SmallVector<Value> *lhs = rowFragments(div.getLhs());
    if (scalar && lhs && isa<FloatType>(scalar.getType())) {
      Value one = arith::ConstantOp::create(
          b, loc, b.getFloatAttr(scalar.getType(), 1.0));
      Value inv = arith::DivFOp::create(b, loc, one, scalar);
      Value invFrag = vector::BroadcastOp::create(
          b, loc, fragmentType(scalar.getType()), inv);
      SmallVector<Value> frags;
      for (Value frag : *lhs)
        frags.push_back(arith::MulFOp::create(b, loc, frag, invFrag));
      fragments[div.getResult()] = std::move(frags);
      noteRematerializable(op);
      return success();
    }
  }
  // A select on a per-row condition (where(skip, 0, g)) keeps the scalar
  // i1 as its condition. With a vector of i1, LLVM narrows the select past
  // a following truncation to bf16/f16 and NVPTX then selects every 16-bit
  // lane on its own and can no longer pack the conversions in pairs; with
  // the scalar, it selects whole 32-bit pairs.
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    auto bcast = select.getCondition().getDefiningOp<vector::BroadcastOp>();
    Value cond = bcast ? scalars.lookupOrNull(bcast.getSource()) : Value();
    const SmallVector<Value> *onTrue = rowFragments(select.getTrueValue());
    const SmallVector<Value> *onFalse = rowFragments(select.getFalseValue());
    if (cond && cond.getType().isInteger(1) && onTrue && onFalse) {
      SmallVector<Value> frags;
      for (int64_t k = 0; k < config.vectorsPerThread; ++k)
        frags.push_back(arith::SelectOp::create(b, loc, cond, (*onTrue)[k],
                                                (*onFalse)[k]));
      fragments[select.getResult()] = std::move(frags);
      noteRematerializable(op);
      return success();
    }
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    if (succeeded(lowerColumnCompare(cmp)))
      return success();
  if (auto exp = dyn_cast<math::ExpOp>(op))
    if (succeeded(lowerShiftedExp(exp)))
      return success();
  auto ext = dyn_cast<arith::ExtFOp>(op);
  // A staged 16-bit row widened to f32 is read and widened again in each
  // phase that uses it.
  if (ext && stagedRows.count(ext.getIn()) &&
      getElementTypeOrSelf(ext.getType()).isF32()) {
    StagedRow row;
    row.input = stagedRows.lookup(ext.getIn()).input;
    row.widen = true;
    stagedRows[ext.getResult()] = std::move(row);
    return success();
  }
  if (ext && config.remat) {
    auto source = fragments.find(ext.getIn());
    Type from = getElementTypeOrSelf(ext.getIn().getType());
    if (source != fragments.end() && getElementTypeOrSelf(ext.getType()).isF32() &&
        (from.isBF16() || from.isF16())) {
      narrowRows[ext.getResult()].packed = source->second;
      return success();
    }
  }
  if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0 ||
      op->getNumResults() != 1)
    return op->emitOpError("cannot be distributed over a row: it is not an "
                           "elementwise operation");
  SmallVector<Value> frags;
  for (int64_t k = 0; k < config.vectorsPerThread; ++k) {
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      const SmallVector<Value> *operandFrags = rowFragments(operand);
      if (!operandFrags)
        return op->emitOpError("mixes a row with a value that is not a row");
      operands.push_back((*operandFrags)[k]);
    }
    auto resultType = cast<VectorType>(op->getResult(0).getType());
    OperationState state(loc, op->getName(), operands,
                         {fragmentType(resultType.getElementType())},
                         op->getAttrs());
    frags.push_back(b.create(state)->getResult(0));
  }
  fragments[op->getResult(0)] = std::move(frags);
  noteRematerializable(op);
  return success();
}

LogicalResult RowKernelLowering::lowerOp(Operation *op) {
  if (isa<ReturnOp>(op))
    return success();
  if (auto load = dyn_cast<LoadOp>(op))
    return lowerLoad(load);
  if (auto store = dyn_cast<StoreOp>(op))
    return lowerStore(store);
  if (auto gather = dyn_cast<GatherOp>(op))
    return lowerGather(gather);
  if (auto column = dyn_cast<ColumnOp>(op))
    return lowerColumn(column);
  if (auto sum = dyn_cast<SumRowsOp>(op))
    return lowerSumRows(sum);
  bool touchesRows =
      llvm::any_of(op->getOperands(),
                   [&](Value v) { return isRowValue(v); }) ||
      llvm::any_of(op->getResults(), [&](Value v) { return isRowValue(v); });
  if (touchesRows)
    return lowerElementwise(op);
  if (op->getNumRegions() != 0)
    return op->emitOpError("has regions, which row kernels do not support "
                           "yet");
  for (Value operand : op->getOperands())
    if (!scalars.contains(operand))
      return op->emitOpError("uses a value the lowering has not seen");
  b.clone(*op, scalars);
  return success();
}

LogicalResult RowKernelLowering::orderGathersBeforeStores() {
  Block &body = kernel.getBody().front();
  for (Operation &op : body) {
    auto store = dyn_cast<StoreOp>(&op);
    if (store && classifyArgType(store.getDest().getType()) == ArgKind::Matrix) {
      firstMatrixStore = &op;
      break;
    }
  }
  SmallVector<GatherOp> gathers(body.getOps<GatherOp>());
  hasGathers = !gathers.empty();
  gathersLeft = gathers.size();
  if (!firstMatrixStore)
    return success();
  for (GatherOp gather : gathers) {
    if (gather->isBeforeInBlock(firstMatrixStore))
      continue;
    // A gather after the first store moves before it when its index is
    // already known there.
    Operation *def = gather.getIndex().getDefiningOp();
    if (def && !def->isBeforeInBlock(firstMatrixStore))
      return gather.emitOpError(
          "reads an input after a row has been written, at an index that "
          "is computed after that write; compute the index earlier");
    gather->moveBefore(firstMatrixStore);
  }
  return success();
}

LogicalResult RowKernelLowering::run() {
  if (vectorsPerRow * config.vector != rowLength)
    return kernel.emitOpError("vector width ")
           << config.vector << " does not divide N = " << rowLength;
  int64_t covered =
      config.threadsPerRow * config.vectorsPerThread * config.clusterSize;
  if (covered < vectorsPerRow)
    return kernel.emitOpError("config covers ")
           << covered * config.vector << " elements of a row of " << rowLength;
  if (failed(buildPartition()))
    return failure();
  rowSums = llvm::to_vector(kernel.getBody().front().getOps<SumRowsOp>());
  looping = !rowSums.empty() || config.prefetch;
  firstSharedSum = static_cast<int64_t>(rowSums.size()) -
                   config.sharedSumCount(rowSums.size());
  sharedSums = firstSharedSum < static_cast<int64_t>(rowSums.size());
  sumChunk = std::min<int64_t>(4, config.vector);
  buildSignature();
  if (failed(allocateSharedMemory()))
    return failure();
  if ((config.staged() || sharedSums) && failed(allocateBulkBuffers()))
    return failure();
  allocateRowSumBuffer();
  buildPreamble();
  for (auto [index, arg] : llvm::enumerate(args))
    if (arg.kind == ArgKind::Scalar)
      scalars.map(kernel.getBody().getArgument(index), arg.scalar);
  if (failed(orderGathersBeforeStores()))
    return failure();
  Block &body = kernel.getBody().front();
  if (looping && config.prefetch) {
    for (Operation &op : body) {
      if (isa<StoreOp>(op))
        break;
      auto load = dyn_cast<LoadOp>(op);
      if (!load)
        continue;
      ArgKind kind = classifyArgType(load.getSource().getType());
      // Bulk copies prefetch matrices through shared memory instead.
      if ((kind == ArgKind::Matrix && !config.staged()) || kind == ArgKind::PerRow)
        prefetchedLoads.push_back(load);
    }
  }
  if (looping && failed(beginRowLoop()))
    return failure();
  for (auto it = body.begin(); it != body.end(); ++it) {
    Operation &op = *it;
    // Prefetched loads were lowered by the loop (beginRowLoop).
    auto load = dyn_cast<LoadOp>(op);
    if (load && llvm::is_contained(prefetchedLoads, load))
      continue;
    if (getExchangedValues(&op)) {
      SmallVector<Operation *> group = {&op};
      while (std::next(it) != body.end() &&
             getExchangedValues(&*std::next(it)))
        group.push_back(&*++it);
      if (failed(lowerReductions(group)))
        return failure();
      continue;
    }
    // Outputs may alias inputs (a gradient written in place over the
    // logits): every gather of the CTA must have read its element before
    // any thread writes a row, so the first matrix store waits for all.
    // In a cluster, the peers' gathers must be done too: a cluster barrier.
    if (&op == firstMatrixStore && hasGathers) {
      if (config.clusterSize > 1) {
        waitForClusterInit();
        if (!gathersArrived)
          ClusterArriveOp::create(b, loc, /*relaxed=*/false);
        ClusterWaitOp::create(b, loc);
      } else {
        NVVMTargetInfo(b, loc).barrier();
      }
      firstStoreLowered = true;
    }
    if (failed(lowerOp(&op)))
      return failure();
  }
  if (looping)
    endRowLoop();
  if (!rowSums.empty())
    buildFinishKernel();
  // Every round's mbarrier is waited on, so no peer can still be writing
  // into this CTA's shared memory when it exits.
  if (clusterRound != (config.clusterSize > 1 ? reductionRounds : 0))
    return kernel.emitOpError("lowered ")
           << clusterRound << " cluster exchanges for " << reductionRounds
           << " reductions";
  waitForClusterInit();
  gpu::ReturnOp::create(b, loc);
  // Elementwise ops cloned per fragment keep the tiles' layout attribute,
  // which no longer describes them.
  func.walk([](Operation *op) { op->removeAttr(kTVLayoutAttrName); });
  return success();
}

struct ConvertQuackToGPUPass
    : public mlir::quack::impl::ConvertQuackToGPUBase<ConvertQuackToGPUPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    if (kernels.empty())
      return;
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(module.getContext()));
    for (KernelOp kernel : kernels) {
      FailureOr<KernelConfig> config = KernelConfig::fromKernel(kernel);
      if (failed(config))
        return signalPassFailure();
      OpBuilder b(kernel);
      auto gpuModule = gpu::GPUModuleOp::create(b, kernel.getLoc(),
                                                kernel.getSymName());
      RowKernelLowering lowering(kernel, *config, gpuModule);
      if (failed(lowering.run()))
        return signalPassFailure();
      kernel.erase();
    }
  }
};

} // namespace
