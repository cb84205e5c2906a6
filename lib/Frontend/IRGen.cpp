//===- IRGen.cpp - .qk syntax tree to row-level quack IR
//--------------------===//
//
// Part of the quack project.
//
// Binds compile-time parameters and flags, type-checks each kernel and
// builds a `quack.kernel`. Values are rows (`vector<N x K>`) or per-row
// scalars of three kinds: floats (f32: all float arithmetic is f32, inputs
// are widened on load and outputs narrowed on store), integers (i64, for
// indices) and conditions (i1, from comparisons).
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Frontend/Frontend.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <set>

using namespace mlir;
using namespace ::quack;
using namespace ::quack::qk;

namespace {

/// A value of the language: a row (N elements) or a per-row scalar, of one
/// of three kinds. Floats are f32, integers i64, conditions i1.
struct RValue {
  enum class Kind { Float, Int, Bool };
  Value value;
  bool isRow = false;
  Kind kind = Kind::Float;
};

using Kind = RValue::Kind;

StringRef kindName(Kind kind) {
  switch (kind) {
  case Kind::Float:
    return "a float";
  case Kind::Int:
    return "an integer";
  case Kind::Bool:
    return "a condition";
  }
  return "";
}

class IRGen {
public:
  IRGen(llvm::SourceMgr &sourceMgr, unsigned bufferId, MLIRContext *context,
        const Bindings &bindings)
      : sourceMgr(sourceMgr), bufferId(bufferId), context(context),
        bindings(bindings), b(context) {}

  OwningOpRef<ModuleOp> build(const File &file, StringRef onlyKernel) {
    OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(context));
    bool found = false;
    for (const Kernel &kernel : file.kernels) {
      if (!onlyKernel.empty() && kernel.name != onlyKernel)
        continue;
      found = true;
      for (const GenericParam &g : kernel.generics)
        declared.insert(g.name);
      b.setInsertionPointToEnd(module->getBody());
      if (failed(buildKernel(kernel)))
        return nullptr;
    }
    if (!found) {
      std::string names;
      for (const Kernel &k : file.kernels)
        names += (names.empty() ? "" : ", ") + k.name;
      mlir::emitError(fileLoc())
          << "no kernel named '" << onlyKernel << "'; the file has " << names;
      return nullptr;
    }
    for (const auto &[name, value] : bindings)
      if (!declared.contains(name)) {
        mlir::emitError(fileLoc())
            << "unknown binding -D " << name << "=" << value
            << ": no kernel compiled from this file has a parameter '" << name
            << "'";
        return nullptr;
      }
    return module;
  }

private:
  //===--------------------------------------------------------------------===//
  // Locations and errors
  //===--------------------------------------------------------------------===//

  Location loc(llvm::SMLoc at) {
    auto [line, col] = sourceMgr.getLineAndColumn(at, bufferId);
    return FileLineColLoc::get(context, bufferName(), line, col);
  }
  Location fileLoc() { return UnknownLoc::get(context); }
  StringRef bufferName() {
    return sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier();
  }
  InFlightDiagnostic error(llvm::SMLoc at) { return mlir::emitError(loc(at)); }

  //===--------------------------------------------------------------------===//
  // Compile-time parameters
  //===--------------------------------------------------------------------===//

  const GenericParam *generic(const Kernel &kernel, StringRef name) {
    for (const GenericParam &g : kernel.generics)
      if (g.name == name)
        return &g;
    return nullptr;
  }
  bool isGeneric(const Kernel &kernel, StringRef name) {
    const GenericParam *g = generic(kernel, name);
    return g && !g->isFlag;
  }

  /// The value of a compile-time flag.
  FailureOr<bool> flagValue(const Kernel &kernel, StringRef name,
                            llvm::SMLoc at) {
    const GenericParam *g = generic(kernel, name);
    if (!g || !g->isFlag)
      return error(at) << "unknown flag '" << name << "'; declare it as '"
                       << name << ": bool' among the kernel's parameters";
    auto it = bindings.find(name.str());
    if (it == bindings.end())
      return error(at) << "flag '" << name << "' is not bound; pass -D " << name
                       << "=true or -D " << name << "=false";
    StringRef v = it->second;
    if (v == "true" || v == "1")
      return true;
    if (v == "false" || v == "0")
      return false;
    return error(at) << "flag '" << name << "' is bound to '" << v
                     << "'; expected true, false, 1 or 0";
  }

  FailureOr<bool> holds(const Kernel &kernel, const Condition &cond) {
    if (cond.flag.empty())
      return true;
    FailureOr<bool> value = flagValue(kernel, cond.flag, cond.loc);
    if (failed(value))
      return failure();
    return *value != cond.negated;
  }

  /// The element type named `name` (after substituting bindings).
  FailureOr<Type> elementType(const Kernel &kernel, StringRef name,
                              llvm::SMLoc at) {
    std::string spelled = name.str();
    if (isGeneric(kernel, name)) {
      auto it = bindings.find(spelled);
      if (it == bindings.end())
        return error(at) << "parameter '" << name << "' is not bound; pass -D "
                         << name << "=<type> (bf16, f16 or f32)";
      spelled = it->second;
    }
    Type type = llvm::StringSwitch<Type>(spelled)
                    .Case("f32", b.getF32Type())
                    .Case("f16", b.getF16Type())
                    .Case("bf16", b.getBF16Type())
                    .Case("i32", b.getI32Type())
                    .Case("i64", b.getI64Type())
                    .Default(Type());
    if (!type) {
      if (isGeneric(kernel, name))
        return error(at) << "parameter '" << name << "' is bound to '"
                         << spelled
                         << "', which is not an element type (bf16, f16, "
                            "f32, i32 or i64)";
      return error(at) << "unknown element type '" << name
                       << "'; expected bf16, f16, f32, i32, i64 or a "
                          "parameter of the kernel";
    }
    return type;
  }

  /// The value of a size dimension (not M).
  FailureOr<int64_t> sizeOf(const Kernel &kernel, const TypeRef::Dim &dim) {
    if (dim.name.empty()) {
      if (dim.value <= 0)
        return error(dim.loc)
               << "dimension must be positive, got " << dim.value;
      return dim.value;
    }
    if (!isGeneric(kernel, dim.name))
      return error(dim.loc) << "unknown dimension '" << dim.name
                            << "'; use M for rows or declare it as a "
                               "parameter of the kernel";
    auto it = bindings.find(dim.name);
    if (it == bindings.end())
      return error(dim.loc)
             << "parameter '" << dim.name << "' is not bound; pass -D "
             << dim.name << "=<positive integer>";
    int64_t value;
    if (StringRef(it->second).getAsInteger(10, value) || value <= 0)
      return error(dim.loc)
             << "parameter '" << dim.name << "' is bound to '" << it->second
             << "', which is not a positive integer";
    if (value > (int64_t(1) << 24))
      return error(dim.loc) << "parameter '" << dim.name << "' = " << value
                            << " is larger than the supported 16777216";
    return value;
  }

  FailureOr<Type> argType(const Kernel &kernel, const Param &p) {
    FailureOr<Type> elt =
        elementType(kernel, p.type.element, p.type.elementLoc);
    if (failed(elt))
      return failure();
    const auto &shape = p.type.shape;
    auto isM = [](const TypeRef::Dim &d) { return d.name == "M"; };
    if (shape.empty())
      return *elt;
    if (shape.size() == 2 && isM(shape[0]) && !isM(shape[1])) {
      FailureOr<int64_t> n = sizeOf(kernel, shape[1]);
      if (failed(n))
        return failure();
      auto layout =
          StridedLayoutAttr::get(context, 0, {ShapedType::kDynamic, 1});
      return Type(MemRefType::get({ShapedType::kDynamic, *n}, *elt, layout));
    }
    if (shape.size() == 1 && isM(shape[0]))
      return Type(MemRefType::get({ShapedType::kDynamic}, *elt));
    if (shape.size() == 1) {
      FailureOr<int64_t> n = sizeOf(kernel, shape[0]);
      if (failed(n))
        return failure();
      return Type(MemRefType::get({*n}, *elt));
    }
    return error(p.loc) << "argument '" << p.name
                        << "' must be a matrix T[M, N], a row vector T[N], "
                           "a per-row vector T[M] or a scalar";
  }

  //===--------------------------------------------------------------------===//
  // Kernels and statements
  //===--------------------------------------------------------------------===//

  LogicalResult buildKernel(const Kernel &kernel) {
    for (const GenericParam &g : kernel.generics)
      if (g.name == "M" || g.name == "col")
        return error(g.loc)
               << "'" << g.name << "' is reserved and cannot be a parameter";
    // Arguments present under the bindings' flags.
    SmallVector<Type> types;
    SmallVector<Attribute> argAttrs;
    SmallVector<const Param *> present;
    llvm::StringSet<> seen;
    std::optional<int64_t> n;
    absent.clear();
    for (const Param &p : kernel.params) {
      if (!seen.insert(p.name).second)
        return error(p.loc) << "argument '" << p.name << "' is declared twice";
      if (generic(kernel, p.name) || p.name == "M" || p.name == "col")
        return error(p.loc)
               << "argument '" << p.name << "' has the name of a parameter";
      FailureOr<bool> on = holds(kernel, p.condition);
      if (failed(on))
        return failure();
      if (!*on) {
        absent[p.name] = p.condition;
        continue;
      }
      FailureOr<Type> type = argType(kernel, p);
      if (failed(type))
        return failure();
      if (auto memref = dyn_cast<MemRefType>(*type)) {
        if (!memref.isDynamicDim(memref.getRank() - 1)) {
          int64_t len = memref.getShape().back();
          if (n && *n != len)
            return error(p.loc) << "argument '" << p.name << "' has rows of "
                                << len << " elements but an earlier argument "
                                << "has " << *n;
          n = len;
        }
        if (p.isOutput && memref.getRank() == 1 && !memref.isDynamicDim(0) &&
            !isa<FloatType>(memref.getElementType()))
          return error(p.loc) << "output '" << p.name
                              << "' is a row vector of integers; sums over "
                                 "rows are written to float outputs";
      } else if (p.isOutput) {
        return error(p.loc) << "output '" << p.name
                            << "' is a scalar; outputs are tensors "
                               "(T[M, N] or T[M])";
      }
      types.push_back(*type);
      present.push_back(&p);
      argAttrs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr(mlir::quack::kRoleAttrName,
                          b.getStringAttr(p.isOutput ? "output" : "input")),
           b.getNamedAttr(mlir::quack::kNameAttrName,
                          b.getStringAttr(p.name))}));
    }
    if (!n)
      return error(kernel.loc) << "kernel '" << kernel.name
                               << "' has no T[M, N] or T[N] argument, so its "
                                  "row length is unknown";
    rowLength = *n;

    auto op = mlir::quack::KernelOp::create(
        b, loc(kernel.loc), kernel.name, b.getFunctionType(types, {}),
        b.getArrayAttr(argAttrs), ArrayAttr());
    Block *body = new Block();
    op.getBody().push_back(body);
    for (Type type : types)
      body->addArgument(type, op.getLoc());

    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    names.clear();
    params.clear();
    loaded.clear();
    assigned.clear();
    summed.clear();
    for (auto [index, p] : llvm::enumerate(present))
      params[p->name] = {p, body->getArgument(index)};

    if (failed(buildStmts(kernel, kernel.body)))
      return failure();
    for (const Param *p : present)
      if (p->isOutput && !assigned.contains(p->name))
        return error(p->loc) << "output '" << p->name << "' is never assigned";
    mlir::quack::ReturnOp::create(b, loc(kernel.loc));
    return success();
  }

  LogicalResult buildStmts(const Kernel &kernel,
                           const std::vector<Stmt> &body) {
    for (const Stmt &stmt : body) {
      if (!stmt.condition.flag.empty()) {
        FailureOr<bool> taken = holds(kernel, stmt.condition);
        if (failed(taken))
          return failure();
        if (failed(buildStmts(kernel, *taken ? stmt.thenBody : stmt.elseBody)))
          return failure();
        continue;
      }
      if (failed(buildAssign(kernel, stmt)))
        return failure();
    }
    return success();
  }

  LogicalResult buildAssign(const Kernel &kernel, const Stmt &assign) {
    if (auto it = absent.find(assign.target); it != absent.end())
      return error(assign.loc)
             << "'" << assign.target << "' is not an argument of this variant: "
             << flagNote(it->second);
    auto param = params.find(assign.target);
    if (param != params.end() && param->second.first->isOutput &&
        mlir::quack::classifyArgType(param->second.second.getType()) ==
            mlir::quack::ArgKind::Row) {
      if (!assigned.insert(assign.target).second)
        return error(assign.loc)
               << "output '" << assign.target << "' is assigned twice";
      return buildSumRows(*param->second.first, param->second.second, assign);
    }
    FailureOr<RValue> value = buildExpr(*assign.value);
    if (failed(value))
      return failure();
    if (param == params.end()) {
      if (names.count(assign.target))
        return error(assign.loc) << "'" << assign.target
                                 << "' is already defined; names are "
                                    "assigned once";
      if (generic(kernel, assign.target) || assign.target == "M" ||
          assign.target == "col" || assign.target == "N")
        return error(assign.loc)
               << "cannot assign to parameter '" << assign.target << "'";
      names[assign.target] = *value;
      return success();
    }
    const Param &p = *param->second.first;
    Value dest = param->second.second;
    if (!p.isOutput)
      return error(assign.loc) << "cannot assign to input '" << p.name << "'";
    if (!assigned.insert(p.name).second)
      return error(assign.loc) << "output '" << p.name << "' is assigned twice";
    auto memref = cast<MemRefType>(dest.getType());
    bool wantsRow = !memref.isDynamicDim(memref.getRank() - 1);
    Location at = loc(assign.loc);
    if (!wantsRow && value->isRow)
      return error(assign.loc)
             << "output '" << p.name
             << "' holds one value per row, but the expression is a whole "
                "row; reduce it first (sum, mean, max, min)";
    Value v = convertTo(*value, memref.getElementType(), at);
    if (wantsRow && !value->isRow)
      v = vector::BroadcastOp::create(b, at, rowType(v.getType()), v);
    mlir::quack::StoreOp::create(b, at, v, dest);
    names[p.name] = *value;
    return success();
  }

  /// `dw = sum_rows(e)`: the only form a row-vector output takes. `e` is a
  /// float row; its sum over all rows is written to `dw`.
  LogicalResult buildSumRows(const Param &p, Value dest, const Stmt &assign) {
    const Expr &e = *assign.value;
    if (e.kind != Expr::Kind::Call || e.name != "sum_rows")
      return error(assign.loc) << "output '" << p.name
                          << "' is a row vector T[N], shared by all rows; "
                             "assign it a sum over rows: "
                          << p.name << " = sum_rows(<row expression>)";
    if (e.operands.size() != 1)
      return error(e.loc) << "'sum_rows' takes 1 argument, got "
                          << e.operands.size();
    FailureOr<RValue> v = buildExpr(*e.operands[0]);
    if (failed(v))
      return failure();
    if (v->kind == Kind::Bool)
      return error(e.loc) << "'sum_rows' sums numbers, not conditions";
    Location at = loc(e.loc);
    RValue row = broadcast(toFloat(*v, at), at);
    mlir::quack::SumRowsOp::create(b, at, row.value, dest);
    summed.insert(p.name);
    return success();
  }

  std::string flagNote(const Condition &cond) {
    return "it exists only when flag '" + cond.flag + "' is " +
           (cond.negated ? "false" : "true");
  }

  //===--------------------------------------------------------------------===//
  // Values
  //===--------------------------------------------------------------------===//

  VectorType rowType(Type elt) { return VectorType::get({rowLength}, elt); }
  Type typeOf(Kind kind) {
    switch (kind) {
    case Kind::Float:
      return b.getF32Type();
    case Kind::Int:
      return b.getI64Type();
    case Kind::Bool:
      return b.getI1Type();
    }
    return {};
  }
  Type shaped(Type elt, bool isRow) { return isRow ? rowType(elt) : elt; }

  /// Converts `v` to element type `elt` (same shape).
  Value convertTo(RValue v, Type elt, Location at) {
    Type to = shaped(elt, v.isRow);
    if (v.value.getType() == to)
      return v.value;
    switch (v.kind) {
    case Kind::Float:
      if (isa<IntegerType>(elt))
        return arith::FPToSIOp::create(b, at, to, v.value);
      if (elt.getIntOrFloatBitWidth() < 32)
        return arith::TruncFOp::create(b, at, to, v.value);
      return arith::ExtFOp::create(b, at, to, v.value);
    case Kind::Int:
      if (isa<FloatType>(elt))
        return arith::SIToFPOp::create(b, at, to, v.value);
      if (elt.getIntOrFloatBitWidth() < 64)
        return arith::TruncIOp::create(b, at, to, v.value);
      return v.value;
    case Kind::Bool:
      if (isa<FloatType>(elt))
        return arith::UIToFPOp::create(b, at, to, v.value);
      return arith::ExtUIOp::create(b, at, to, v.value);
    }
    return v.value;
  }

  /// Widens a loaded value of element type `elt` to the language's kinds.
  RValue widen(Value v, bool isRow, Location at) {
    Type elt = getElementTypeOrSelf(v.getType());
    if (isa<FloatType>(elt)) {
      if (!elt.isF32())
        v = arith::ExtFOp::create(b, at, shaped(b.getF32Type(), isRow), v);
      return {v, isRow, Kind::Float};
    }
    if (!elt.isInteger(64))
      v = arith::ExtSIOp::create(b, at, shaped(b.getI64Type(), isRow), v);
    return {v, isRow, Kind::Int};
  }

  RValue toFloat(RValue v, Location at) {
    if (v.kind == Kind::Float)
      return v;
    return {convertTo(v, b.getF32Type(), at), v.isRow, Kind::Float};
  }

  RValue broadcast(RValue v, Location at) {
    if (v.isRow)
      return v;
    return {
        vector::BroadcastOp::create(b, at, rowType(v.value.getType()), v.value),
        true, v.kind};
  }

  FailureOr<RValue> loadParam(const Param &p, Value arg, llvm::SMLoc at) {
    auto it = loaded.find(p.name);
    if (it != loaded.end())
      return it->second;
    Location l = loc(at);
    RValue result;
    if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
      bool isRow = !memref.isDynamicDim(memref.getRank() - 1);
      Type raw = shaped(memref.getElementType(), isRow);
      Value v = mlir::quack::LoadOp::create(b, l, raw, arg);
      result = widen(v, isRow, l);
    } else {
      result = widen(arg, false, l);
    }
    loaded[p.name] = result;
    return result;
  }

  /// Builds the two operands of a binary operation with the same kind and
  /// shape: an integer literal next to an integer stays an integer, other
  /// mixes of integers and floats are floats, and a scalar next to a row is
  /// broadcast.
  FailureOr<std::pair<RValue, RValue>>
  buildPair(const Expr &lhsExpr, const Expr &rhsExpr, Location at) {
    FailureOr<RValue> lhs = buildExpr(lhsExpr);
    if (failed(lhs))
      return failure();
    FailureOr<RValue> rhs = buildExpr(rhsExpr);
    if (failed(rhs))
      return failure();
    auto isIntLiteral = [](const Expr &e) {
      return e.kind == Expr::Kind::Number && e.isInteger;
    };
    // An integer literal beside an integer becomes an i64: it must fit.
    auto fitsI64 = [&](const Expr &e) -> LogicalResult {
      if (e.number >= -0x1p63 && e.number < 0x1p63)
        return success();
      return error(e.loc) << "integer literal does not fit in i64";
    };
    if (lhs->kind == Kind::Int && isIntLiteral(rhsExpr)) {
      if (failed(fitsI64(rhsExpr)))
        return failure();
      rhs = RValue{intConstant(rhsExpr.number, at), false, Kind::Int};
    }
    if (rhs->kind == Kind::Int && isIntLiteral(lhsExpr)) {
      if (failed(fitsI64(lhsExpr)))
        return failure();
      lhs = RValue{intConstant(lhsExpr.number, at), false, Kind::Int};
    }
    if (lhs->kind != rhs->kind) {
      if (lhs->kind == Kind::Bool || rhs->kind == Kind::Bool)
        return error(lhsExpr.loc)
               << "cannot combine a condition with "
               << kindName(lhs->kind == Kind::Bool ? rhs->kind : lhs->kind)
               << "; use where(condition, a, b)";
      lhs = toFloat(*lhs, at);
      rhs = toFloat(*rhs, at);
    }
    if (lhs->isRow != rhs->isRow) {
      lhs = broadcast(*lhs, at);
      rhs = broadcast(*rhs, at);
    }
    return std::make_pair(*lhs, *rhs);
  }

  Value intConstant(double v, Location at) {
    return arith::ConstantOp::create(
        b, at, b.getI64IntegerAttr(static_cast<int64_t>(v)));
  }

  FailureOr<RValue> buildExpr(const Expr &e) {
    Location at = loc(e.loc);
    switch (e.kind) {
    case Expr::Kind::Number: {
      Value c = arith::ConstantOp::create(
          b, at, b.getF32FloatAttr(static_cast<float>(e.number)));
      return RValue{c, false, Kind::Float};
    }
    case Expr::Kind::Name:
      return buildName(e);
    case Expr::Kind::Index:
      return buildIndex(e);
    case Expr::Kind::Unary: {
      FailureOr<RValue> v = buildExpr(*e.operands[0]);
      if (failed(v))
        return failure();
      if (v->kind == Kind::Bool)
        return error(e.loc) << "cannot negate a condition; use not(...)";
      if (v->kind == Kind::Int) {
        Value zero = arith::ConstantOp::create(
            b, at, cast<TypedAttr>(b.getZeroAttr(v->value.getType())));
        return RValue{arith::SubIOp::create(b, at, zero, v->value), v->isRow,
                      Kind::Int};
      }
      return RValue{arith::NegFOp::create(b, at, v->value), v->isRow,
                    Kind::Float};
    }
    case Expr::Kind::Binary: {
      auto pair = buildPair(*e.operands[0], *e.operands[1], at);
      if (failed(pair))
        return failure();
      auto [l, r] = *pair;
      if (l.kind == Kind::Bool)
        return error(e.loc) << "arithmetic on conditions; use where(...), "
                               "and(...), or(...)";
      return RValue{arithmetic(e.op, l, r, at), l.isRow, l.kind};
    }
    case Expr::Kind::Compare: {
      auto pair = buildPair(*e.operands[0], *e.operands[1], at);
      if (failed(pair))
        return failure();
      auto [l, r] = *pair;
      StringRef c = e.compare;
      Value v;
      if (l.kind == Kind::Float) {
        auto pred = llvm::StringSwitch<arith::CmpFPredicate>(c)
                        .Case("<", arith::CmpFPredicate::OLT)
                        .Case("<=", arith::CmpFPredicate::OLE)
                        .Case(">", arith::CmpFPredicate::OGT)
                        .Case(">=", arith::CmpFPredicate::OGE)
                        .Case("==", arith::CmpFPredicate::OEQ)
                        .Default(arith::CmpFPredicate::UNE);
        v = arith::CmpFOp::create(b, at, pred, l.value, r.value);
      } else {
        auto pred = llvm::StringSwitch<arith::CmpIPredicate>(c)
                        .Case("<", arith::CmpIPredicate::slt)
                        .Case("<=", arith::CmpIPredicate::sle)
                        .Case(">", arith::CmpIPredicate::sgt)
                        .Case(">=", arith::CmpIPredicate::sge)
                        .Case("==", arith::CmpIPredicate::eq)
                        .Default(arith::CmpIPredicate::ne);
        v = arith::CmpIOp::create(b, at, pred, l.value, r.value);
      }
      return RValue{v, l.isRow, Kind::Bool};
    }
    case Expr::Kind::Call:
      return buildCall(e);
    }
    llvm_unreachable("unknown expression kind");
  }

  /// `l op r` for two operands of the same kind (float or integer) and
  /// shape.
  Value arithmetic(char op, RValue l, RValue r, Location at) {
    bool isInt = l.kind == Kind::Int;
    switch (op) {
    case '+':
      return isInt ? Value(arith::AddIOp::create(b, at, l.value, r.value))
                   : Value(arith::AddFOp::create(b, at, l.value, r.value));
    case '-':
      return isInt ? Value(arith::SubIOp::create(b, at, l.value, r.value))
                   : Value(arith::SubFOp::create(b, at, l.value, r.value));
    case '*':
      return isInt ? Value(arith::MulIOp::create(b, at, l.value, r.value))
                   : Value(arith::MulFOp::create(b, at, l.value, r.value));
    default:
      return isInt ? Value(arith::DivSIOp::create(b, at, l.value, r.value))
                   : Value(arith::DivFOp::create(b, at, l.value, r.value));
    }
  }

  FailureOr<RValue> buildName(const Expr &e) {
    Location at = loc(e.loc);
    if (auto it = names.find(e.name); it != names.end())
      return it->second;
    if (auto it = params.find(e.name); it != params.end()) {
      if (summed.contains(e.name))
        return error(e.loc) << "output '" << e.name
                            << "' is a sum over all rows, which no row can "
                               "read";
      if (it->second.first->isOutput)
        return error(e.loc)
               << "output '" << e.name << "' is read before it is assigned";
      return loadParam(*it->second.first, it->second.second, e.loc);
    }
    if (auto it = absent.find(e.name); it != absent.end())
      return error(e.loc) << "'" << e.name
                          << "' is not an argument of this variant: "
                          << flagNote(it->second);
    if (e.name == "N") {
      Value c = arith::ConstantOp::create(
          b, at, b.getF32FloatAttr(static_cast<float>(rowLength)));
      return RValue{c, false, Kind::Float};
    }
    if (e.name == "col") {
      Value c = mlir::quack::ColumnOp::create(b, at, rowType(b.getI64Type()));
      return RValue{c, true, Kind::Int};
    }
    return error(e.loc) << "unknown name '" << e.name << "'";
  }

  /// `x[i]`: one element of the current row of matrix x.
  FailureOr<RValue> buildIndex(const Expr &e) {
    Location at = loc(e.loc);
    auto it = params.find(e.name);
    if (it == params.end() || it->second.first->isOutput ||
        mlir::quack::classifyArgType(it->second.second.getType()) !=
            mlir::quack::ArgKind::Matrix)
      return error(e.loc) << "'" << e.name
                          << "' cannot be indexed; x[i] reads element i of "
                             "the current row of an input matrix";
    FailureOr<RValue> index = buildExpr(*e.operands[0]);
    if (failed(index))
      return failure();
    if (index->kind != Kind::Int || index->isRow)
      return error(e.operands[0]->loc)
             << "the index must be one integer per row (an integer T[M] "
                "input or scalar), not "
             << (index->isRow ? "a whole row" : kindName(index->kind));
    Value source = it->second.second;
    Type elt = cast<MemRefType>(source.getType()).getElementType();
    Value v = mlir::quack::GatherOp::create(b, at, elt, source, index->value);
    return widen(v, false, at);
  }

  FailureOr<RValue> buildCall(const Expr &e) {
    Location at = loc(e.loc);
    StringRef callee = e.name;
    size_t arity = e.operands.size();
    auto expectArity = [&](size_t want) -> LogicalResult {
      if (arity == want)
        return success();
      return error(e.loc) << "'" << callee << "' takes " << want
                          << (want == 1 ? " argument" : " arguments")
                          << ", got " << arity;
    };

    // where(c, a, b) and the two-argument max and min combine pairs.
    if (callee == "where") {
      if (failed(expectArity(3)))
        return failure();
      FailureOr<RValue> cond = buildExpr(*e.operands[0]);
      if (failed(cond))
        return failure();
      if (cond->kind != Kind::Bool)
        return error(e.operands[0]->loc)
               << "where() needs a condition (a comparison) first, not "
               << kindName(cond->kind);
      auto pair = buildPair(*e.operands[1], *e.operands[2], at);
      if (failed(pair))
        return failure();
      auto [l, r] = *pair;
      RValue c = *cond;
      if (c.isRow && !l.isRow) {
        l = broadcast(l, at);
        r = broadcast(r, at);
      }
      if (!c.isRow && l.isRow)
        c = broadcast(c, at);
      return RValue{arith::SelectOp::create(b, at, c.value, l.value, r.value),
                    l.isRow, l.kind};
    }
    if (callee == "and" || callee == "or") {
      if (failed(expectArity(2)))
        return failure();
      auto pair = buildPair(*e.operands[0], *e.operands[1], at);
      if (failed(pair))
        return failure();
      auto [l, r] = *pair;
      if (l.kind != Kind::Bool)
        return error(e.loc) << "'" << callee << "' combines conditions";
      Value v = callee == "and"
                    ? Value(arith::AndIOp::create(b, at, l.value, r.value))
                    : Value(arith::OrIOp::create(b, at, l.value, r.value));
      return RValue{v, l.isRow, Kind::Bool};
    }

    SmallVector<RValue> args;
    for (const auto &operand : e.operands) {
      FailureOr<RValue> v = buildExpr(*operand);
      if (failed(v))
        return failure();
      args.push_back(*v);
    }

    if (callee == "not") {
      if (failed(expectArity(1)))
        return failure();
      if (args[0].kind != Kind::Bool)
        return error(e.loc) << "'not' negates a condition";
      Value one = arith::ConstantOp::create(
          b, at, cast<TypedAttr>(b.getOneAttr(args[0].value.getType())));
      return RValue{arith::XOrIOp::create(b, at, args[0].value, one),
                    args[0].isRow, Kind::Bool};
    }

    // Casts: f32(x), f16(x) and bf16(x) round to that type (the value stays
    // f32 for arithmetic); i32(x) and i64(x) convert to integers.
    if (callee == "f32" || callee == "f16" || callee == "bf16" ||
        callee == "i32" || callee == "i64") {
      if (failed(expectArity(1)))
        return failure();
      RValue v = args[0];
      if (callee == "i32" || callee == "i64") {
        Type to = callee == "i32" ? Type(b.getI32Type()) : b.getI64Type();
        Value n = convertTo(v, to, at);
        return widen(n, v.isRow, at);
      }
      RValue f = toFloat(v, at);
      if (callee == "f32")
        return f;
      Type narrow = callee == "f16" ? Type(b.getF16Type()) : b.getBF16Type();
      Value rounded = convertTo(f, narrow, at);
      return widen(rounded, f.isRow, at);
    }

    if (callee == "sum_rows")
      return error(e.loc) << "'sum_rows' sums over all rows into a row-vector "
                             "output; it can only be the whole value assigned "
                             "to an output T[N] (dw = sum_rows(...))";

    // Row reductions: sum, mean, logsumexp, argmax, and one-argument max
    // and min.
    bool isReduction = callee == "sum" || callee == "mean" ||
                       callee == "logsumexp" || callee == "argmax" ||
                       ((callee == "max" || callee == "min") && arity == 1);
    if (isReduction) {
      if (failed(expectArity(1)))
        return failure();
      if (!args[0].isRow)
        return error(e.loc) << "'" << callee
                            << "' reduces a row, but its argument is one "
                               "value per row";
      if (args[0].kind == Kind::Bool)
        return error(e.loc)
               << "'" << callee << "' reduces numbers, not conditions";
      // An f32 holds integers exactly only up to 2^24: equal after the
      // conversion, different before.
      if (callee == "argmax" && args[0].kind == Kind::Int)
        return error(e.loc) << "'argmax' of integers is not supported (an "
                               "f32 comparison would tie integers above "
                               "2^24); write argmax(f32(...)) to accept that";
      RValue row = toFloat(args[0], at);
      if (callee == "logsumexp")
        return RValue{
            mlir::quack::LogSumExpOp::create(b, at, b.getF32Type(), row.value),
            false, Kind::Float};
      if (callee == "argmax")
        return RValue{
            mlir::quack::ArgMaxOp::create(b, at, b.getI64Type(), row.value),
            false, Kind::Int};
      mlir::quack::CombiningKind kind =
          callee == "max"   ? mlir::quack::CombiningKind::Max
          : callee == "min" ? mlir::quack::CombiningKind::Min
                            : mlir::quack::CombiningKind::Add;
      Value r =
          mlir::quack::ReduceOp::create(b, at, b.getF32Type(), kind, row.value);
      if (callee == "mean") {
        Value n = arith::ConstantOp::create(
            b, at, b.getF32FloatAttr(static_cast<float>(rowLength)));
        r = arith::DivFOp::create(b, at, r, n);
      }
      return RValue{r, false, Kind::Float};
    }

    if (callee == "max" || callee == "min") {
      if (failed(expectArity(2)))
        return failure();
      auto pair = buildPair(*e.operands[0], *e.operands[1], at);
      if (failed(pair))
        return failure();
      auto [l, r] = *pair;
      if (l.kind == Kind::Bool)
        return error(e.loc) << "'" << callee << "' compares numbers";
      Value v;
      if (l.kind == Kind::Int)
        v = callee == "max"
                ? Value(arith::MaxSIOp::create(b, at, l.value, r.value))
                : Value(arith::MinSIOp::create(b, at, l.value, r.value));
      else
        v = callee == "max"
                ? Value(arith::MaximumFOp::create(b, at, l.value, r.value))
                : Value(arith::MinimumFOp::create(b, at, l.value, r.value));
      return RValue{v, l.isRow, l.kind};
    }

    using UnaryBuilder = std::function<Value(Value)>;
    UnaryBuilder unary =
        llvm::StringSwitch<UnaryBuilder>(callee)
            .Case("exp", [&](Value v) { return math::ExpOp::create(b, at, v); })
            .Case("exp2",
                  [&](Value v) { return math::Exp2Op::create(b, at, v); })
            .Case("log", [&](Value v) { return math::LogOp::create(b, at, v); })
            .Case("sqrt",
                  [&](Value v) { return math::SqrtOp::create(b, at, v); })
            .Case("rsqrt",
                  [&](Value v) { return math::RsqrtOp::create(b, at, v); })
            .Case("tanh",
                  [&](Value v) { return math::TanhOp::create(b, at, v); })
            .Case("abs",
                  [&](Value v) { return math::AbsFOp::create(b, at, v); })
            .Default(nullptr);
    if (unary || callee == "sigmoid") {
      if (failed(expectArity(1)))
        return failure();
      if (args[0].kind == Kind::Bool)
        return error(e.loc)
               << "'" << callee << "' takes a number, not a condition";
      RValue x = toFloat(args[0], at);
      if (unary)
        return RValue{unary(x.value), x.isRow, Kind::Float};
      Value one = arith::ConstantOp::create(
          b, at, cast<TypedAttr>(b.getOneAttr(x.value.getType())));
      Value neg = arith::NegFOp::create(b, at, x.value);
      Value den =
          arith::AddFOp::create(b, at, one, math::ExpOp::create(b, at, neg));
      return RValue{arith::DivFOp::create(b, at, one, den), x.isRow,
                    Kind::Float};
    }
    return error(e.loc) << "unknown function '" << callee
                        << "'; known: sum, mean, max, min, logsumexp, "
                           "argmax, sum_rows, exp, "
                           "exp2, log, sqrt, rsqrt, tanh, abs, sigmoid, "
                           "where, and, or, not, f32, f16, bf16, i32, i64";
  }

  llvm::SourceMgr &sourceMgr;
  unsigned bufferId;
  MLIRContext *context;
  const Bindings &bindings;
  OpBuilder b;
  llvm::StringSet<> declared;
  int64_t rowLength = 0;
  std::map<std::string, RValue> names;
  std::map<std::string, std::pair<const Param *, Value>> params;
  std::map<std::string, Condition> absent;
  std::map<std::string, RValue> loaded;
  llvm::StringSet<> assigned;
  /// Row-vector outputs written by sum_rows.
  llvm::StringSet<> summed;
};

} // namespace

OwningOpRef<ModuleOp>(::quack::importKernelSource)(llvm::SourceMgr &sourceMgr,
                                                   unsigned bufferId,
                                                   MLIRContext *context,
                                                   const Bindings &bindings,
                                                   StringRef onlyKernel) {
  context->loadDialect<mlir::quack::QuackDialect, arith::ArithDialect,
                       math::MathDialect, vector::VectorDialect>();
  std::optional<File> file = parseKernelFile(sourceMgr, bufferId, context);
  if (!file)
    return nullptr;
  OwningOpRef<ModuleOp> module =
      IRGen(sourceMgr, bufferId, context, bindings).build(*file, onlyKernel);
  if (module && failed(mlir::verify(*module)))
    return nullptr;
  return module;
}
