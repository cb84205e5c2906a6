//===- SelectConfig.cpp - quack-select-config ------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/KernelConfig.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKSELECTCONFIG
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

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

struct QuackSelectConfigPass
    : public mlir::quack::impl::QuackSelectConfigBase<QuackSelectConfigPass> {
  using Base::Base;

  LogicalResult select(KernelOp kernel, KernelConfig &config) {
    int64_t n = kernel.getRowLength().value_or(1);
    int64_t bytes = widestElementBytes(kernel);
    std::string reason;
    llvm::raw_string_ostream why(reason);

    if (n > kMaxCtaRowLength)
      return kernel.emitOpError("N = ")
             << n << " is longer than the " << kMaxCtaRowLength
             << " elements a CTA holds in registers; longer rows need the "
                "cluster path, which is not built yet";
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
    if (threadsPerRow > 0) {
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
      int64_t perThread = vectorsPerRow <= 1024 ? 2 : 4;
      int64_t wanted = llvm::divideCeil(vectorsPerRow, perThread);
      config.threadsPerRow =
          std::min<int64_t>(llvm::PowerOf2Ceil(wanted), kMaxCtaThreads);
      why << "threads_per_row=" << config.threadsPerRow << " (~" << perThread
          << " of " << vectorsPerRow << " vectors per thread); ";
    }
    config.vectorsPerThread =
        llvm::divideCeil(vectorsPerRow, config.threadsPerRow);
    if (config.vectorsPerThread > kMaxVectorsPerThread)
      return kernel.emitOpError("N = ")
             << n << " needs " << config.vectorsPerThread
             << " vectors per thread with " << config.threadsPerRow
             << " threads per row; the CTA-level path holds at most "
             << kMaxVectorsPerThread << " (N <= "
             << kMaxVectorsPerThread * kMaxCtaThreads * config.vector
             << " for this element width)";

    if (rowsPerCta > 0) {
      config.rowsPerCta = rowsPerCta;
      why << "rows_per_cta=" << rowsPerCta.getValue() << " (forced)";
    } else {
      // Small rows share a CTA of at least 128 threads so that an SM holds
      // enough CTAs' bytes in flight.
      config.rowsPerCta = std::max<int64_t>(1, 128 / config.threadsPerRow);
      why << "rows_per_cta=" << config.rowsPerCta << " (CTA of "
          << config.ctaThreads() << " threads)";
    }
    if (config.ctaThreads() > kMaxCtaThreads)
      return kernel.emitOpError("threads_per_row * rows_per_cta = ")
             << config.ctaThreads() << " exceeds " << kMaxCtaThreads;
    config.reason = reason;
    return success();
  }

  void runOnOperation() override {
    if (arch.getValue().rfind("sm_", 0) != 0) {
      getOperation().emitError("unknown architecture '")
          << arch.getValue() << "'; expected sm_90, sm_90a, sm_100, ...";
      return signalPassFailure();
    }
    getOperation().walk([&](KernelOp kernel) {
      KernelConfig config;
      if (failed(select(kernel, config)))
        return signalPassFailure();
      kernel->setAttr(kConfigAttrName, config.toAttr(kernel.getContext()));
      kernel->setAttr("quack.config_reason",
                      StringAttr::get(kernel.getContext(), config.reason));
    });
  }
};

} // namespace
