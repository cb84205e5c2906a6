//===- SelectConfig.cpp - quack-select-config ------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/KernelConfig.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"
#include "quack/Dialect/Quack/Transforms/TunedConfigs.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKSELECTCONFIG
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// Threads per CTA the cluster path aims for (see select()).
constexpr int64_t kClusterCtaThreads = 512;
/// Registers a persistent loop may carry for partial sums and two row
/// groups' inputs (per-row scalars count two) for prefetching the next
/// group to be worth trying at 512 threads and 128 registers per thread.
/// An estimate: the compiler drops prefetch where ptxas then spills (with
/// ptxas over the catalogue: rmsnorm_bwd in bf16 carries 50 and
/// layernorm_bwd in f32 with db 52 without spilling; layernorm_bwd in bf16
/// carries 52 and spills 24 bytes, and with db 66).
constexpr int64_t kPrefetchRegisters = 64;
/// Bytes of a row (of its widest element type) the cluster path aims to
/// give each CTA: 16384 16-bit or 8192 32-bit elements.
constexpr int64_t kClusterCtaBytes = 32768;

/// Widest element, in bytes, among the kernel's matrices and row vectors.
int64_t widestElementBytes(KernelOp kernel) {
  int64_t bytes = 1;
  for (Type type : kernel.getArgumentTypes()) {
    ArgKind kind = classifyArgType(type);
    if (kind != ArgKind::Matrix && kind != ArgKind::Row)
      continue;
    unsigned bits = cast<MemRefType>(type).getElementTypeBitWidth();
    bytes = std::max<int64_t>(bytes, llvm::divideCeil(bits, 8));
  }
  return bytes;
}

/// Dynamic shared memory the bulk-copy path may use per CTA: sm_90's 227
/// KB less 1 KB for the kernel's static shared memory (exchange slots and
/// mbarriers).
constexpr int64_t kMaxBulkSharedBytes = 227 * 1024 - 1024;

/// The narrowest box (innermost dimension, bytes) a tensor copy that the
/// table of measured configs asks for may have.
constexpr int64_t kMinTunedTensorBoxBytes = 128;

struct QuackSelectConfigPass
    : public mlir::quack::impl::QuackSelectConfigBase<QuackSelectConfigPass> {
  using Base::Base;

  LogicalResult select(KernelOp kernel, KernelConfig &config) {
    int64_t n = kernel.getRowLength().value_or(1);
    int64_t bytes = widestElementBytes(kernel);
    std::string reason;
    llvm::raw_string_ostream why(reason);

    if (n > kMaxRowLength)
      return kernel.emitOpError("N = ")
             << n << " is longer than the " << kMaxRowLength
             << " elements a cluster of " << kMaxClusterSize
             << " CTAs holds in registers (" << kMaxCtaRowLength
             << " per CTA)";
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment))
      return kernel.emitOpError("alignment must be a power of two, got ")
             << alignment.getValue();
    config.alignment = std::min<int64_t>(alignment, 16);

    // Vector width: the widest access of at most 16 bytes that the alignment
    // class allows and that divides N, so that no vector straddles the end.
    int64_t widest = std::max<int64_t>(1, config.alignment / bytes);
    if (vector > 0) {
      if (!llvm::isPowerOf2_64(vector) || n % vector != 0 ||
          vector * bytes > config.alignment)
        return kernel.emitOpError("cannot use vector = ")
               << vector.getValue() << ": it must be a power of two dividing N = " << n
               << " with vector * " << bytes
               << " bytes within the alignment of " << config.alignment;
      config.vector = vector;
      why << "vector=" << vector.getValue() << " (forced); ";
    } else {
      config.vector = 1;
      while (config.vector * 2 <= widest && n % (config.vector * 2) == 0)
        config.vector *= 2;
      why << "vector=" << config.vector << " (" << config.vector * bytes * 8
          << "-bit accesses: widest dividing N=" << n << " within "
          << config.alignment << "-byte alignment); ";
    }

    int64_t vectorsPerRow = n / config.vector;

    // A sum over rows keeps an f32 partial sum of every element a thread
    // owns, beside the row itself: such kernels give a CTA half the row.
    int64_t sums = 0;
    kernel.walk([&](SumRowsOp) { ++sums; });
    int64_t ctaRowLength = sums ? kMaxCtaRowLength / 2 : kMaxCtaRowLength;
    int64_t ctaBytes = sums ? kClusterCtaBytes / 2 : kClusterCtaBytes;

    // A measured config for this kernel, element size and N, unless a knob
    // is forced. It applies where its path (one CTA per row group, or a
    // cluster per row) is one this N can take, and is ignored where its
    // CTA would exceed the path's thread limit (narrow vectors of an
    // unaligned view need more threads for the same vectors per thread).
    std::optional<TunedConfig> tuned;
    int64_t tunedThreads = 0;
    if (useTuned && clusterSize <= 1 && threadsPerRow <= 0 &&
        rowsPerCta <= 0) {
      tuned = lookupTunedConfig(arch, kernel.getSymName(), bytes, n,
                                tuning);
      bool clusterEntry = tuned && tuned->clusterSize > 1;
      // A forced cluster of 1 takes CTA-level entries only. A CTA-level
      // entry applies wherever one CTA may hold the row, also where the
      // model would split it over a cluster (kernels with sums over rows
      // split from ctaRowLength, half of what a CTA may hold).
      if (tuned && (clusterEntry ? clusterSize == 1 : n > kMaxCtaRowLength))
        tuned.reset();
      if (tuned) {
        int64_t perCta = llvm::divideCeil(vectorsPerRow, tuned->clusterSize);
        tunedThreads = static_cast<int64_t>(llvm::PowerOf2Ceil(
            llvm::divideCeil(perCta, tuned->vectorsPerThread)));
        int64_t cap = clusterEntry ? kClusterCtaThreads : kMaxCtaThreads;
        if (tunedThreads * tuned->rowsPerCta > cap)
          tuned.reset();
      }
    }

    // Cluster: rows longer than one CTA holds are split into contiguous
    // chunks of at most kMaxCtaRowLength elements, one per CTA of a cluster.
    if (clusterSize > 0) {
      if (!llvm::isPowerOf2_64(clusterSize) || clusterSize > kMaxClusterSize)
        return kernel.emitOpError("cluster size must be a power of two up "
                                  "to ")
               << kMaxClusterSize << ", got " << clusterSize.getValue();
      config.clusterSize = clusterSize;
      why << "cluster=" << clusterSize.getValue() << " (forced); ";
    } else if (tuned && tuned->clusterSize > 1) {
      config.clusterSize = tuned->clusterSize;
      why << "cluster=" << config.clusterSize << " (tuned); ";
    } else if (n > ctaRowLength && !tuned) {
      // Where the cluster can grow: at most kClusterCtaBytes of the widest
      // element type per CTA and at most kMaxVectorsPerThread vectors for
      // each of kClusterCtaThreads threads. Narrow vectors (unaligned views,
      // odd N) cost a register per element plus an address.
      int64_t byElements = llvm::divideCeil(n * bytes, ctaBytes);
      int64_t byVectors = llvm::divideCeil(
          vectorsPerRow, kClusterCtaThreads * kMaxVectorsPerThread);
      config.clusterSize = std::min<int64_t>(
          kMaxClusterSize,
          llvm::PowerOf2Ceil(std::max(byElements, byVectors)));
      why << "cluster=" << config.clusterSize << " (N=" << n
          << " over CTAs of at most " << ctaBytes << " bytes and "
          << kClusterCtaThreads * kMaxVectorsPerThread << " vectors); ";
    }
    if (config.clusterSize > 1) {
      int64_t major = 0;
      if (arch.getValue().size() > 3)
        llvm::StringRef(arch.getValue()).drop_front(3).take_while(
            [](char c) { return c >= '0' && c <= '9'; }).getAsInteger(10, major);
      if (major < 90)
        return kernel.emitOpError("N = ")
               << n << " needs a cluster of " << config.clusterSize
               << " CTAs, which needs sm_90 or later (target " << arch.getValue()
               << ")";
      if (rowsPerCta > 1)
        return kernel.emitOpError("rows_per_cta = ")
               << rowsPerCta.getValue()
               << " cannot be combined with a cluster of "
               << config.clusterSize << ": a cluster splits one row";
    }
    int64_t vectorsPerCta = llvm::divideCeil(vectorsPerRow, config.clusterSize);

    if (tuned) {
      config.tuned = true;
      config.table = tuned->table.str();
      config.threadsPerRow = tunedThreads;
      why << "threads_per_row=" << config.threadsPerRow << " (~"
          << llvm::divideCeil(vectorsPerCta, config.threadsPerRow) << " of "
          << vectorsPerCta << " vectors per thread; tuned: kernels/tuning/"
          << tuned->table << ":" << tuned->line << "); ";
    } else if (threadsPerRow > 0) {
      if (!llvm::isPowerOf2_64(threadsPerRow) ||
          threadsPerRow > kMaxCtaThreads)
        return kernel.emitOpError("threads-per-row must be a power of two "
                                  "up to ")
               << kMaxCtaThreads << ", got " << threadsPerRow.getValue();
      config.threadsPerRow = threadsPerRow;
      why << "threads_per_row=" << threadsPerRow.getValue() << " (forced); ";
    } else {
      // Rows of up to 1024 vectors: two vectors per thread, so that more
      // CTAs (and their loads) are in flight per SM; longer rows: four,
      // which keeps 32-64 bytes in flight per thread without crowding the
      // register file. (Measured on the H200: BENCHMARKS.md.)
      int64_t perThread = vectorsPerCta <= 1024 ? 2 : 4;
      int64_t wanted = llvm::divideCeil(vectorsPerCta, perThread);
      // A CTA of a cluster is alone on its SM: at most 512 threads, so that
      // ptxas may give each 128 registers for the row and the exchange
      // (1024 threads get 64, and two-input kernels spill; ptxas over the
      // catalogue).
      int64_t cap = config.clusterSize > 1 ? kClusterCtaThreads
                                           : kMaxCtaThreads;
      config.threadsPerRow =
          std::min<int64_t>(llvm::PowerOf2Ceil(wanted), cap);
      why << "threads_per_row=" << config.threadsPerRow << " (~"
          << llvm::divideCeil(vectorsPerCta, config.threadsPerRow) << " of "
          << vectorsPerCta << " vectors per thread); ";
    }
    config.vectorsPerThread =
        llvm::divideCeil(vectorsPerCta, config.threadsPerRow);
    if (config.vectorsPerThread > kMaxVectorsPerThread)
      return kernel.emitOpError("N = ")
             << n << " needs " << config.vectorsPerThread
             << " vectors of " << config.vector << " elements per thread with "
             << config.threadsPerRow << " threads per row and a cluster of "
             << config.clusterSize << "; a thread holds at most "
             << kMaxVectorsPerThread << " (N <= "
             << kMaxVectorsPerThread * config.threadsPerRow * config.vector *
                    config.clusterSize
             << " with " << config.vector * bytes << "-byte accesses)";

    if (config.clusterSize > 1) {
      config.rowsPerCta = 1;
      why << "rows_per_cta=1 (one row per cluster)";
    } else if (rowsPerCta > 0) {
      config.rowsPerCta = rowsPerCta;
      why << "rows_per_cta=" << rowsPerCta.getValue() << " (forced)";
    } else if (tuned) {
      config.rowsPerCta = tuned->rowsPerCta;
      why << "rows_per_cta=" << config.rowsPerCta << " (tuned)";
    } else {
      // Small rows share a CTA of at least 128 threads so that an SM holds
      // enough CTAs' bytes in flight.
      config.rowsPerCta = std::max<int64_t>(1, 128 / config.threadsPerRow);
      why << "rows_per_cta=" << config.rowsPerCta << " (CTA of "
          << config.ctaThreads() << " threads)";
    }
    if (minCtasPerSm >= 0) {
      config.minCtasPerSm = minCtasPerSm;
      if (minCtasPerSm > 0)
        why << "; min_ctas_per_sm=" << minCtasPerSm.getValue() << " (forced)";
    }
    // Partial sums over rows in shared memory (forced, a table entry's
    // loop, or quackc's retry where registers spill): the last
    // config.sharedSums of them.
    const int64_t numSums = sums;
    const int64_t sumsOption = this->sums;
    if (sumsOption < -1)
      return kernel.emitOpError("sums must be -1 (the table's, else "
                                "registers), 0 (partial sums in registers) "
                                "or the number of sums over rows whose "
                                "partials go to shared memory, got ")
             << sumsOption;
    if (sumsOption > 0 && numSums == 0)
      return kernel.emitOpError("sums=shared needs a kernel with sums over "
                                "rows (sum_rows)");
    // A table entry's sums come with its loop (its copy path and stages);
    // they apply where that loop does (checked below, once the copy path
    // is known). They split the sums: a flag setting of the kernel with K
    // sums or fewer (layernorm_bwd without db) keeps its partial sums in
    // registers, where shared sums lost 3-8% to them when registers
    // sufficed (BENCHMARKS.md, 2026-12-04, thirteenth run).
    bool tableLoopSums = tuned && tuned->sharedSums > 0 &&
                         tuned->sharedSums < numSums && tuned->copy &&
                         tuned->stages != 0 &&
                         config.clusterSize == tuned->clusterSize &&
                         prefetch < 0 && stages == 0;
    bool tunedSums = sumsOption < 0 && tableLoopSums;
    config.sharedSums =
        tunedSums ? tuned->sharedSums
                  : std::min<int64_t>(std::max<int64_t>(sumsOption, 0), numSums);
    // Kernels with sums over rows loop over row groups on a persistent grid;
    // on the cluster path, where such a CTA is alone on its SM, the loop
    // loads the next group while the current one is exchanged between CTAs
    // and written, so that loads stay in flight across the exchange. The
    // loop then carries the f32 partial sums and two row groups' inputs;
    // above kPrefetchRegisters 32-bit registers of those, ptxas spills.
    // Other kernels get the loop only when forced (prefetch=1): on the H200
    // their cluster kernels lose 15-45% with it, as the doubled registers
    // halve the CTAs per SM (BENCHMARKS.md, 2026-12-03, fifth run).
    Block &body = kernel.getBody().front();
    bool persistent = !body.getOps<SumRowsOp>().empty();
    int64_t values = config.vectorsPerThread * config.vector;
    int64_t rowSums = llvm::range_size(body.getOps<SumRowsOp>());
    // Registers the loop carries: partial sums (those not in shared
    // memory), per-row scalars, and the matrix rows unless bulk copies
    // prefetch those into shared memory.
    int64_t carriedBySums = values * (rowSums - config.sharedSums),
            carriedByRows = 0;
    for (LoadOp load : body.getOps<LoadOp>()) {
      ArgKind kind = classifyArgType(load.getSource().getType());
      if (kind == ArgKind::PerRow)
        carriedBySums += 2;
      else if (kind == ArgKind::Matrix)
        carriedByRows += 2 * llvm::divideCeil(
                                 values * cast<MemRefType>(
                                              load.getSource().getType())
                                              .getElementTypeBitWidth(),
                                 32);
    }
    // Bulk copies where the loop of a persistent cluster kernel cannot
    // carry two row groups in registers: the next group is copied into a
    // second shared-memory buffer instead. Measured on the H200 against the
    // same kernels without prefetch (BENCHMARKS.md, 2026-12-04, bulk
    // copies): rmsnorm_bwd bf16 262144 +56%, f32 131072 +31%; layernorm_bwd
    // (with db) bf16 16384-262144 +12-26%, f32 131072 +29%, 262144 x2.
    // Where the registers suffice, and in kernels without a loop (each CTA
    // then waits for its whole slice before it computes), bulk copies lost
    // 1-30% there, so these keep 128-bit loads.
    bool wantBulk = persistent && config.clusterSize > 1 &&
                    carriedBySums + carriedByRows > kPrefetchRegisters;
    std::optional<KernelConfig::Copy> tunedCopy;
    if (tuned && tuned->copy && config.clusterSize == tuned->clusterSize)
      tunedCopy = tuned->copy;
    KernelConfig::Copy modelCopy =
        wantBulk ? KernelConfig::Copy::Bulk : KernelConfig::Copy::Global;
    KernelConfig::Copy wanted = tunedCopy.value_or(modelCopy);
    // A table entry covers a range of N; tensor copies lose where N leaves
    // them only narrow boxes (BENCHMARKS.md, 2026-12-04, tensor copies:
    // rmsnorm_bwd f32 at N = 1000, boxes of 8 columns, 8% slower; at 1024,
    // boxes of 256 columns, 8% faster): there the model's choice stands.
    if (wanted == KernelConfig::Copy::Tensor && copy < 0) {
      int64_t boxBytes = narrowestTensorBoxBytes(kernel, config);
      if (boxBytes < kMinTunedTensorBoxBytes) {
        why << "; copy=" << stringifyCopy(modelCopy)
            << " (the table's tensor copies would move boxes " << boxBytes
            << " bytes wide)";
        wanted = modelCopy;
      }
    }
    if (failed(selectCopy(kernel, config, wanted,
                          carriedBySums + carriedByRows, tunedCopy.has_value(),
                          why)))
      return failure();
    int64_t carried = carriedBySums + (config.staged() ? 0 : carriedByRows);
    if (prefetch >= 0) {
      if (prefetch > 1)
        return kernel.emitOpError("prefetch must be 0 or 1, got ")
               << prefetch.getValue();
      config.prefetch = prefetch == 1;
      why << "; prefetch=" << prefetch.getValue() << " (forced)";
    } else if (tunedCopy && tuned->prefetch &&
               config.copy == KernelConfig::Copy::Global) {
      // A measured loop over rows with the next rows in registers.
      config.prefetch = true;
      why << "; prefetch=1 (tuned)";
    } else if (persistent && config.clusterSize > 1 &&
               carried <= kPrefetchRegisters) {
      config.prefetch = true;
      why << "; prefetch=1 (one CTA per SM loops over rows; the loop carries "
          << carried << " registers)";
    }
    if (stages != 0 && (stages < 2 || stages > 8))
      return kernel.emitOpError("stages must be 2 to 8, got ")
             << stages.getValue();
    if (stages != 0 && !(config.staged() && config.prefetch))
      return kernel.emitOpError("stages = ")
             << stages.getValue()
             << " needs bulk copies in a prefetching loop (copy=bulk or "
                "copy=tensor with prefetch)";
    // A table entry's stages make the kernel a loop that copies the next
    // row groups ahead into that many buffers, as prefetch=1,stages=S would.
    bool tunedStages = stages == 0 && prefetch < 0 && tunedCopy &&
                       tuned->stages != 0 && config.staged();
    // (Only where selectCopy kept the entry's copy path: its loop then
    // runs as the entry says. The registers counted above assumed the
    // entry's sums; without the loop they are the model's concern.)
    if (tunedSums && !tunedStages) {
      tunedSums = false;
      config.sharedSums = 0;
    }
    if (tableLoopSums && tunedStages)
      config.tableSums = tuned->sharedSums;
    if (stages != 0) {
      config.stages = stages;
      why << "; stages=" << stages.getValue() << " (forced)";
    } else if (tunedStages) {
      config.prefetch = true;
      config.stages = tuned->stages;
      why << "; prefetch=1 stages=" << config.stages << " (tuned)";
    }
    if (tunedSums)
      why << "; sums=" << config.sharedSums << " (tuned: the last "
          << config.sharedSums << " of " << numSums
          << " sums over rows in shared memory)";
    else if (config.sharedSums == numSums && numSums > 0)
      why << "; sums=shared (forced)";
    else if (config.sharedSums > 0)
      why << "; sums=" << config.sharedSums << " (forced: the last "
          << config.sharedSums << " of " << numSums
          << " sums over rows in shared memory)";
    if (earlySums && numSums == 0)
      return kernel.emitOpError("early_sums=1 needs a kernel with sums over "
                                "rows (sum_rows)");
    if (earlySums)
      why << "; early_sums=1 (forced)";
    if (earlyVectors && llvm::none_of(body.getOps<LoadOp>(), [](LoadOp load) {
          return isLoadOf(load, ArgKind::Row);
        }))
      return kernel.emitOpError("early_vectors=1 needs a kernel that loads "
                                "a row vector (a weight or a bias)");
    if (earlyVectors)
      why << "; early_vectors=1 (forced)";
    // Shared sums follow the bulk-copy buffers in dynamic shared memory.
    const int64_t sumBytes = config.sharedSumBytes(numSums);
    if (config.staged()) {
      // Several buffers when the loop copies the next row groups ahead.
      int64_t buffers = config.prefetch && (persistent || prefetch == 1 ||
                                            tunedStages)
                            ? config.stages
                            : 1;
      int64_t bytesNeeded =
          getBulkBufferLayout(kernel, config).totalBytes(buffers) + sumBytes;
      if (bytesNeeded > kMaxBulkSharedBytes && buffers > 1 && prefetch < 0 &&
          stages == 0 && !tunedStages) {
        config.prefetch = false;
        buffers = 1;
        // The model copies in bulk only for the loop's prefetch: without
        // it, each CTA waits for its whole slice before it computes, and
        // 128-bit loads win. On an H100, rmsnorm_bwd f32 at 262144 ran at
        // 2.07 TB/s with one bulk buffer and 2.30 with 128-bit loads;
        // layernorm_bwd bf16 there (all sums shared) 1.77 against 2.17
        // (BENCHMARKS.md, 2026-12-06, split sums).
        if (copy < 0 && !tunedCopy) {
          config.copy = KernelConfig::Copy::Global;
          why << "; then copy=global (" << config.stages
              << " bulk-copy buffers need " << bytesNeeded << " bytes of "
              << "shared memory, and " << kBulkWithoutPrefetchNote << ")";
        } else {
          why << "; then prefetch=0 (" << config.stages
              << " bulk-copy buffers need " << bytesNeeded
              << " bytes of shared memory)";
        }
        bytesNeeded =
            config.staged()
                ? getBulkBufferLayout(kernel, config).totalBytes(buffers) +
                      sumBytes
                : 0;
      }
      if (bytesNeeded > kMaxBulkSharedBytes && copy < 0) {
        config.copy = KernelConfig::Copy::Global;
        if (prefetch < 0)
          config.prefetch = false;
        why << "; then copy=global (bulk-copy buffers "
            << (sumBytes ? "and shared sums " : "") << "need " << bytesNeeded
            << " bytes of shared memory)";
      } else if (bytesNeeded > kMaxBulkSharedBytes)
        return kernel.emitOpError("copy=")
               << stringifyCopy(config.copy) << " needs "
               << bytesNeeded << " bytes of shared memory per CTA ("
               << buffers << " buffer(s) of every input's slice of "
               << config.rowsPerCta << " row(s)"
               << (sumBytes ? " and " + std::to_string(sumBytes) +
                                  " bytes of shared sums"
                            : std::string())
               << "); at most " << kMaxBulkSharedBytes;
    }
    if (!config.staged() && sumBytes > kMaxBulkSharedBytes)
      return kernel.emitOpError("sums=shared needs ")
             << sumBytes << " bytes of shared memory per CTA (" << numSums
             << " sum(s) of " << config.ctaThreads() * config.vectorsPerThread *
                                    config.vector
             << " columns); at most " << kMaxBulkSharedBytes;
    // Forced 0/1 knobs without a model of their own.
    auto readSwitch = [&](StringRef name, int64_t value,
                          bool &field) -> LogicalResult {
      if (value < 0 || value > 1)
        return kernel.emitOpError() << name << " must be 0 or 1, got "
                                    << value;
      field = value == 1;
      if (field)
        why << "; " << name << "=1";
      return success();
    };
    if (failed(readSwitch("remat", remat, config.remat)) ||
        failed(readSwitch("sink", sink, config.sinkTail)))
      return failure();
    if (config.ctaThreads() > kMaxCtaThreads)
      return kernel.emitOpError("threads_per_row * rows_per_cta = ")
             << config.ctaThreads() << " exceeds " << kMaxCtaThreads;
    // The exchange between CTAs reads rank j's partials in lane j.
    if (config.clusterSize > 1 && config.ctaThreads() < config.clusterSize)
      return kernel.emitOpError("a cluster of ")
             << config.clusterSize << " needs CTAs of at least as many "
             << "threads, got " << config.ctaThreads();
    config.reason = reason;
    return success();
  }

  /// Why copies of `path` (bulk or tensor) cannot serve this kernel and
  /// config (empty: they can). cp.async.bulk moves whole 16-byte units
  /// between 16-byte aligned addresses, so every matrix input's vectors must
  /// be 16 bytes within 16-byte alignment; a tensor copy's box spans at most
  /// 256 rows. (Its columns always fit: a vector of 16 bytes divides N and
  /// the slice, so getTensorBox finds an innermost dimension of 16 bytes or
  /// more; a slice of more than 256 such groups, at most 16 vectors per
  /// thread, counts a power of two of at least 32 of them, and 32 groups
  /// make a box of a multiple of 512 bytes.)
  std::string stagedObstacle(KernelOp kernel, const KernelConfig &config,
                             KernelConfig::Copy path) {
    if (config.alignment % 16 != 0)
      return "needs 16-byte aligned pointers and row strides; the alignment "
             "class is " +
             std::to_string(config.alignment);
    bool any = false;
    for (LoadOp load : kernel.getBody().front().getOps<LoadOp>()) {
      Type type = load.getSource().getType();
      if (classifyArgType(type) != ArgKind::Matrix)
        continue;
      any = true;
      int64_t bytes = llvm::divideCeil(
          cast<MemRefType>(type).getElementTypeBitWidth(), 8);
      if ((config.vector * bytes) % 16 != 0)
        return "needs vectors of 16 bytes of every matrix input; vector = " +
               std::to_string(config.vector) + " gives " +
               std::to_string(config.vector * bytes) + " bytes of a " +
               std::to_string(bytes) + "-byte element";
    }
    if (!any)
      return "needs a matrix input (the kernel loads none)";
    if (path == KernelConfig::Copy::Tensor && config.rowsPerCta > kMaxTensorBox)
      return "needs at most " + std::to_string(kMaxTensorBox) +
             " rows per CTA (one box), got " +
             std::to_string(config.rowsPerCta);
    return "";
  }

  /// The narrowest innermost box dimension, in bytes, of the tensor copies
  /// of the kernel's matrix inputs under `config` (0 where one has none).
  int64_t narrowestTensorBoxBytes(KernelOp kernel, KernelConfig config) {
    config.copy = KernelConfig::Copy::Tensor;
    BulkBufferLayout layout = getBulkBufferLayout(kernel, config);
    int64_t narrowest = std::numeric_limits<int64_t>::max();
    for (auto [box, bytes] :
         llvm::zip(layout.tensorBoxes, layout.elementBytes))
      narrowest = std::min(narrowest, box.inner * bytes);
    return narrowest;
  }

  /// The copy path: forced by `copy`, or `wanted` (by the table of measured
  /// configs when `measured`; otherwise bulk because the loop would carry
  /// `carried` registers) where its copies can serve the kernel.
  LogicalResult selectCopy(KernelOp kernel, KernelConfig &config,
                           KernelConfig::Copy wanted, int64_t carried,
                           bool measured, llvm::raw_ostream &why) {
    if (copy < -1 || copy > 2)
      return kernel.emitOpError("copy must be 0 (global), 1 (bulk) or 2 "
                                "(tensor), got ")
             << copy.getValue();
    KernelConfig::Copy path =
        copy >= 0 ? static_cast<KernelConfig::Copy>(copy.getValue()) : wanted;
    if (path == KernelConfig::Copy::Global)
      return success();
    std::string obstacle = stagedObstacle(kernel, config, path);
    if (copy >= 0 && !obstacle.empty())
      return kernel.emitOpError("copy=")
             << stringifyCopy(path) << " " << obstacle;
    if (!obstacle.empty())
      return success();
    config.copy = path;
    why << "; copy=" << stringifyCopy(path);
    if (copy >= 0)
      why << " (forced)";
    else if (measured)
      why << " (tuned)";
    else
      why << " (two row groups would take " << carried
          << " registers of the loop: the next is copied into shared memory)";
    return success();
  }

  void runOnOperation() override {
    if (arch.getValue().rfind("sm_", 0) != 0) {
      getOperation().emitError("unknown architecture '")
          << arch.getValue() << "'; expected sm_90, sm_90a, sm_100, ...";
      return signalPassFailure();
    }
    if (!tuning.getValue().empty() &&
        !findTuningTarget(arch, tuning.getValue())) {
      getOperation().emitError("unknown tuning target '")
          << tuning.getValue() << "' for " << arch.getValue()
          << knownTuningTargets(arch);
      return signalPassFailure();
    }
    getOperation().walk([&](KernelOp kernel) {
      KernelConfig config;
      if (failed(select(kernel, config)))
        return signalPassFailure();
      kernel->setAttr(kConfigAttrName, config.toAttr(kernel.getContext()));
      kernel->setAttr("quack.config_reason",
                      StringAttr::get(kernel.getContext(), config.reason));
      if (config.tuned)
        kernel->setAttr(kConfigTunedAttrName,
                        StringAttr::get(kernel.getContext(), config.table));
      else
        kernel->removeAttr(kConfigTunedAttrName);
      if (config.tableSums > 0)
        kernel->setAttr(kConfigTableSumsAttrName,
                        IntegerAttr::get(IntegerType::get(kernel.getContext(),
                                                          64),
                                         config.tableSums));
      else
        kernel->removeAttr(kConfigTableSumsAttrName);
    });
  }
};

} // namespace
