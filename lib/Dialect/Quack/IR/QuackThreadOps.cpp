//===- QuackThreadOps.cpp - thread-level quack operations -----------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// The custom syntax and verifier of quack.allreduce (its scope and lanes,
// its terms against its values' types, and the scratch shared memory a
// block exchange needs), and the verifier of quack.copy (each atom's
// operands, fragment sizes and alignment).
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "SharedMemory.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/IR/Matchers.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::quack;
using namespace mlir::quack::detail;

static constexpr int64_t kWarpSize = 32;
static constexpr int64_t kMaxCtaThreads = 1024;
/// The largest fragment of a vector copy: 16 f32 values, the widening of a
/// 128-bit vector of 1-byte elements (four 16-byte instructions).
static constexpr int64_t kMaxVectorCopyBytes = 64;

//===----------------------------------------------------------------------===//
// Custom directives: `warp` / `block` and `[add, logsumexp, ...]`.
//===----------------------------------------------------------------------===//

namespace mlir::quack {

ParseResult parseScope(OpAsmParser &parser, ReduceScopeAttr &scope) {
  SMLoc at = parser.getCurrentLocation();
  StringRef keyword;
  if (failed(parser.parseKeyword(&keyword)))
    return failure();
  std::optional<ReduceScope> value = symbolizeReduceScope(keyword);
  if (!value)
    return parser.emitError(at, "unknown scope '")
           << keyword << "', expected 'warp' or 'block'";
  scope = ReduceScopeAttr::get(parser.getContext(), *value);
  return success();
}

void printScope(OpAsmPrinter &printer, Operation *, ReduceScopeAttr scope) {
  printer << stringifyReduceScope(scope.getValue());
}

ParseResult parseTerms(OpAsmParser &parser, DenseI32ArrayAttr &terms) {
  SmallVector<int32_t> kinds;
  auto parseOne = [&]() -> ParseResult {
    SMLoc at = parser.getCurrentLocation();
    StringRef keyword;
    if (failed(parser.parseKeyword(&keyword)))
      return failure();
    std::optional<ReductionTerm> term = symbolizeReductionTerm(keyword);
    if (!term)
      return parser.emitError(at, "unknown reduction term '")
             << keyword
             << "', expected add, max, min, logsumexp, argmax or moments";
    kinds.push_back(static_cast<int32_t>(*term));
    return success();
  };
  if (failed(parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                            parseOne)))
    return failure();
  terms = DenseI32ArrayAttr::get(parser.getContext(), kinds);
  return success();
}

void printTerms(OpAsmPrinter &printer, Operation *, DenseI32ArrayAttr terms) {
  printer << '[';
  llvm::interleaveComma(terms.asArrayRef(), printer, [&](int32_t kind) {
    std::optional<ReductionTerm> term = symbolizeReductionTerm(kind);
    // The verifier rejects unknown kinds; print them as numbers regardless.
    if (term)
      printer << stringifyReductionTerm(*term);
    else
      printer << kind;
  });
  printer << ']';
}

} // namespace mlir::quack

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

SmallVector<ReductionTerm> AllReduceOp::getTermKinds() {
  SmallVector<ReductionTerm> kinds;
  for (int32_t kind : getTerms())
    if (std::optional<ReductionTerm> term = symbolizeReductionTerm(kind))
      kinds.push_back(*term);
  return kinds;
}

int64_t AllReduceOp::getTermWidth(ReductionTerm term) {
  switch (term) {
  case ReductionTerm::LogSumExp:
  case ReductionTerm::ArgMax:
    return 2;
  case ReductionTerm::Moments:
    return 3;
  default:
    return 1;
  }
}

int64_t AllReduceOp::getScratchBytes() {
  if (getScope() != ReduceScope::Block || !getGroups())
    return 0;
  return *getGroups() * (getLanes() / kWarpSize) *
         static_cast<int64_t>(getValues().size()) * 4;
}

LogicalResult AllReduceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  for (Value v : operands)
    inferred.push_back(v.getType());
  return success();
}

LogicalResult AllReduceOp::verify() {
  int64_t lanes = getLanes();
  bool block = getScope() == ReduceScope::Block;
  if (lanes < 1 || !llvm::isPowerOf2_64(lanes) ||
      (block ? lanes < 2 * kWarpSize || lanes > kMaxCtaThreads
             : lanes > kWarpSize))
    return emitOpError("a ")
           << stringifyReduceScope(getScope()) << " group of " << lanes
           << " lanes; expected a power of two "
           << (block ? "in [64, 1024]" : "in [1, 32]");

  // The terms against the values: add/max/min take one f32 or i32,
  // logsumexp an (f32, f32) pair, argmax an (f32, i32) pair, moments an
  // (f32, f32, f32) triple.
  if (getTerms().empty())
    return emitOpError("combines no term");
  ValueRange values = getValues();
  size_t next = 0;
  for (auto [t, kind] : llvm::enumerate(getTerms())) {
    std::optional<ReductionTerm> term = symbolizeReductionTerm(kind);
    if (!term)
      return emitOpError("term ") << t << " has unknown kind " << kind;
    int64_t width = getTermWidth(*term);
    if (next + width > values.size())
      return emitOpError("terms need more than the ")
             << values.size() << " values given";
    Type f32 = Float32Type::get(getContext());
    Type i32 = IntegerType::get(getContext(), 32);
    // The types a pair needs, position by position.
    SmallVector<Type, 3> expected;
    StringRef pair;
    if (*term == ReductionTerm::LogSumExp) {
      expected = {f32, f32};
      pair = "an (f32, f32) pair";
    } else if (*term == ReductionTerm::ArgMax) {
      expected = {f32, i32};
      pair = "an (f32, i32) pair";
    } else if (*term == ReductionTerm::Moments) {
      expected = {f32, f32, f32};
      pair = "an (f32, f32, f32) triple";
    }
    // add/max/min take an f32 or an i32, as the operand constraint says.
    for (auto [k, type] : llvm::enumerate(expected)) {
      Type actual = values[next + k].getType();
      if (actual != type)
        return emitOpError("term ")
               << t << " (" << stringifyReductionTerm(*term) << ") combines "
               << pair << "; value " << next + k << " is " << actual;
    }
    next += width;
  }
  if (next != values.size())
    return emitOpError("has ") << values.size() << " values but its terms "
                               << "combine " << next;

  // Only a block exchange goes through shared memory.
  bool hasScratch = getSmem() || getScratch();
  if (!block) {
    if (hasScratch || getGroups())
      return emitOpError("in a warp uses no scratch memory or groups");
    return success();
  }
  if (!getSmem() || !getScratch() || !getGroups())
    return emitOpError("in a block needs scratch shared memory and the "
                       "CTA's group count");
  int64_t groups = *getGroups();
  if (groups < 1 || groups > kMaxCtaThreads / lanes)
    return emitOpError("")
           << groups << " groups of " << lanes << " lanes exceed a CTA of "
           << kMaxCtaThreads << " threads";
  int64_t offset = *getScratch();
  if (!inSharedRange(offset) || offset % 4 != 0)
    return emitOpError("scratch offset ")
           << offset << " is not a multiple of 4 in [0, 2^24)";
  return success();
}

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &tables) {
  if (getScope() != ReduceScope::Block || !getSmem() || !getScratch() ||
      !inSharedRange(*getScratch()))
    return success(); // The op's verifier reports it.
  return verifySharedGlobal(*this, tables, getSmemAttr(),
                            *getScratch() + getScratchBytes());
}

//===----------------------------------------------------------------------===//
// CopyOp
//===----------------------------------------------------------------------===//

/// The address space of `type` if it is an LLVM pointer.
static std::optional<unsigned> pointerSpace(Type type) {
  if (auto ptr = dyn_cast<LLVM::LLVMPointerType>(type))
    return ptr.getAddressSpace();
  return std::nullopt;
}

/// Bytes of a fragment (a scalar or a vector of integers or floats).
static std::optional<int64_t> fragmentBytes(Type type, int64_t &elementBytes) {
  Type element = type;
  int64_t count = 1;
  if (auto vec = dyn_cast<VectorType>(type)) {
    if (vec.getRank() != 1 || vec.isScalable())
      return std::nullopt;
    element = vec.getElementType();
    count = vec.getNumElements();
  }
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  elementBytes = element.getIntOrFloatBitWidth() / 8;
  // Larger than any vector copy (and no overflow below).
  if (count > kMaxVectorCopyBytes || elementBytes > kMaxVectorCopyBytes)
    return std::nullopt;
  return count * elementBytes;
}

LogicalResult CopyOp::verify() {
  ValueRange sources = getSources();
  auto expectPointer = [&](size_t i, StringRef what,
                           ArrayRef<unsigned> spaces) -> LogicalResult {
    std::optional<unsigned> space = pointerSpace(sources[i].getType());
    if (space && llvm::is_contained(spaces, *space))
      return success();
    InFlightDiagnostic diag = emitOpError("operand ")
                              << i << " (" << what << ") must be an !llvm.ptr in "
                              << "address space ";
    llvm::interleave(spaces, diag, " or ");
    return diag << ", not " << sources[i].getType();
  };
  auto expectI32 = [&](size_t i, StringRef what) -> LogicalResult {
    if (sources[i].getType().isInteger(32))
      return success();
    return emitOpError("operand ")
           << i << " (" << what << ") must be i32, not "
           << sources[i].getType();
  };
  // An asynchronous copy completes on its fill's mbarrier, operand
  // `barrierIndex`: it may not exist outside a quack.stage.fill.
  auto verifyInFill = [&](size_t barrierIndex) -> LogicalResult {
    auto fill = (*this)->getParentOfType<StageFillOp>();
    if (!fill)
      return emitOpError("a ")
             << stringifyCopyAtom(getAtom())
             << " copy must be inside a quack.stage.fill, which arms the "
                "mbarrier it completes on";
    Region &body = fill.getBody();
    if (body.empty() || body.front().getNumArguments() != 1 ||
        sources[barrierIndex] != fill.getBarrierAddress())
      return emitOpError("a ")
             << stringifyCopyAtom(getAtom())
             << " copy must complete on its quack.stage.fill's mbarrier "
                "(the fill's body argument)";
    return success();
  };
  CopyAtom atom = getAtom();
  if (atom != CopyAtom::Vector) {
    if (getResult())
      return emitOpError("an asynchronous ")
             << stringifyCopyAtom(atom) << " copy has no result";
    if (getAlignment())
      return emitOpError("a ") << stringifyCopyAtom(atom)
                               << " copy takes no alignment";
  }
  switch (atom) {
  case CopyAtom::Vector: {
    bool load = static_cast<bool>(getResult());
    size_t expected = load ? 1 : 2;
    if (sources.size() != expected)
      return emitOpError("a vector ")
             << (load ? "load" : "store") << " takes " << expected
             << " operands, not " << sources.size();
    if (failed(expectPointer(expected - 1, "the address", {1, 3})))
      return failure();
    Type fragment = load ? getResult().getType() : sources[0].getType();
    int64_t elementBytes = 0;
    std::optional<int64_t> bytes = fragmentBytes(fragment, elementBytes);
    if (!bytes || *bytes > kMaxVectorCopyBytes ||
        !llvm::isPowerOf2_64(*bytes))
      return emitOpError("copies ")
             << fragment << "; a vector copy moves a power of two of bytes "
             << "up to " << kMaxVectorCopyBytes << " of integers or floats";
    if (!getAlignment())
      return emitOpError("a vector copy needs its alignment");
    int64_t alignment = *getAlignment();
    if (!llvm::isPowerOf2_64(alignment) || alignment < elementBytes ||
        alignment > *bytes)
      return emitOpError("alignment ")
             << alignment << " is not a power of two in [" << elementBytes
             << ", " << *bytes << "] for " << fragment;
    return success();
  }
  case CopyAtom::Bulk:
    if (sources.size() != 4)
      return emitOpError("a bulk copy takes 4 operands (destination, source, "
                         "bytes, mbarrier), not ")
             << sources.size();
    if (failed(expectPointer(0, "the destination", {3})) ||
        failed(expectPointer(1, "the source", {1})) ||
        failed(expectI32(2, "the byte count")) ||
        failed(expectPointer(3, "the mbarrier", {3})))
      return failure();
    {
      APInt bytes;
      if (matchPattern(sources[2], m_ConstantInt(&bytes)) &&
          (bytes.getSExtValue() <= 0 || bytes.getSExtValue() % 16 != 0))
        return emitOpError("a bulk copy moves a positive multiple of 16 "
                           "bytes, not ")
               << bytes.getSExtValue();
    }
    return verifyInFill(3);
  case CopyAtom::Tensor:
    if (sources.size() != 6)
      return emitOpError("a tensor copy takes 6 operands (destination, "
                         "tensor map, 3 coordinates, mbarrier), not ")
             << sources.size();
    if (failed(expectPointer(0, "the destination", {3})) ||
        failed(expectPointer(1, "the tensor map", {0})) ||
        failed(expectI32(2, "a coordinate")) ||
        failed(expectI32(3, "a coordinate")) ||
        failed(expectI32(4, "a coordinate")) ||
        failed(expectPointer(5, "the mbarrier", {3})))
      return failure();
    return verifyInFill(5);
  }
  llvm_unreachable("unknown copy atom");
}
