//===- SinkToUses.cpp - quack-sink-to-uses --------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Moves the computation after a kernel's last exchange next to its uses, so
// that the fragments of a row are finished and stored one after another.
// The rules are listed in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/KernelConfig.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKSINKTOUSES
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// The address space of a register copy's pointer operand, if `op` is one
/// (a load: one source, one result; a store: two sources, no result).
std::optional<unsigned> registerCopySpace(Operation *op) {
  auto copy = dyn_cast<CopyOp>(op);
  if (!copy || copy.getAtom() != CopyAtom::Vector)
    return std::nullopt;
  Value pointer = copy->getNumResults() == 1 ? copy->getOperand(0)
                                             : copy->getOperand(1);
  auto type = dyn_cast<LLVM::LLVMPointerType>(pointer.getType());
  if (!type)
    return std::nullopt;
  return type.getAddressSpace();
}

bool isGlobalLoad(Operation *op) {
  return op->getNumResults() == 1 && registerCopySpace(op) == 1u;
}

bool isGlobalStore(Operation *op) {
  return op->getNumResults() == 0 && registerCopySpace(op) == 1u;
}

/// Ops this pass may move: no memory effects and no regions, or a load of
/// global memory into registers.
bool isMovable(Operation *op) {
  if (isGlobalLoad(op))
    return true;
  return op->getNumRegions() == 0 && op->getNumResults() > 0 &&
         !op->hasTrait<OpTrait::IsTerminator>() && isMemoryEffectFree(op);
}

/// Moves `op` to just before its first user in `block` (users nested in
/// an op of `block` count as that op).
void sinkToFirstUse(Block &block, Operation *op) {
  Operation *first = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *inBlock = block.findAncestorOpInBlock(*user);
    if (!inBlock)
      continue;
    if (!first || inBlock->isBeforeInBlock(first))
      first = inBlock;
  }
  if (first && op->getNextNode() != first)
    op->moveBefore(first);
}

/// Sinks the movable ops after the last op of `block` that is neither
/// movable nor a store of global memory.
void sinkTail(Block &block) {
  Operation *fence = nullptr;
  for (Operation &op : llvm::reverse(block)) {
    if (!isMovable(&op) && !isGlobalStore(&op) &&
        !op.hasTrait<OpTrait::IsTerminator>()) {
      fence = &op;
      break;
    }
  }
  SmallVector<Operation *> tail;
  for (Operation *op = fence ? fence->getNextNode() : &block.front(); op;
       op = op->getNextNode())
    tail.push_back(op);
  for (Operation *op : llvm::reverse(tail)) {
    if (!isMovable(op))
      continue;
    sinkToFirstUse(block, op);
  }
  // Ops without memory effects may cross the fence and any other op (a
  // barrier that lets the stores overwrite gathered inputs, an exchange).
  if (!fence)
    return;
  SmallVector<Operation *> head;
  for (Operation &op : block) {
    if (&op == fence)
      break;
    head.push_back(&op);
  }
  for (Operation *op : llvm::reverse(head))
    if (isMovable(op) && !isGlobalLoad(op))
      sinkToFirstUse(block, op);
}

struct QuackSinkToUsesPass
    : public mlir::quack::impl::QuackSinkToUsesBase<QuackSinkToUsesPass> {
  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp func) {
      auto config = func->getAttrOfType<DictionaryAttr>(kConfigAttrName);
      auto sink = config ? config.getAs<BoolAttr>("sink") : BoolAttr();
      if (!sink || !sink.getValue())
        return;
      func.walk([](Block *block) { sinkTail(*block); });
    });
  }
};

} // namespace
