//===- KernelConfig.cpp - the quack.config attribute --------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/Transforms/KernelConfig.h"
#include "quack/Dialect/Quack/IR/QuackAttrs.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::quack;

DictionaryAttr KernelConfig::toAttr(MLIRContext *context) const {
  Builder b(context);
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("alignment", b.getI64IntegerAttr(alignment)),
      b.getNamedAttr("cluster_size", b.getI64IntegerAttr(clusterSize)),
      b.getNamedAttr("copy", b.getStringAttr(stringifyCopy(copy))),
      b.getNamedAttr("min_ctas_per_sm", b.getI64IntegerAttr(minCtasPerSm)),
      b.getNamedAttr("prefetch", b.getBoolAttr(prefetch)),
      b.getNamedAttr("remat", b.getBoolAttr(remat)),
      b.getNamedAttr("rows_per_cta", b.getI64IntegerAttr(rowsPerCta)),
      b.getNamedAttr("threads_per_row", b.getI64IntegerAttr(threadsPerRow)),
      b.getNamedAttr("vector", b.getI64IntegerAttr(vector)),
      b.getNamedAttr("vectors_per_thread",
                     b.getI64IntegerAttr(vectorsPerThread)),
  };
  // Written only where it matters, so that other configs read as before.
  if (staged() && prefetch)
    entries.push_back(b.getNamedAttr("stages", b.getI64IntegerAttr(stages)));
  if (sharedSums > 0)
    entries.push_back(
        b.getNamedAttr("shared_sums", b.getI64IntegerAttr(sharedSums)));
  if (sinkTail)
    entries.push_back(b.getNamedAttr("sink", b.getBoolAttr(true)));
  return b.getDictionaryAttr(entries);
}

FailureOr<::quack::layout::RowTVLayout>
mlir::quack::buildRowTVLayout(KernelOp kernel, const KernelConfig &config) {
  namespace ql = ::quack::layout;
  ql::RowPartition spec;
  spec.numCols = kernel.getRowLength().value_or(1);
  spec.threadsPerRow = config.threadsPerRow;
  spec.vecSize = config.vector;
  spec.rowsPerCta = config.rowsPerCta;
  spec.clusterSize = config.clusterSize;
  ql::Result<ql::RowTVLayout> tv = ql::makeRowTVLayout(spec);
  if (!tv.ok())
    return kernel.emitOpError("cannot build the thread-value layout: ")
           << tv.error();
  return *tv;
}

TVLayoutAttr
mlir::quack::getTVLayoutAttr(MLIRContext *context,
                             const ::quack::layout::RowTVLayout &layout) {
  return TVLayoutAttr::get(context, LayoutAttr::get(context, layout.tv),
                           LayoutAttr::get(context, layout.tile));
}

StringRef mlir::quack::stringifyCopy(KernelConfig::Copy copy) {
  switch (copy) {
  case KernelConfig::Copy::Global:
    return "global";
  case KernelConfig::Copy::Bulk:
    return "bulk";
  case KernelConfig::Copy::Tensor:
    return "tensor";
  }
  llvm_unreachable("unknown copy path");
}

std::optional<KernelConfig::Copy> mlir::quack::parseCopy(StringRef name) {
  if (name == "global")
    return KernelConfig::Copy::Global;
  if (name == "bulk")
    return KernelConfig::Copy::Bulk;
  if (name == "tensor")
    return KernelConfig::Copy::Tensor;
  return std::nullopt;
}

std::optional<TensorBox> mlir::quack::getTensorBox(int64_t rowLength,
                                                   int64_t colsPerCta,
                                                   int64_t rows,
                                                   int64_t elementBytes) {
  for (int64_t inner = kMaxTensorBox; inner >= 1; inner /= 2) {
    if (rowLength % inner != 0 || colsPerCta % inner != 0 ||
        (inner * elementBytes) % 16 != 0)
      continue;
    int64_t total = colsPerCta / inner;
    for (int64_t groups = std::min(kMaxTensorBox, total); groups >= 1;
         --groups) {
      if (total % groups != 0)
        continue;
      if (groups != total && (inner * groups * rows * elementBytes) % 128 != 0)
        continue;
      return TensorBox{inner, groups};
    }
  }
  return std::nullopt;
}

BulkBufferLayout mlir::quack::getBulkBufferLayout(KernelOp kernel,
                                                  const KernelConfig &config) {
  BulkBufferLayout layout;
  layout.colsPerCta = config.colsPerCta();
  for (LoadOp load : kernel.getBody().front().getOps<LoadOp>()) {
    auto type = dyn_cast<MemRefType>(load.getSource().getType());
    if (!type || classifyArgType(type) != ArgKind::Matrix)
      continue;
    int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    layout.loads.push_back(load.getOperation());
    layout.offsets.push_back(layout.bufferBytes);
    layout.elementBytes.push_back(bytes);
    if (config.copy == KernelConfig::Copy::Tensor)
      layout.tensorBoxes.push_back(
          getTensorBox(cast<MemRefType>(type).getDimSize(1),
                       layout.colsPerCta, config.rowsPerCta, bytes)
              .value_or(TensorBox()));
    layout.bufferBytes +=
        llvm::alignTo(config.rowsPerCta * layout.colsPerCta * bytes, 128);
  }
  return layout;
}

FailureOr<KernelConfig> KernelConfig::fromKernel(KernelOp kernel) {
  auto dict = kernel->getAttrOfType<DictionaryAttr>(kConfigAttrName);
  if (!dict)
    return kernel.emitOpError("has no '")
           << kConfigAttrName << "'; run quack-select-config first";
  KernelConfig config;
  auto read = [&](StringRef key, int64_t &field) -> LogicalResult {
    auto value = dict.getAs<IntegerAttr>(key);
    if (!value || value.getInt() <= 0)
      return kernel.emitOpError("'")
             << kConfigAttrName << "' needs a positive integer '" << key
             << "'";
    field = value.getInt();
    return success();
  };
  if (failed(read("vector", config.vector)) ||
      failed(read("threads_per_row", config.threadsPerRow)) ||
      failed(read("vectors_per_thread", config.vectorsPerThread)) ||
      failed(read("rows_per_cta", config.rowsPerCta)) ||
      failed(read("alignment", config.alignment)))
    return failure();
  // Optional: configs written before clusters existed have no cluster_size.
  if (dict.get("cluster_size") &&
      failed(read("cluster_size", config.clusterSize)))
    return failure();
  if (auto v = dict.getAs<IntegerAttr>("min_ctas_per_sm")) {
    if (v.getInt() < 0 || v.getInt() > 32)
      return kernel.emitOpError("'")
             << kConfigAttrName << "' needs 'min_ctas_per_sm' in [0, 32]";
    config.minCtasPerSm = v.getInt();
  }
  // Optional flags (false when absent).
  auto readFlag = [&](StringRef key, bool &field) -> LogicalResult {
    Attribute v = dict.get(key);
    if (!v)
      return success();
    auto flag = dyn_cast<BoolAttr>(v);
    if (!flag)
      return kernel.emitOpError("'")
             << kConfigAttrName << "' needs a boolean '" << key << "'";
    field = flag.getValue();
    return success();
  };
  if (failed(readFlag("prefetch", config.prefetch)) ||
      failed(readFlag("remat", config.remat)) ||
      failed(readFlag("sink", config.sinkTail)))
    return failure();
  if (Attribute copy = dict.get("copy")) {
    auto name = dyn_cast<StringAttr>(copy);
    std::optional<Copy> path;
    if (name)
      path = parseCopy(name.getValue());
    if (!path)
      return kernel.emitOpError("'")
             << kConfigAttrName
             << "' needs 'copy' = \"global\", \"bulk\" or \"tensor\"";
    config.copy = *path;
  }
  // Written only where some sums over rows keep their partials in shared
  // memory.
  if (dict.get("shared_sums") && failed(read("shared_sums", config.sharedSums)))
    return failure();
  if (dict.get("stages")) {
    if (failed(read("stages", config.stages)))
      return failure();
    if (config.stages < 2 || config.stages > 8)
      return kernel.emitOpError("'")
             << kConfigAttrName << "' needs 'stages' in [2, 8]";
  }
  if (config.clusterSize > kMaxClusterSize)
    return kernel.emitOpError("'")
           << kConfigAttrName << "' asks for a cluster of "
           << config.clusterSize << " CTAs; at most " << kMaxClusterSize;
  if (config.clusterSize > 1 && config.rowsPerCta != 1)
    return kernel.emitOpError("'")
           << kConfigAttrName
           << "' splits rows over a cluster, which needs rows_per_cta = 1";
  if (!llvm::isPowerOf2_64(config.threadsPerRow) ||
      !llvm::isPowerOf2_64(config.vector))
    return kernel.emitOpError("'")
           << kConfigAttrName
           << "' needs power-of-two 'threads_per_row' and 'vector'";
  if (config.ctaThreads() > kMaxCtaThreads)
    return kernel.emitOpError("'")
           << kConfigAttrName << "' asks for " << config.ctaThreads()
           << " threads per CTA; at most " << kMaxCtaThreads;
  return config;
}
