//===- QuackOps.cpp - quack operations ------------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;
using namespace mlir::quack;

//===----------------------------------------------------------------------===//
// Argument kinds
//===----------------------------------------------------------------------===//

/// True when `type` has a unit-stride last dimension and otherwise any
/// (possibly dynamic) strides.
static bool hasUnitInnerStride(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return false;
  return offset == 0 && !strides.empty() && strides.back() == 1;
}

ArgKind mlir::quack::classifyArgType(Type type) {
  if (isa<FloatType, IntegerType>(type))
    return ArgKind::Scalar;
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !hasUnitInnerStride(memref))
    return ArgKind::Invalid;
  Type elt = memref.getElementType();
  if (!isa<FloatType, IntegerType>(elt))
    return ArgKind::Invalid;
  if (memref.getRank() == 2 && memref.isDynamicDim(0) &&
      !memref.isDynamicDim(1))
    return ArgKind::Matrix;
  if (memref.getRank() == 1 && memref.getLayout().isIdentity())
    return memref.isDynamicDim(0) ? ArgKind::PerRow : ArgKind::Row;
  return ArgKind::Invalid;
}

/// The row length of a matrix or row-vector type.
int64_t mlir::quack::getExchangedValues(Operation *op) {
  if (isa<ReduceOp>(op))
    return 1;
  if (isa<LogSumExpOp, ArgMaxOp>(op))
    return 2;
  if (isa<MomentsOp>(op))
    return 3;
  return 0;
}

static int64_t rowLengthOf(MemRefType type) {
  return type.getShape().back();
}

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType = [](Builder &builder, ArrayRef<Type> argTypes,
                          ArrayRef<Type> results,
                          function_interface_impl::VariadicFlag,
                          std::string &) {
    return builder.getFunctionType(argTypes, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void KernelOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

std::optional<int64_t> KernelOp::getRowLength() {
  for (Type type : getArgumentTypes()) {
    ArgKind kind = classifyArgType(type);
    if (kind == ArgKind::Matrix || kind == ArgKind::Row)
      return rowLengthOf(cast<MemRefType>(type));
  }
  return std::nullopt;
}

ArgRole KernelOp::getArgRole(unsigned index) {
  if (auto role = getArgAttrOfType<StringAttr>(index, kRoleAttrName))
    if (auto parsed = symbolizeArgRole(role.getValue()))
      return *parsed;
  return ArgRole::Input;
}

std::string KernelOp::getArgName(unsigned index) {
  if (auto name = getArgAttrOfType<StringAttr>(index, kNameAttrName))
    return name.getValue().str();
  return "arg" + std::to_string(index);
}

LogicalResult KernelOp::verify() {
  if (!getResultTypes().empty())
    return emitOpError("must not return values; results are written to "
                       "output arguments");
  std::optional<int64_t> rowLength;
  for (auto [index, type] : llvm::enumerate(getArgumentTypes())) {
    ArgKind kind = classifyArgType(type);
    if (kind == ArgKind::Invalid)
      return emitOpError("argument #")
             << index << " has type " << type
             << ", which is not a matrix memref<?xNxT, strided<[?, 1]>>, a "
                "row vector memref<NxT>, a per-row vector memref<?xT> or a "
                "scalar";
    if (kind == ArgKind::Matrix || kind == ArgKind::Row) {
      int64_t length = rowLengthOf(cast<MemRefType>(type));
      if (length <= 0)
        return emitOpError("argument #")
               << index << " has an empty row (N = " << length << ")";
      if (rowLength && *rowLength != length)
        return emitOpError("argument #")
               << index << " has row length " << length
               << " but an earlier argument has " << *rowLength;
      rowLength = length;
    }
    if (Attribute role = getArgAttr(index, kRoleAttrName)) {
      auto str = dyn_cast<StringAttr>(role);
      if (!str || !symbolizeArgRole(str.getValue()))
        return emitOpError("argument #")
               << index << " has role " << role
               << "; expected \"input\" or \"output\"";
      if (str.getValue() == "output" && kind == ArgKind::Scalar)
        return emitOpError("argument #")
               << index << " is a scalar and cannot be an output";
    }
    if (Attribute name = getArgAttr(index, kNameAttrName))
      if (!isa<StringAttr>(name))
        return emitOpError("argument #")
               << index << " has a non-string " << kNameAttrName;
  }
  return success();
}

LogicalResult KernelOp::verifyRegions() {
  Block &entry = getBody().front();
  if (entry.getNumArguments() != getArgumentTypes().size())
    return emitOpError("entry block has ")
           << entry.getNumArguments() << " arguments but the kernel type has "
           << getArgumentTypes().size();
  for (auto [arg, type] : llvm::zip(entry.getArguments(), getArgumentTypes()))
    if (arg.getType() != type)
      return emitOpError("entry block argument type ")
             << arg.getType() << " does not match the kernel type " << type;
  return success();
}

//===----------------------------------------------------------------------===//
// LoadOp / StoreOp
//===----------------------------------------------------------------------===//

/// The row-level value type that a load of `memref` gives (or a store takes).
static Type rowValueTypeOf(MemRefType memref) {
  switch (classifyArgType(memref)) {
  case ArgKind::Matrix:
  case ArgKind::Row:
    return VectorType::get({rowLengthOf(memref)}, memref.getElementType());
  case ArgKind::PerRow:
    return memref.getElementType();
  default:
    return {};
  }
}

LogicalResult LoadOp::verify() {
  auto memref = getSource().getType();
  Type expected = rowValueTypeOf(memref);
  if (!expected)
    return emitOpError("source ")
           << memref << " is not a matrix, row vector or per-row vector";
  if (getResult().getType() != expected)
    return emitOpError("result type ")
           << getResult().getType() << " does not match the source; expected "
           << expected;
  return success();
}

LogicalResult StoreOp::verify() {
  auto memref = getDest().getType();
  ArgKind kind = classifyArgType(memref);
  if (kind == ArgKind::Row)
    return emitOpError("cannot store to row vector ")
           << memref << ", which every row shares";
  Type expected = rowValueTypeOf(memref);
  if (!expected)
    return emitOpError("destination ")
           << memref << " is not a matrix or per-row vector";
  if (getValue().getType() != expected)
    return emitOpError("value type ")
           << getValue().getType()
           << " does not match the destination; expected " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// SumRowsOp
//===----------------------------------------------------------------------===//

LogicalResult SumRowsOp::verify() {
  auto memref = getDest().getType();
  if (classifyArgType(memref) != ArgKind::Row)
    return emitOpError("destination ")
           << memref << " is not a row vector memref<NxT>";
  if (!isa<FloatType>(memref.getElementType()))
    return emitOpError("destination element type ")
           << memref.getElementType() << " is not a float type";
  if (getValue().getType().getDimSize(0) != memref.getDimSize(0))
    return emitOpError("value has ")
           << getValue().getType().getDimSize(0)
           << " elements but the destination has " << memref.getDimSize(0);
  auto arg = dyn_cast<BlockArgument>(getDest());
  auto kernel = arg ? dyn_cast<KernelOp>(arg.getOwner()->getParentOp())
                    : KernelOp();
  if (!kernel || kernel != (*this)->getParentOp())
    return emitOpError("destination must be an argument of the enclosing "
                       "quack.kernel");
  if (kernel.getArgRole(arg.getArgNumber()) != ArgRole::Output)
    return emitOpError("destination '")
           << kernel.getArgName(arg.getArgNumber())
           << "' is not an output of the kernel";
  for (Operation *user : getDest().getUsers())
    if (user != getOperation() && isa<SumRowsOp>(user))
      return emitOpError("destination '")
             << kernel.getArgName(arg.getArgNumber())
             << "' is summed into by more than one quack.sum_rows";
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  auto memref = getSource().getType();
  if (classifyArgType(memref) != ArgKind::Matrix)
    return emitOpError("source ")
           << memref << " is not a matrix memref<?xNxT, strided<[?, 1]>>";
  if (getResult().getType() != memref.getElementType())
    return emitOpError("result type ")
           << getResult().getType() << " must be the element type "
           << memref.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  Type elt = getInput().getType().getElementType();
  if (getResult().getType() != elt)
    return emitOpError("result type ")
           << getResult().getType() << " must be the element type " << elt;
  return success();
}

// Custom directives of the thread-level ops (QuackThreadOps.cpp).
namespace mlir::quack {
ParseResult parseScope(OpAsmParser &parser, ReduceScopeAttr &scope);
void printScope(OpAsmPrinter &printer, Operation *op, ReduceScopeAttr scope);
ParseResult parseTerms(OpAsmParser &parser, DenseI32ArrayAttr &terms);
void printTerms(OpAsmPrinter &printer, Operation *op, DenseI32ArrayAttr terms);
} // namespace mlir::quack

#define GET_OP_CLASSES
#include "quack/Dialect/Quack/IR/QuackOps.cpp.inc"
