//===- TensorMapArgs.cpp - tensor maps as grid-constant parameters -------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Conversion/Passes.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKLOWERTENSORMAPARGS
#include "quack/Conversion/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;

namespace {

/// Bytes and alignment of a CUtensorMap.
constexpr int64_t kTensorMapBytes = 128;
constexpr int64_t kTensorMapAlignment = 64;

struct QuackLowerTensorMapArgsPass
    : public mlir::quack::impl::QuackLowerTensorMapArgsBase<
          QuackLowerTensorMapArgsPass> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto indices =
          func->getAttrOfType<DenseI64ArrayAttr>("quack.tensor_map_args");
      if (!indices)
        return;
      if (!func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName())) {
        func.emitOpError("has tensor-map parameters but is not a kernel");
        return signalPassFailure();
      }
      Builder b(func.getContext());
      Type bytes =
          LLVM::LLVMArrayType::get(b.getI8Type(), kTensorMapBytes);
      for (int64_t index : indices.asArrayRef()) {
        if (index < 0 || index >= func.getNumArguments() ||
            !isa<LLVM::LLVMPointerType>(func.getArgument(index).getType())) {
          func.emitOpError("quack.tensor_map_args names parameter ")
              << index << ", which is not a pointer parameter";
          return signalPassFailure();
        }
        func.setArgAttr(index, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(bytes));
        func.setArgAttr(index, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(kTensorMapAlignment));
        func.setArgAttr(index, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
      func->removeAttr("quack.tensor_map_args");
    });
  }
};

} // namespace
