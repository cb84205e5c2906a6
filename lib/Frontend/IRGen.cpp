//===- IRGen.cpp - .qk syntax tree to row-level quack IR --------------------===//
//
// Part of the quack project.
//
// Binds compile-time parameters, type-checks each kernel and builds a
// `quack.kernel`. Values are either rows (`vector<Nxf32>`) or per-row
// scalars (`f32`); all arithmetic is f32, inputs are widened on load and
// outputs narrowed on store.
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

/// A value of the language: a row of N f32 values or a per-row f32 scalar.
struct RValue {
  Value value;
  bool isRow = false;
};

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
            << ": no kernel compiled from this file has a parameter '"
            << name << "'";
        return nullptr;
      }
    return module;
  }

private:
  Location loc(llvm::SMLoc at) {
    auto [line, col] = sourceMgr.getLineAndColumn(at, bufferId);
    return FileLineColLoc::get(context, bufferName(), line, col);
  }
  Location fileLoc() { return UnknownLoc::get(context); }
  StringRef bufferName() {
    return sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier();
  }
  InFlightDiagnostic error(llvm::SMLoc at) { return mlir::emitError(loc(at)); }

  /// The element type named `name` (after substituting bindings).
  FailureOr<Type> elementType(const Kernel &kernel, StringRef name,
                              llvm::SMLoc at) {
    std::string spelled = name.str();
    if (isGeneric(kernel, name)) {
      auto it = bindings.find(spelled);
      if (it == bindings.end())
        return error(at) << "parameter '" << name
                         << "' is not bound; pass -D " << name
                         << "=<type> (bf16, f16 or f32)";
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

  bool isGeneric(const Kernel &kernel, StringRef name) {
    return llvm::any_of(kernel.generics,
                        [&](const GenericParam &g) { return g.name == name; });
  }

  /// The value of a size dimension (not M).
  FailureOr<int64_t> sizeOf(const Kernel &kernel, const TypeRef::Dim &dim) {
    if (dim.name.empty()) {
      if (dim.value <= 0)
        return error(dim.loc) << "dimension must be positive, got "
                              << dim.value;
      return dim.value;
    }
    if (!isGeneric(kernel, dim.name))
      return error(dim.loc) << "unknown dimension '" << dim.name
                            << "'; use M for rows or declare it as a "
                               "parameter of the kernel";
    auto it = bindings.find(dim.name);
    if (it == bindings.end())
      return error(dim.loc) << "parameter '" << dim.name
                            << "' is not bound; pass -D " << dim.name
                            << "=<positive integer>";
    int64_t value;
    if (StringRef(it->second).getAsInteger(10, value) || value <= 0)
      return error(dim.loc) << "parameter '" << dim.name << "' is bound to '"
                            << it->second
                            << "', which is not a positive integer";
    if (value > (int64_t(1) << 24))
      return error(dim.loc) << "parameter '" << dim.name << "' = " << value
                            << " is larger than the supported 16777216";
    return value;
  }

  FailureOr<Type> argType(const Kernel &kernel, const Param &p) {
    FailureOr<Type> elt = elementType(kernel, p.type.element,
                                      p.type.elementLoc);
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
      auto layout = StridedLayoutAttr::get(context, 0,
                                           {ShapedType::kDynamic, 1});
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

  LogicalResult buildKernel(const Kernel &kernel) {
    // Arguments.
    SmallVector<Type> types;
    SmallVector<Attribute> argAttrs;
    llvm::StringSet<> seen;
    std::optional<int64_t> n;
    for (const Param &p : kernel.params) {
      if (!seen.insert(p.name).second)
        return error(p.loc) << "argument '" << p.name
                            << "' is declared twice";
      if (isGeneric(kernel, p.name) || p.name == "M")
        return error(p.loc) << "argument '" << p.name
                            << "' has the name of a parameter";
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
      } else if (p.isOutput) {
        return error(p.loc) << "output '" << p.name
                            << "' is a scalar; outputs are tensors "
                               "(T[M, N] or T[M])";
      }
      types.push_back(*type);
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
    for (auto [index, p] : llvm::enumerate(kernel.params))
      params[p.name] = {&p, body->getArgument(index)};

    for (const Assign &assign : kernel.body)
      if (failed(buildAssign(kernel, assign)))
        return failure();
    for (const Param &p : kernel.params)
      if (p.isOutput && !assigned.contains(p.name))
        return error(p.loc) << "output '" << p.name << "' is never assigned";
    mlir::quack::ReturnOp::create(b, loc(kernel.loc));
    return success();
  }

  LogicalResult buildAssign(const Kernel &kernel, const Assign &assign) {
    FailureOr<RValue> value = buildExpr(*assign.value);
    if (failed(value))
      return failure();
    auto param = params.find(assign.target);
    if (param == params.end()) {
      if (names.count(assign.target))
        return error(assign.loc) << "'" << assign.target
                                 << "' is already defined; names are "
                                    "assigned once";
      if (isGeneric(kernel, assign.target) || assign.target == "M")
        return error(assign.loc) << "cannot assign to parameter '"
                                 << assign.target << "'";
      names[assign.target] = *value;
      return success();
    }
    const Param &p = *param->second.first;
    Value dest = param->second.second;
    if (!p.isOutput)
      return error(assign.loc) << "cannot assign to input '" << p.name << "'";
    if (!assigned.insert(p.name).second)
      return error(assign.loc) << "output '" << p.name
                               << "' is assigned twice";
    auto memref = cast<MemRefType>(dest.getType());
    bool wantsRow = !memref.isDynamicDim(memref.getRank() - 1);
    Location at = loc(assign.loc);
    Value v = value->value;
    if (wantsRow && !value->isRow)
      v = vector::BroadcastOp::create(b, at, rowType(), v);
    if (!wantsRow && value->isRow)
      return error(assign.loc)
             << "output '" << p.name
             << "' holds one value per row, but the expression is a whole "
                "row; reduce it first (sum, mean, max, min)";
    FailureOr<Value> narrowed = convert(v, memref.getElementType(), at);
    if (failed(narrowed))
      return error(assign.loc) << "cannot store to output '" << p.name
                               << "' of element type "
                               << memref.getElementType();
    mlir::quack::StoreOp::create(b, at, *narrowed, dest);
    names[p.name] = *value;
    return success();
  }

  VectorType rowType(Type elt = {}) {
    return VectorType::get({rowLength}, elt ? elt : b.getF32Type());
  }

  /// Converts an f32 value (row or scalar) to `elt` (same shape).
  FailureOr<Value> convert(Value v, Type elt, Location at) {
    Type from = getElementTypeOrSelf(v.getType());
    if (from == elt)
      return v;
    Type to = elt;
    if (auto vec = dyn_cast<VectorType>(v.getType()))
      to = VectorType::get(vec.getShape(), elt);
    if (isa<FloatType>(from) && isa<FloatType>(elt)) {
      if (elt.getIntOrFloatBitWidth() < from.getIntOrFloatBitWidth())
        return Value(arith::TruncFOp::create(b, at, to, v));
      return Value(arith::ExtFOp::create(b, at, to, v));
    }
    if (isa<IntegerType>(from) && isa<FloatType>(elt))
      return Value(arith::SIToFPOp::create(b, at, to, v));
    if (isa<FloatType>(from) && isa<IntegerType>(elt))
      return Value(arith::FPToSIOp::create(b, at, to, v));
    return failure();
  }

  FailureOr<RValue> loadParam(const Param &p, Value arg, llvm::SMLoc at) {
    auto it = loaded.find(p.name);
    if (it != loaded.end())
      return it->second;
    Location l = loc(at);
    RValue result;
    if (auto memref = dyn_cast<MemRefType>(arg.getType())) {
      bool isRow = !memref.isDynamicDim(memref.getRank() - 1);
      Type raw = isRow ? Type(rowType(memref.getElementType()))
                       : memref.getElementType();
      Value v = mlir::quack::LoadOp::create(b, l, raw, arg);
      FailureOr<Value> wide = convert(v, b.getF32Type(), l);
      if (failed(wide))
        return error(at) << "cannot use '" << p.name << "' in f32 arithmetic";
      result = {*wide, isRow};
    } else {
      FailureOr<Value> wide = convert(arg, b.getF32Type(), l);
      if (failed(wide))
        return error(at) << "cannot use '" << p.name << "' in f32 arithmetic";
      result = {*wide, false};
    }
    loaded[p.name] = result;
    return result;
  }

  /// Makes two operands the same shape, broadcasting a scalar to a row.
  std::pair<Value, Value> unify(RValue lhs, RValue rhs, Location at) {
    Value l = lhs.value, r = rhs.value;
    if (lhs.isRow && !rhs.isRow)
      r = vector::BroadcastOp::create(b, at, rowType(), r);
    if (!lhs.isRow && rhs.isRow)
      l = vector::BroadcastOp::create(b, at, rowType(), l);
    return {l, r};
  }

  FailureOr<RValue> buildExpr(const Expr &e) {
    Location at = loc(e.loc);
    switch (e.kind) {
    case Expr::Kind::Number: {
      Value c = arith::ConstantOp::create(
          b, at, b.getF32FloatAttr(static_cast<float>(e.number)));
      return RValue{c, false};
    }
    case Expr::Kind::Name: {
      if (auto it = names.find(e.name); it != names.end())
        return it->second;
      if (auto it = params.find(e.name); it != params.end()) {
        if (it->second.first->isOutput)
          return error(e.loc) << "output '" << e.name
                              << "' is read before it is assigned";
        return loadParam(*it->second.first, it->second.second, e.loc);
      }
      if (e.name == "N") {
        Value c = arith::ConstantOp::create(
            b, at, b.getF32FloatAttr(static_cast<float>(rowLength)));
        return RValue{c, false};
      }
      return error(e.loc) << "unknown name '" << e.name << "'";
    }
    case Expr::Kind::Unary: {
      FailureOr<RValue> v = buildExpr(*e.operands[0]);
      if (failed(v))
        return failure();
      return RValue{arith::NegFOp::create(b, at, v->value), v->isRow};
    }
    case Expr::Kind::Binary: {
      FailureOr<RValue> lhs = buildExpr(*e.operands[0]);
      if (failed(lhs))
        return failure();
      FailureOr<RValue> rhs = buildExpr(*e.operands[1]);
      if (failed(rhs))
        return failure();
      auto [l, r] = unify(*lhs, *rhs, at);
      Value v;
      switch (e.op) {
      case '+':
        v = arith::AddFOp::create(b, at, l, r);
        break;
      case '-':
        v = arith::SubFOp::create(b, at, l, r);
        break;
      case '*':
        v = arith::MulFOp::create(b, at, l, r);
        break;
      default:
        v = arith::DivFOp::create(b, at, l, r);
        break;
      }
      return RValue{v, lhs->isRow || rhs->isRow};
    }
    case Expr::Kind::Call:
      return buildCall(e);
    }
    llvm_unreachable("unknown expression kind");
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
    SmallVector<RValue> args;
    for (const auto &operand : e.operands) {
      FailureOr<RValue> v = buildExpr(*operand);
      if (failed(v))
        return failure();
      args.push_back(*v);
    }

    // Row reductions: sum, mean, and one-argument max and min.
    bool isReduction = callee == "sum" || callee == "mean" ||
                       ((callee == "max" || callee == "min") && arity == 1);
    if (isReduction) {
      if (failed(expectArity(1)))
        return failure();
      if (!args[0].isRow)
        return error(e.loc) << "'" << callee
                            << "' reduces a row, but its argument is one "
                               "value per row";
      mlir::quack::CombiningKind kind =
          callee == "max"   ? mlir::quack::CombiningKind::Max
          : callee == "min" ? mlir::quack::CombiningKind::Min
                            : mlir::quack::CombiningKind::Add;
      Value r = mlir::quack::ReduceOp::create(b, at, b.getF32Type(), kind,
                                              args[0].value);
      if (callee == "mean") {
        Value n = arith::ConstantOp::create(
            b, at, b.getF32FloatAttr(static_cast<float>(rowLength)));
        r = arith::DivFOp::create(b, at, r, n);
      }
      return RValue{r, false};
    }

    if (callee == "max" || callee == "min") {
      if (failed(expectArity(2)))
        return failure();
      auto [l, r] = unify(args[0], args[1], at);
      Value v = callee == "max"
                    ? Value(arith::MaximumFOp::create(b, at, l, r))
                    : Value(arith::MinimumFOp::create(b, at, l, r));
      return RValue{v, args[0].isRow || args[1].isRow};
    }

    using Builder = std::function<Value(Value)>;
    Builder unary =
        llvm::StringSwitch<Builder>(callee)
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
    if (unary) {
      if (failed(expectArity(1)))
        return failure();
      return RValue{unary(args[0].value), args[0].isRow};
    }
    if (callee == "sigmoid") {
      if (failed(expectArity(1)))
        return failure();
      Value v = args[0].value;
      Value one = arith::ConstantOp::create(
          b, at, cast<TypedAttr>(b.getOneAttr(v.getType())));
      Value neg = arith::NegFOp::create(b, at, v);
      Value den =
          arith::AddFOp::create(b, at, one, math::ExpOp::create(b, at, neg));
      return RValue{arith::DivFOp::create(b, at, one, den), args[0].isRow};
    }
    return error(e.loc) << "unknown function '" << callee
                        << "'; known: sum, mean, max, min, exp, exp2, log, "
                           "sqrt, rsqrt, tanh, abs, sigmoid";
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
  std::map<std::string, RValue> loaded;
  llvm::StringSet<> assigned;
};

} // namespace

OwningOpRef<ModuleOp> (::quack::importKernelSource)(llvm::SourceMgr &sourceMgr,
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
