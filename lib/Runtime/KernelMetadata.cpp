//===- KernelMetadata.cpp - Kernel metadata and launch checks -------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Runtime/KernelMetadata.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

using namespace quack;
using namespace quack::runtime;
using json::Value;

const char *runtime::stringifyParamKind(ParamKind kind) {
  switch (kind) {
  case ParamKind::Rows:
    return "rows";
  case ParamKind::Matrix:
    return "matrix";
  case ParamKind::RowStride:
    return "row_stride";
  case ParamKind::Row:
    return "row";
  case ParamKind::PerRow:
    return "per_row";
  case ParamKind::Scalar:
    return "scalar";
  case ParamKind::Workspace:
    return "workspace";
  }
  return "unknown";
}

const char *runtime::stringifyScalarType(ScalarType type) {
  switch (type) {
  case ScalarType::F32:
    return "f32";
  case ScalarType::F16:
    return "f16";
  case ScalarType::BF16:
    return "bf16";
  case ScalarType::I32:
    return "i32";
  case ScalarType::I64:
    return "i64";
  }
  return "unknown";
}

unsigned runtime::getScalarTypeSize(ScalarType type) {
  switch (type) {
  case ScalarType::F16:
  case ScalarType::BF16:
    return 2;
  case ScalarType::F32:
  case ScalarType::I32:
    return 4;
  case ScalarType::I64:
    return 8;
  }
  return 0;
}

namespace {
/// Accumulates the first validation error, prefixed with where it occurred.
class Checker {
public:
  explicit Checker(std::string &error) : error(error) {}

  bool fail(const std::string &what) {
    error = "invalid kernel metadata: " + what;
    return false;
  }

  bool getObject(const Value &parent, const char *key, const Value *&out,
                 bool required = true) {
    out = parent.get(key);
    if (!out) {
      if (required)
        return fail(std::string("missing field \"") + key + "\"");
      return true;
    }
    if (!out->isObject())
      return fail(std::string("field \"") + key + "\" must be an object, not " +
                  Value::kindName(out->getKind()));
    return true;
  }

  bool getString(const Value &parent, const char *key, std::string &out,
                 bool required = true, const std::string &where = "") {
    const Value *v = parent.get(key);
    if (!v) {
      if (required)
        return fail("missing field \"" + where + key + "\"");
      return true;
    }
    if (!v->isString())
      return fail("field \"" + where + key + "\" must be a string, not " +
                  Value::kindName(v->getKind()));
    out = v->getString();
    if (required && out.empty())
      return fail("field \"" + where + key + "\" must not be empty");
    return true;
  }

  bool getInteger(const Value &parent, const char *key, int64_t &out,
                  int64_t minValue, bool required = true,
                  const std::string &where = "") {
    const Value *v = parent.get(key);
    if (!v) {
      if (required)
        return fail("missing field \"" + where + key + "\"");
      return true;
    }
    if (!v->isInteger())
      return fail("field \"" + where + key + "\" must be an integer");
    if (v->getInteger() < minValue)
      return fail("field \"" + where + key + "\" must be at least " +
                  std::to_string(minValue) + ", got " +
                  std::to_string(v->getInteger()));
    out = v->getInteger();
    return true;
  }

  bool getDim3(const Value &parent, const char *key,
               std::array<unsigned, 3> &out, bool required) {
    const Value *v = parent.get(key);
    if (!v) {
      if (required)
        return fail(std::string("missing field \"") + key + "\"");
      return true;
    }
    if (!v->isArray() || v->getArray().size() != 3)
      return fail(std::string("field \"") + key +
                  "\" must be an array of 3 integers");
    for (int i = 0; i < 3; ++i) {
      const Value &e = v->getArray()[i];
      if (!e.isInteger() || e.getInteger() < 1 ||
          e.getInteger() > (int64_t(1) << 31) - 1)
        return fail(std::string("field \"") + key +
                    "\" must hold 3 positive integers");
      out[i] = static_cast<unsigned>(e.getInteger());
    }
    return true;
  }

private:
  std::string &error;
};

bool parseScalarType(const std::string &s, ScalarType &type);

/// Reads "tensor_maps": [{"of": matrix input, "dtype", "columns": N,
/// "box": [inner, groups, rows]}, ...] (after "params" and "N").
bool parseTensorMaps(Checker &c, const Value &maps, KernelMetadata &meta) {
  if (!maps.isArray())
    return c.fail("field \"tensor_maps\" must be an array");
  for (const Value &entry : maps.getArray()) {
    if (!entry.isObject())
      return c.fail("\"tensor_maps\" entries must be objects");
    TensorMapRecipe recipe;
    std::string of, dtype;
    const std::string where = "tensor_maps[].";
    if (!c.getString(entry, "of", of, true, where) ||
        !c.getString(entry, "dtype", dtype, true, where) ||
        !c.getInteger(entry, "columns", recipe.columns, 1, true, where))
      return false;
    for (size_t i = 0; i < meta.params.size(); ++i) {
      const Param &p = meta.params[i];
      if (p.name == of && p.kind == ParamKind::Matrix && p.role == "input")
        recipe.param = static_cast<int>(i);
      if (p.kind == ParamKind::RowStride && p.of >= 0 &&
          meta.params[p.of].name == of)
        recipe.rowStrideParam = static_cast<int>(i);
    }
    if (recipe.param < 0 || recipe.rowStrideParam < 0)
      return c.fail("\"tensor_maps[].of\" must name a matrix input, got \"" +
                    of + "\"");
    if (!parseScalarType(dtype, recipe.type) ||
        recipe.type != meta.params[recipe.param].type)
      return c.fail("\"tensor_maps[].dtype\" must be the matrix's dtype (" +
                    std::string(stringifyScalarType(
                        meta.params[recipe.param].type)) +
                    "), got \"" + dtype + "\"");
    if (recipe.type != ScalarType::F32 && recipe.type != ScalarType::F16 &&
        recipe.type != ScalarType::BF16)
      return c.fail("\"tensor_maps[].dtype\" must be f32, f16 or bf16, got "
                    "\"" + dtype + "\"");
    if (recipe.columns != meta.n)
      return c.fail("\"tensor_maps[].columns\" must be N = " +
                    std::to_string(meta.n) + ", got " +
                    std::to_string(recipe.columns));
    const Value *box = entry.get("box");
    if (!box || !box->isArray() || box->getArray().size() != 3)
      return c.fail("\"tensor_maps[].box\" must be [inner, groups, rows]");
    for (size_t i = 0; i < 3; ++i) {
      const Value &v = box->getArray()[i];
      if (!v.isInteger() || v.getInteger() < 1 || v.getInteger() > 256)
        return c.fail("\"tensor_maps[].box\" entries must be integers in "
                      "[1, 256]");
      recipe.box[i] = static_cast<unsigned>(v.getInteger());
    }
    if (recipe.box[0] * getScalarTypeSize(recipe.type) % 16 != 0)
      return c.fail("\"tensor_maps[].box\" must have an innermost dimension "
                    "of a multiple of 16 bytes, got " +
                    std::to_string(recipe.box[0]) + " elements");
    if (recipe.columns % recipe.box[0] != 0)
      return c.fail("\"tensor_maps[].box\" must have an innermost dimension "
                    "that divides N = " +
                    std::to_string(recipe.columns) + ", got " +
                    std::to_string(recipe.box[0]));
    meta.tensorMaps.push_back(recipe);
  }
  return true;
}

bool parseScalarType(const std::string &s, ScalarType &type) {
  static const std::pair<const char *, ScalarType> table[] = {
      {"f32", ScalarType::F32},   {"f16", ScalarType::F16},
      {"bf16", ScalarType::BF16}, {"i32", ScalarType::I32},
      {"i64", ScalarType::I64},
  };
  for (const auto &entry : table) {
    if (s == entry.first) {
      type = entry.second;
      return true;
    }
  }
  return false;
}

bool parseParamKind(const std::string &s, ParamKind &kind) {
  static const std::pair<const char *, ParamKind> table[] = {
      {"rows", ParamKind::Rows},
      {"matrix", ParamKind::Matrix},
      {"row_stride", ParamKind::RowStride},
      {"row", ParamKind::Row},
      {"per_row", ParamKind::PerRow},
      {"scalar", ParamKind::Scalar},
      {"workspace", ParamKind::Workspace},
  };
  for (const auto &entry : table) {
    if (s == entry.first) {
      kind = entry.second;
      return true;
    }
  }
  return false;
}

bool parseParams(Checker &c, const Value &root, KernelMetadata &meta) {
  const Value *params = root.get("params");
  if (!params)
    return c.fail("missing field \"params\"");
  if (!params->isArray() || params->getArray().empty())
    return c.fail("field \"params\" must be a non-empty array");
  const std::vector<Value> &list = params->getArray();
  for (size_t i = 0; i < list.size(); ++i) {
    const Value &p = list[i];
    std::string where = "params[" + std::to_string(i) + "].";
    if (!p.isObject())
      return c.fail("params[" + std::to_string(i) + "] must be an object");
    Param param;
    std::string kind;
    if (!c.getString(p, "name", param.name, true, where) ||
        !c.getString(p, "kind", kind, true, where))
      return false;
    where = "params[" + std::to_string(i) + "] (\"" + param.name + "\").";
    if (!parseParamKind(kind, param.kind))
      return c.fail("unknown parameter kind \"" + kind + "\" in " + where +
                    "kind");
    for (const Param &prev : meta.params)
      if (prev.name == param.name)
        return c.fail("duplicate parameter name \"" + param.name + "\"");

    // Pointers carry "dtype"; values carry "type".
    const char *typeKey = param.isPointer() ? "dtype" : "type";
    std::string type;
    if (!c.getString(p, typeKey, type, true, where))
      return false;
    if (!parseScalarType(type, param.type))
      return c.fail("unknown type \"" + type + "\" in " + where + typeKey);

    switch (param.kind) {
    case ParamKind::Rows:
      if (i != 0)
        return c.fail("the \"rows\" parameter must be the first, found it at "
                      "params[" +
                      std::to_string(i) + "]");
      if (param.type != ScalarType::I64)
        return c.fail("the \"rows\" parameter must have type i64");
      break;
    case ParamKind::RowStride: {
      if (param.type != ScalarType::I64)
        return c.fail("row stride \"" + param.name + "\" must have type i64");
      std::string of;
      if (!c.getString(p, "of", of, true, where))
        return false;
      // The stride follows its matrix immediately (docs/abi.md).
      if (meta.params.empty() || meta.params.back().name != of ||
          meta.params.back().kind != ParamKind::Matrix)
        return c.fail("row stride \"" + param.name +
                      "\" must directly follow matrix \"" + of + "\"");
      param.of = static_cast<int>(meta.params.size() - 1);
      break;
    }
    case ParamKind::Workspace:
      if (param.type != ScalarType::F32)
        return c.fail("workspace \"" + param.name + "\" must have dtype f32");
      if (meta.workspaceParam >= 0)
        return c.fail("more than one workspace parameter");
      meta.workspaceParam = static_cast<int>(meta.params.size());
      if (!c.getString(p, "role", param.role, true, where))
        return false;
      if (param.role != "scratch")
        return c.fail("field \"" + where + "role\" must be \"scratch\", got \"" +
                      param.role + "\"");
      break;
    case ParamKind::Matrix:
    case ParamKind::Row:
    case ParamKind::PerRow:
    case ParamKind::Scalar:
      if (param.kind == ParamKind::Scalar && param.type != ScalarType::F32 &&
          param.type != ScalarType::I32 && param.type != ScalarType::I64)
        return c.fail("scalar \"" + param.name +
                      "\" must have type f32, i32 or i64");
      if (!c.getString(p, "role", param.role, true, where))
        return false;
      if (param.role != "input" && param.role != "output")
        return c.fail("field \"" + where + "role\" must be \"input\" or " +
                      "\"output\", got \"" + param.role + "\"");
      break;
    }
    if (i == 0 && param.kind != ParamKind::Rows)
      return c.fail("the first parameter must be M (kind \"rows\")");
    // A matrix must be followed by its row stride.
    if (!meta.params.empty() && meta.params.back().kind == ParamKind::Matrix &&
        param.kind != ParamKind::RowStride)
      return c.fail("matrix \"" + meta.params.back().name +
                    "\" must be followed by its row stride");
    meta.params.push_back(std::move(param));
  }
  if (meta.params.back().kind == ParamKind::Matrix)
    return c.fail("matrix \"" + meta.params.back().name +
                  "\" must be followed by its row stride");
  return true;
}
} // namespace

Status runtime::parseKernelMetadata(const std::string &text,
                                    KernelMetadata &meta, std::string &error) {
  Value root;
  std::string parseError;
  if (!json::parse(text, root, parseError)) {
    error = "invalid kernel metadata: " + parseError;
    return Status::InvalidMetadata;
  }
  Checker c(error);
  KernelMetadata result;
  if (!root.isObject()) {
    c.fail("the document must be a JSON object");
    return Status::InvalidMetadata;
  }
  const Value *schema = root.get("schema");
  if (!schema || !schema->isInteger()) {
    c.fail("missing or non-integer field \"schema\"");
    return Status::InvalidMetadata;
  }
  if (schema->getInteger() != 1) {
    c.fail("unsupported schema " + std::to_string(schema->getInteger()) +
           " (this runtime reads schema 1)");
    return Status::InvalidMetadata;
  }
  result.schema = 1;

  const Value *bindings = nullptr, *grid = nullptr, *shared = nullptr;
  bool ok = c.getString(root, "kernel", result.kernel) &&
            c.getString(root, "symbol", result.symbol) &&
            c.getString(root, "cubin", result.cubin) &&
            c.getString(root, "arch", result.arch) &&
            c.getString(root, "hash", result.hash, /*required=*/false) &&
            c.getObject(root, "bindings", bindings, /*required=*/false) &&
            parseParams(c, root, result) &&
            c.getInteger(root, "N", result.n, 1) &&
            c.getInteger(root, "alignment", result.alignment, 1) &&
            c.getObject(root, "grid", grid) &&
            c.getDim3(root, "block", result.block, /*required=*/true) &&
            c.getDim3(root, "cluster", result.cluster, /*required=*/false) &&
            c.getObject(root, "shared_bytes", shared, /*required=*/false);
  if (!ok)
    return Status::InvalidMetadata;

  if (result.alignment & (result.alignment - 1)) {
    c.fail("\"alignment\" must be a power of two, got " +
           std::to_string(result.alignment));
    return Status::InvalidMetadata;
  }
  if (result.cubin.find('/') != std::string::npos) {
    c.fail("\"cubin\" must name a file beside the metadata, got \"" +
           result.cubin + "\"");
    return Status::InvalidMetadata;
  }
  if (uint64_t(result.block[0]) * result.block[1] * result.block[2] > 1024) {
    c.fail("\"block\" has more than 1024 threads");
    return Status::InvalidMetadata;
  }

  std::string gridKind;
  if (!c.getString(*grid, "kind", gridKind, true, "grid."))
    return Status::InvalidMetadata;
  if (gridKind != "rows" && gridKind != "persistent") {
    c.fail("unsupported grid kind \"" + gridKind +
           "\" (expected \"rows\" or \"persistent\")");
    return Status::InvalidMetadata;
  }
  result.persistent = gridKind == "persistent";
  const Value *finish = root.get("finish");
  // Sums over rows need all three; a persistent kernel without sums loops
  // over rows with neither a workspace nor a finishing entry point.
  if ((finish != nullptr) != (result.workspaceParam >= 0) ||
      (finish && !result.persistent)) {
    c.fail("a \"finish\" object and a workspace parameter go together, "
           "with grid kind \"persistent\"");
    return Status::InvalidMetadata;
  }
  if (finish) {
    if (!finish->isObject()) {
      c.fail("\"finish\" must be an object");
      return Status::InvalidMetadata;
    }
    const Value *block = finish->get("block");
    const Value *outputs = finish->get("outputs");
    if (!c.getString(*finish, "symbol", result.finishSymbol, true,
                     "finish.") ||
        !c.getInteger(*finish, "columns_per_cta", result.finishColumnsPerCta,
                      1, true, "finish."))
      return Status::InvalidMetadata;
    if (!block || !block->isArray() || block->getArray().size() != 3 ||
        !outputs || !outputs->isArray() || outputs->getArray().empty()) {
      c.fail("\"finish\" needs \"block\" (three integers) and a non-empty "
             "\"outputs\" array");
      return Status::InvalidMetadata;
    }
    uint64_t threads = 1;
    for (size_t i = 0; i < 3; ++i) {
      const Value &v = block->getArray()[i];
      if (!v.isInteger() || v.getInteger() < 1 || v.getInteger() > 1024) {
        c.fail("\"finish.block\" entries must be integers in [1, 1024]");
        return Status::InvalidMetadata;
      }
      result.finishBlock[i] = static_cast<unsigned>(v.getInteger());
      threads *= result.finishBlock[i];
    }
    if (threads > 1024) {
      c.fail("\"finish.block\" has more than 1024 threads");
      return Status::InvalidMetadata;
    }
    for (const Value &v : outputs->getArray()) {
      int index = -1;
      for (size_t i = 0; i < result.params.size(); ++i)
        if (v.isString() && result.params[i].name == v.getString() &&
            result.params[i].kind == ParamKind::Row &&
            result.params[i].role == "output")
          index = static_cast<int>(i);
      if (index < 0) {
        c.fail("\"finish.outputs\" entries must name row-vector outputs");
        return Status::InvalidMetadata;
      }
      result.finishOutputs.push_back(index);
    }
  }
  if (!c.getInteger(*grid, "rows_per_cta", result.rowsPerCta, 1, true,
                    "grid.") ||
      !c.getInteger(*grid, "ctas_per_rows", result.ctasPerRowGroup, 1,
                    /*required=*/false, "grid."))
    return Status::InvalidMetadata;
  if (result.ctasPerRowGroup > 1 && result.rowsPerCta != 1) {
    c.fail("\"grid.ctas_per_rows\" > 1 needs \"grid.rows_per_cta\" == 1");
    return Status::InvalidMetadata;
  }

  if (shared && (!c.getInteger(*shared, "static", result.staticSharedBytes, 0,
                               /*required=*/false, "shared_bytes.") ||
                 !c.getInteger(*shared, "dynamic", result.dynamicSharedBytes, 0,
                               /*required=*/false, "shared_bytes.")))
    return Status::InvalidMetadata;

  if (const Value *maps = root.get("tensor_maps"))
    if (!parseTensorMaps(c, *maps, result))
      return Status::InvalidMetadata;

  if (const Value *fallbacks = root.get("cluster_fallbacks")) {
    if (!fallbacks->isArray()) {
      c.fail("field \"cluster_fallbacks\" must be an array of file names");
      return Status::InvalidMetadata;
    }
    if (result.getClusterSize() < 2) {
      c.fail("\"cluster_fallbacks\" needs a cluster of 2 or more CTAs");
      return Status::InvalidMetadata;
    }
    for (const Value &v : fallbacks->getArray()) {
      if (!v.isString() || v.getString().empty() ||
          v.getString().find('/') != std::string::npos) {
        c.fail("\"cluster_fallbacks\" entries must name metadata files "
               "beside this one");
        return Status::InvalidMetadata;
      }
      result.clusterFallbacks.push_back(v.getString());
    }
  }

  if (bindings) {
    for (const Value::Member &m : bindings->getObject()) {
      const Value &v = m.second;
      if (v.isString())
        result.bindings.emplace_back(m.first, v.getString());
      else if (v.isInteger())
        result.bindings.emplace_back(m.first, std::to_string(v.getInteger()));
      else if (v.isBool())
        result.bindings.emplace_back(m.first, v.getBool() ? "true" : "false");
      else {
        c.fail("binding \"" + m.first +
               "\" must be a string, integer or "
               "boolean");
        return Status::InvalidMetadata;
      }
    }
  }
  meta = std::move(result);
  return Status::Ok;
}

Status runtime::checkClusterFallback(const KernelMetadata &meta,
                                     const KernelMetadata &fallback,
                                     unsigned largerCluster,
                                     std::string &error) {
  auto sameParam = [](const Param &a, const Param &b) {
    return a.name == b.name && a.kind == b.kind && a.type == b.type &&
           a.role == b.role && a.of == b.of;
  };
  std::string differs;
  if (fallback.kernel != meta.kernel || fallback.symbol != meta.symbol)
    differs = "it is another kernel (\"" + fallback.kernel + "\")";
  else if (fallback.bindings != meta.bindings)
    differs = "its bindings differ";
  else if (fallback.params.size() != meta.params.size() ||
           !std::equal(meta.params.begin(), meta.params.end(),
                       fallback.params.begin(), sameParam))
    differs = "its parameters differ";
  else if (fallback.alignment != meta.alignment)
    differs = "its alignment differs (" + std::to_string(fallback.alignment) +
              " bytes, not " + std::to_string(meta.alignment) + ")";
  else if (fallback.finishOutputs != meta.finishOutputs ||
           fallback.workspaceParam != meta.workspaceParam ||
           (meta.workspaceParam >= 0 && !fallback.persistent))
    differs = "its sums over rows differ";
  else if (fallback.getClusterSize() >= largerCluster)
    differs = "its cluster of " + std::to_string(fallback.getClusterSize()) +
              " CTAs is not smaller than " + std::to_string(largerCluster);
  else if (!fallback.clusterFallbacks.empty())
    differs = "it lists fallbacks of its own";
  if (differs.empty())
    return Status::Ok;
  error = "cluster fallback of kernel \"" + meta.kernel + "\": " + differs;
  return Status::InvalidMetadata;
}

Status runtime::checkLaunchArguments(const KernelMetadata &meta, int64_t m,
                                     const ArgValue *args, size_t numArgs,
                                     std::string &error) {
  // The prefix of every error; built only for one (this runs per launch).
  auto prefix = [&meta] { return "kernel \"" + meta.kernel + "\": "; };
  if (numArgs != meta.getNumArgs()) {
    error = prefix() + "expected " + std::to_string(meta.getNumArgs()) +
            " arguments after M, got " + std::to_string(numArgs);
    return Status::InvalidArgument;
  }
  if (numArgs && !args) {
    error = prefix() + "the argument array is null";
    return Status::InvalidArgument;
  }
  if (m < 0) {
    error = prefix() + "M must be non-negative, got " + std::to_string(m);
    return Status::InvalidArgument;
  }
  if (!meta.tensorMaps.empty() && m > INT32_MAX) {
    error = prefix() + "its tensor copies address rows with 32-bit "
                     "coordinates; M = " +
            std::to_string(m) + " exceeds " + std::to_string(INT32_MAX);
    return Status::Unsupported;
  }
  const uint64_t align = static_cast<uint64_t>(meta.alignment);
  for (size_t i = 0; i < numArgs; ++i) {
    const Param &p = meta.params[i + 1];
    const ArgValue &a = args[i];
    if (p.isPointer()) {
      // With no rows nothing is read or written, so null is allowed then.
      // A persistent kernel writes its sums over rows (zeros) even then.
      bool written = meta.persistent && p.kind == ParamKind::Row &&
                     p.role == "output";
      if (a.u == 0 && (m > 0 || written)) {
        error = prefix() + "argument \"" + p.name + "\" is a null pointer";
        return Status::InvalidArgument;
      }
      if (p.kind == ParamKind::Workspace && a.u % 16 != 0) {
        error = prefix() + "workspace \"" + p.name +
                "\" is not aligned to 16 bytes";
        return Status::Misaligned;
      }
      if (a.u % align != 0) {
        error = prefix() + "argument \"" + p.name + "\" (address 0x";
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%llx",
                      static_cast<unsigned long long>(a.u));
        error += buf;
        error += ") is not aligned to " + std::to_string(align) + " bytes";
        return Status::Misaligned;
      }
    } else if (p.kind == ParamKind::RowStride) {
      const Param &matrix = meta.params[p.of];
      if (a.i < 0) {
        error = prefix() + "row stride \"" + p.name +
                "\" must be non-negative, "
                "got " +
                std::to_string(a.i);
        return Status::InvalidArgument;
      }
      if (m > 1 && a.i < meta.n) {
        error = prefix() + "row stride \"" + p.name + "\" (" +
                std::to_string(a.i) +
                " elements) is smaller than N = " + std::to_string(meta.n) +
                ": rows would overlap";
        return Status::InvalidArgument;
      }
      uint64_t bytes =
          static_cast<uint64_t>(a.i) * getScalarTypeSize(matrix.type);
      if (bytes % align != 0) {
        error = prefix() + "row stride \"" + p.name + "\" (" +
                std::to_string(a.i) + " elements of " +
                stringifyScalarType(matrix.type) + " = " +
                std::to_string(bytes) + " bytes) is not a multiple of the " +
                "kernel's alignment of " + std::to_string(align) + " bytes";
        return Status::Misaligned;
      }
    } else if (p.kind == ParamKind::Scalar && p.type == ScalarType::I32) {
      if (a.i < INT32_MIN || a.i > INT32_MAX) {
        error = prefix() + "scalar \"" + p.name + "\" (" + std::to_string(a.i) +
                ") does not fit in i32";
        return Status::InvalidArgument;
      }
    }
  }
  return Status::Ok;
}

void runtime::computePersistentGrid(const KernelMetadata &meta, int64_t m,
                                    int64_t residentGroups, unsigned &gridX,
                                    uint64_t &workspaceBytes) {
  uint64_t groups = (static_cast<uint64_t>(m) + meta.rowsPerCta - 1) /
                    static_cast<uint64_t>(meta.rowsPerCta);
  groups = std::min<uint64_t>(groups,
                              static_cast<uint64_t>(std::max<int64_t>(
                                  1, residentGroups)));
  gridX = static_cast<unsigned>(groups * meta.ctasPerRowGroup);
  workspaceBytes = groups * static_cast<uint64_t>(meta.rowsPerCta) *
                   static_cast<uint64_t>(meta.n) * 4u *
                   meta.finishOutputs.size();
}

int64_t runtime::getDynamicSharedOptIn(const KernelMetadata &meta) {
  constexpr int64_t defaultLimit = 48 * 1024;
  if (meta.dynamicSharedBytes > 0 &&
      meta.staticSharedBytes + meta.dynamicSharedBytes > defaultLimit)
    return meta.dynamicSharedBytes;
  return 0;
}

Status runtime::computeGridSize(const KernelMetadata &meta, int64_t m,
                                unsigned &gridX, std::string &error) {
  const uint64_t maxGrid = (uint64_t(1) << 31) - 1;
  uint64_t groups = (static_cast<uint64_t>(m) + meta.rowsPerCta - 1) /
                    static_cast<uint64_t>(meta.rowsPerCta);
  uint64_t ctas = groups * static_cast<uint64_t>(meta.ctasPerRowGroup);
  uint64_t clusterX = meta.cluster[0];
  ctas = (ctas + clusterX - 1) / clusterX * clusterX;
  if (ctas > maxGrid) {
    error = "kernel \"" + meta.kernel + "\": M = " + std::to_string(m) +
            " needs " + std::to_string(ctas) +
            " CTAs, more than the grid limit of 2^31-1";
    return Status::InvalidArgument;
  }
  gridX = static_cast<unsigned>(ctas);
  return Status::Ok;
}
