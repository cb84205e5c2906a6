//===- QuackStageOps.cpp - staging rows in shared memory ------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Builders and verifiers of the staging ops: what each op can check alone
// (its mbarrier offsets, its body's argument, the shared-memory global it
// names). Where the ops sit relative to each other is
// quack-verify-staging's job.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "SharedMemory.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::quack;
using namespace mlir::quack::detail;

//===----------------------------------------------------------------------===//
// StageInitOp
//===----------------------------------------------------------------------===//

LogicalResult StageInitOp::verify() {
  ArrayRef<int64_t> barriers = getBarriers();
  if (barriers.empty())
    return emitOpError("names no mbarrier");
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t offset : barriers) {
    if (!inSharedRange(offset) || offset % 8 != 0)
      return emitOpError("mbarrier offset ")
             << offset << " is not a multiple of 8 in [0, 2^24)";
    if (!seen.insert(offset).second)
      return emitOpError("names the mbarrier at offset ") << offset
                                                          << " twice";
  }
  return success();
}

LogicalResult StageInitOp::verifySymbolUses(SymbolTableCollection &tables) {
  int64_t end = 0;
  for (int64_t offset : getBarriers()) {
    if (!inSharedRange(offset))
      return success(); // The op's verifier reports it.
    end = std::max(end, offset + 8);
  }
  return verifySharedGlobal(*this, tables, getSmemAttr(), end,
                            /*allowDynamic=*/true);
}

//===----------------------------------------------------------------------===//
// StageFillOp
//===----------------------------------------------------------------------===//

void StageFillOp::build(OpBuilder &builder, OperationState &state,
                        FlatSymbolRefAttr smem, Value barrier, Value bytes) {
  state.addAttribute(getSmemAttrName(state.name), smem);
  state.addOperands({barrier, bytes});
  Region *body = state.addRegion();
  Block *block = new Block();
  block->addArgument(LLVM::LLVMPointerType::get(builder.getContext(), 3),
                     state.location);
  body->push_back(block);
}

LogicalResult StageFillOp::verify() {
  Block &block = getBody().front();
  auto ptr = block.getNumArguments() == 1
                 ? dyn_cast<LLVM::LLVMPointerType>(
                       block.getArgument(0).getType())
                 : LLVM::LLVMPointerType();
  if (!ptr || ptr.getAddressSpace() != 3)
    return emitOpError("body must take one argument, the mbarrier's "
                       "address (!llvm.ptr<3>)");
  return success();
}

LogicalResult StageFillOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifySharedGlobal(*this, tables, getSmemAttr(), 8,
                            /*allowDynamic=*/true);
}

//===----------------------------------------------------------------------===//
// StageWaitOp
//===----------------------------------------------------------------------===//

LogicalResult StageWaitOp::verify() {
  APInt parity;
  if (matchPattern(getParity(), m_ConstantInt(&parity)) &&
      parity.getZExtValue() > 1)
    return emitOpError("waits for parity ")
           << parity.getZExtValue() << "; a phase's parity is 0 or 1";
  return success();
}

LogicalResult StageWaitOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifySharedGlobal(*this, tables, getSmemAttr(), 8,
                            /*allowDynamic=*/true);
}
