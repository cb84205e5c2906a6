//===- Compiler.cpp - compile descriptions to cubins
//-----------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Compiler/Compiler.h"
#include "CompileMemo.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/KernelConfig.h"
#include "quack/Dialect/Quack/Transforms/TunedConfigs.h"
#include "quack/InitAll.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <condition_variable>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>

using namespace mlir;

namespace quack {

std::unique_ptr<MLIRContext> createContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  // Diagnostics point at the source; dumping the failing op is for
  // compiler developers (quack-opt --mlir-print-op-on-diagnostic).
  context->printOpOnDiagnostic(false);
  context->loadAllAvailableDialects();
  return context;
}

static std::string printOp(Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os);
  os << "\n";
  return s;
}

static LogicalResult runPipeline(
    ModuleOp module,
    llvm::function_ref<void(OpPassManager &, const PipelineOptions &)> build,
    const PipelineOptions &options) {
  PassManager pm(module->getName());
  build(pm, options);
  return pm.run(module);
}

/// Largest N any path supports: a row split over the largest cluster.
static int64_t maxRowLengthFor(int64_t) { return mlir::quack::kMaxRowLength; }

/// An sm_90 SM's limits on resident CTAs, threads and registers.
constexpr int64_t kMaxCtasPerSm = 32;
constexpr int64_t kMaxThreadsPerSm = 2048;
constexpr int64_t kRegistersPerSm = 65536;

/// CTAs of `threads` threads that an sm_90 SM holds at `registers` per
/// thread (registers are allocated per warp, 8 per thread at a time).
/// The registers per thread ptxas allows a kernel of `threads` threads
/// asked (.minnctapersm) to fit `ctas` CTAs per SM.
static int64_t registerCap(int64_t ctas, int64_t threads) {
  int64_t warps = llvm::divideCeil(threads, 32);
  return std::min<int64_t>(255, kRegistersPerSm / (32 * warps * ctas) / 8 * 8);
}

/// The lowest register cap the search for more CTAs per SM tries, as a
/// share of the registers ptxas takes unbounded (3/5).
constexpr std::pair<int64_t, int64_t> kMinCapShare = {3, 5};

static int64_t ctasPerSmByRegisters(int64_t registers, int64_t threads) {
  int64_t warps = llvm::divideCeil(threads, 32);
  int64_t perWarp = 32 * llvm::alignTo(std::max<int64_t>(registers, 1), 8);
  return std::min(kRegistersPerSm / (perWarp * warps),
                  kMaxThreadsPerSm / threads);
}

/// A kernel's identity: description, bindings, config (with the choices
/// made outside the quack.config attribute), arch and compiler.
static std::string contentHash(llvm::StringRef source,
                               const CompileOptions &options,
                               DictionaryAttr config) {
  llvm::SHA256 sha;
  sha.update(source);
  for (const auto &[k, v] : options.bindings)
    sha.update(k + "=" + v + ";");
  std::string configText;
  llvm::raw_string_ostream cos(configText);
  cos << config;
  // Only where they differ from the default, so that other hashes stay.
  if (options.earlySums > 0)
    cos << ";early_sums=1";
  if (options.earlyVectors > 0)
    cos << ";early_vectors=1";
  if (options.expFtz == 0)
    cos << ";exp_ftz=0";
  if (options.fma > 0)
    cos << ";fma=1";
  sha.update(configText);
  sha.update(options.arch);
  sha.update(kCompilerVersion);
  return llvm::toHex(sha.final(), /*LowerCase=*/true);
}

/// Reads the launch facts convert-quack-to-gpu left on each gpu.func.
static std::vector<KernelMetadata>
collectMetadata(ModuleOp module, const CompileOptions &options,
                llvm::StringRef source,
                std::vector<DictionaryAttr> *configs = nullptr) {
  std::vector<KernelMetadata> result;
  module.walk([&](gpu::GPUFuncOp func) {
    auto abi = func->getAttrOfType<ArrayAttr>("quack.abi");
    auto config =
        func->getAttrOfType<DictionaryAttr>(mlir::quack::kConfigAttrName);
    if (!abi || !config)
      return;
    KernelMetadata md;
    md.kernel = func.getName().str();
    md.arch = options.arch;
    md.bindings = options.bindings;
    auto get = [&](StringRef key) {
      auto attr = config.getAs<IntegerAttr>(key);
      return attr ? attr.getInt() : 0;
    };
    md.vector = get("vector");
    md.threadsPerRow = get("threads_per_row");
    md.vectorsPerThread = get("vectors_per_thread");
    md.rowsPerCta = get("rows_per_cta");
    md.clusterSize = std::max<int64_t>(1, get("cluster_size"));
    md.blockThreads = md.threadsPerRow * md.rowsPerCta;
    if (auto copy = config.getAs<StringAttr>("copy"))
      md.copy = copy.getValue().str();
    if (auto prefetch = config.getAs<BoolAttr>("prefetch"))
      md.prefetch = prefetch.getValue();
    md.stages = get("stages");
    md.sharedSums = get("shared_sums");
    if (auto n = func->getAttrOfType<IntegerAttr>("quack.row_length"))
      md.rowLength = n.getInt();
    md.persistent = func->hasAttr("quack.persistent");
    if (auto bytes =
            func->getAttrOfType<IntegerAttr>("quack.dynamic_shared_bytes"))
      md.dynamicShared = bytes.getInt();
    if (auto maps = func->getAttrOfType<ArrayAttr>("quack.tensor_maps")) {
      llvm::json::Array recipes;
      for (Attribute entry : maps) {
        auto dict = cast<DictionaryAttr>(entry);
        auto box = dict.getAs<DenseI64ArrayAttr>("box");
        llvm::json::Object recipe;
        recipe["of"] = dict.getAs<StringAttr>("of").getValue().str();
        recipe["dtype"] = dict.getAs<StringAttr>("dtype").getValue().str();
        recipe["columns"] = dict.getAs<IntegerAttr>("columns").getInt();
        recipe["box"] = llvm::json::Array(box.asArrayRef());
        recipes.push_back(std::move(recipe));
      }
      std::string text;
      llvm::raw_string_ostream os(text);
      os << llvm::json::Value(std::move(recipes));
      md.tensorMapsJson = text;
    }
    if (auto finish = func->getAttrOfType<DictionaryAttr>("quack.finish")) {
      md.finishSymbol = finish.getAs<StringAttr>("symbol").getValue().str();
      md.finishThreads = finish.getAs<IntegerAttr>("threads").getInt();
      md.finishColumns =
          finish.getAs<IntegerAttr>("columns_per_cta").getInt();
      for (Attribute entry : abi) {
        auto dict = cast<DictionaryAttr>(entry);
        auto kind = dict.getAs<StringAttr>("kind");
        auto role = dict.getAs<StringAttr>("role");
        if (kind && role && kind.getValue() == "row" &&
            role.getValue() == "output")
          md.finishOutputs.push_back(
              dict.getAs<StringAttr>("name").getValue().str());
      }
    }

    llvm::json::Array params;
    int64_t widest = 1;
    for (Attribute entry : abi) {
      llvm::json::Object obj;
      for (NamedAttribute field : cast<DictionaryAttr>(entry)) {
        auto value = cast<StringAttr>(field.getValue()).getValue();
        obj[field.getName().getValue()] = value.str();
        if (field.getName() == "dtype") {
          int64_t bytes = llvm::StringSwitch<int64_t>(value)
                              .Cases({"bf16", "f16"}, 2)
                              .Cases({"f32", "i32"}, 4)
                              .Case("i64", 8)
                              .Default(4);
          StringRef kind =
              cast<DictionaryAttr>(entry).getAs<StringAttr>("kind").getValue();
          if (kind == "matrix" || kind == "row")
            widest = std::max(widest, bytes);
        }
      }
      params.push_back(std::move(obj));
    }
    std::string paramsText;
    llvm::raw_string_ostream os(paramsText);
    os << llvm::json::Value(std::move(params));
    md.paramsJson = paramsText;
    md.requiredAlignment = md.vector * widest;
    md.maxRowLength = maxRowLengthFor(widest);

    md.hash = contentHash(source, options, config);
    if (configs)
      configs->push_back(config);
    result.push_back(std::move(md));
  });
  return result;
}

llvm::json::Object bindingsToJSON(const Bindings &bindings) {
  llvm::json::Object object;
  for (const auto &[name, value] : bindings) {
    int64_t asInt;
    if (!llvm::StringRef(value).getAsInteger(10, asInt))
      object[name] = asInt;
    else
      object[name] = value;
  }
  return object;
}

std::string KernelMetadata::toJSON(llvm::StringRef cubinFile) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, /*IndentSize=*/2);
  auto params = llvm::json::parse(paramsJson);
  j.object([&] {
    j.attribute("schema", kMetadataSchema);
    j.attribute("kernel", kernel);
    j.attribute("symbol", kernel);
    j.attribute("cubin", cubinFile);
    j.attribute("arch", arch);
    j.attribute("bindings", bindingsToJSON(bindings));
    j.attribute("params", params ? std::move(*params) : llvm::json::Array());
    if (!tensorMapsJson.empty()) {
      auto maps = llvm::json::parse(tensorMapsJson);
      j.attribute("tensor_maps",
                  maps ? std::move(*maps) : llvm::json::Array());
    }
    j.attribute("N", rowLength);
    j.attribute("alignment", requiredAlignment);
    j.attributeObject("grid", [&] {
      j.attribute("kind", persistent ? "persistent" : "rows");
      j.attribute("rows_per_cta", rowsPerCta);
      j.attribute("ctas_per_rows", clusterSize);
    });
    if (!finishSymbol.empty())
      j.attributeObject("finish", [&] {
        j.attribute("symbol", finishSymbol);
        j.attributeArray("block", [&] {
          j.value(finishThreads);
          j.value(1);
          j.value(1);
        });
        j.attribute("columns_per_cta", finishColumns);
        j.attributeArray("outputs", [&] {
          for (const std::string &name : finishOutputs)
            j.value(name);
        });
      });
    j.attributeArray("block", [&] {
      j.value(blockThreads);
      j.value(1);
      j.value(1);
    });
    j.attributeArray("cluster", [&] {
      j.value(clusterSize);
      j.value(1);
      j.value(1);
    });
    if (!clusterFallbacks.empty())
      j.attributeArray("cluster_fallbacks", [&] {
        for (const std::string &file : clusterFallbacks)
          j.value(file);
      });
    j.attributeObject("shared_bytes", [&] {
      j.attribute("static", resources.sharedBytes);
      j.attribute("dynamic", dynamicShared);
    });
    j.attributeObject("config", [&] {
      j.attribute("threads_per_row", threadsPerRow);
      j.attribute("rows_per_cta", rowsPerCta);
      j.attribute("vector", vector);
      j.attribute("vectors_per_thread", vectorsPerThread);
      j.attribute("cluster_size", clusterSize);
      j.attribute("copy", copy);
      j.attribute("prefetch", prefetch);
      if (stages > 0)
        j.attribute("stages", stages);
      if (tunedConfig)
        j.attribute("table", tuningTable);
      if (!finishSymbol.empty()) {
        int64_t numSums = finishOutputs.size();
        j.attribute("sums", sharedSums == 0          ? "registers"
                            : sharedSums >= numSums ? "shared"
                                                    : "split");
        if (sharedSums > 0)
          j.attribute("shared_sums", std::min(sharedSums, numSums));
      }
    });
    j.attributeObject("resources", [&] {
      j.attribute("registers", resources.registers);
      j.attribute("spill_stores", resources.spillStoreBytes);
      j.attribute("spill_loads", resources.spillLoadBytes);
      j.attribute("stack_bytes", resources.stackBytes);
      j.attribute("shared_bytes", resources.sharedBytes);
    });
    j.attributeObject("limits", [&] { j.attribute("max_N", maxRowLength); });
    j.attribute("compiler", kCompilerVersion);
    j.attribute("hash", hash);
  });
  os << "\n";
  return text;
}

/// A place among the ptxas processes that the CTAs-per-SM searches of all
/// threads run at once, which are as many as the hardware threads: a
/// bundle compiling on every hardware thread would otherwise run that many
/// squared.
class SearchSlot {
public:
  SearchSlot() {
    std::unique_lock<std::mutex> lock(mutex());
    freed().wait(lock, [] { return available() > 0; });
    --available();
  }
  ~SearchSlot() {
    {
      std::lock_guard<std::mutex> lock(mutex());
      ++available();
    }
    freed().notify_one();
  }
  SearchSlot(const SearchSlot &) = delete;
  SearchSlot &operator=(const SearchSlot &) = delete;

private:
  static std::mutex &mutex() {
    static std::mutex m;
    return m;
  }
  static std::condition_variable &freed() {
    static std::condition_variable cv;
    return cv;
  }
  static size_t &available() {
    static size_t count = std::max<size_t>(
        1, llvm::hardware_concurrency().compute_thread_count());
    return count;
  }
};

/// Spill bytes (stores and loads) of every kernel of `a`, from ptxas.
static int64_t spills(const Artifacts &a) {
  int64_t bytes = 0;
  for (const KernelMetadata &md : a.kernels)
    bytes += md.resources.spillStoreBytes + md.resources.spillLoadBytes;
  return bytes;
}

// kTableSpillBytes (Compiler.h), the spill bytes up to which a table
// entry's loop with its shared sums (`sums=K`) is kept as measured, comes
// from these entries: layernorm_bwd at 32768-131072 on clusters of 2-8 CTAs
// of 512 threads, two bulk-copy buffers and db's partials in shared memory.
// ptxas spills 12-32 bytes there, and on an H100 they ran 6-17% faster in
// bf16 than the table's entries before and 8-31% faster than the model's
// configs, which spill none (f16 at 131072, 24 bytes: 2% slower than the
// entry before, 9% faster than the model's; BENCHMARKS.md, 2026-12-06,
// clusters of 8 CTAs).

/// Whether `k` runs a table entry's loop with the shared sums the entry
/// gives (from the table, or forced to the same count).
static bool runsTableLoop(const KernelMetadata &k) {
  return k.prefetch && k.tableSums > 0 && k.sharedSums == k.tableSums;
}

/// Whether `a` runs a table entry's loop with its shared sums, spilling at
/// most kTableSpillBytes: then no search replaces its config.
static bool keepsTableLoop(const Artifacts &a) {
  return spills(a) <= kTableSpillBytes && llvm::any_of(a.kernels, runsTableLoop);
}

/// Marks the kernels of `a` whose prefetching loop with shared sums spills
/// at most kTableSpillBytes (a table entry's, or a config forced or found
/// like one), which --fail-on-spills lets pass, and says so in the reason.
static void noteKeptSpills(Artifacts &a) {
  int64_t bytes = spills(a);
  if (bytes == 0 || bytes > kTableSpillBytes)
    return;
  for (KernelMetadata &k : a.kernels) {
    if (k.measuredSpills || !k.prefetch || k.sharedSums == 0)
      continue;
    k.measuredSpills = true;
    k.configReason +=
        "; ptxas spills " + std::to_string(bytes) + " bytes" +
        (runsTableLoop(k) ? ", as the table's entry was measured (kept up to "
             : " in a loop with shared sums (allowed up to ") +
        std::to_string(kTableSpillBytes) + ")";
  }
}

/// compileAndSearch() and compile() for a retry: a config the retry forces
/// may not compile (its shared memory, say); that failure only means the
/// retry is not taken, so its diagnostics are dropped instead of reported
/// (the first compile's are not: it has no retry to fall back to).
static FailureOr<Artifacts> compileAndSearch(llvm::SourceMgr &sourceMgr,
                                             unsigned bufferId,
                                             MLIRContext &context,
                                             const CompileOptions &options);
template <typename Compile>
static FailureOr<Artifacts> quietly(Compile compileFn, llvm::SourceMgr &sourceMgr,
                                    unsigned bufferId, MLIRContext &context,
                                    const CompileOptions &options) {
  ScopedDiagnosticHandler quiet(&context,
                                [](mlir::Diagnostic &) { return success(); });
  return compileFn(sourceMgr, bufferId, context, options);
}
static FailureOr<Artifacts> tryCompileAndSearch(llvm::SourceMgr &sourceMgr,
                                                unsigned bufferId,
                                                MLIRContext &context,
                                                const CompileOptions &options) {
  return quietly(compileAndSearch, sourceMgr, bufferId, context, options);
}
static FailureOr<Artifacts> tryCompile(llvm::SourceMgr &sourceMgr,
                                       unsigned bufferId, MLIRContext &context,
                                       const CompileOptions &options) {
  return quietly(compile, sourceMgr, bufferId, context, options);
}

/// A retry forced a knob; its reason says why instead of `forced` (the
/// "(forced)" text config selection wrote for it).
static void explainRetry(Artifacts &retry, const std::string &forced,
                         const std::string &why) {
  for (KernelMetadata &k : retry.kernels) {
    size_t at = k.configReason.find(forced);
    if (at != std::string::npos)
      k.configReason.replace(at, forced.size(), why);
  }
}

/// Steps 1-6 of compileAndSearch(): the input to PTX, in `lowered`, with
/// the kernels' metadata in `artifacts`. Where options.emit asks for an
/// earlier stage, `artifacts.text` holds it instead.
static LogicalResult lower(llvm::SourceMgr &sourceMgr, unsigned bufferId,
                           MLIRContext &context, const CompileOptions &options,
                           Artifacts &artifacts, LoweredKernel &lowered) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  StringRef name = buffer->getBufferIdentifier();
  // Errors about the whole input (flags, tools) have no source position.
  Location fileLoc = UnknownLoc::get(&context);

  if (!StringRef(options.arch).starts_with("sm_") || options.arch.size() < 5 ||
      !llvm::isDigit(options.arch[3]))
    return emitError(fileLoc) << "unknown architecture '" << options.arch
                              << "'; expected sm_90, sm_90a, sm_100, ...",
           failure();

  // 1. Front end.
  OwningOpRef<ModuleOp> module;
  if (name.ends_with(".mlir")) {
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return failure();
    if (!options.bindings.empty())
      return emitError(fileLoc)
                 << "-D bindings apply to .qk descriptions, not to .mlir "
                    "input",
             failure();
  } else {
    module = importKernelSource(sourceMgr, bufferId, &context, options.bindings,
                                options.kernel);
    if (!module)
      return failure();
  }
  if (!options.kernel.empty() && name.ends_with(".mlir")) {
    SmallVector<Operation *> drop;
    bool found = false;
    for (Operation &op : module->getBody()->getOperations()) {
      auto sym = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      if (!sym || !isa<mlir::quack::KernelOp, gpu::GPUModuleOp>(op))
        continue;
      if (sym.getValue() == options.kernel)
        found = true;
      else
        drop.push_back(&op);
    }
    if (!found)
      return emitError(fileLoc)
                 << "no kernel named '" << options.kernel << "' in the input",
             failure();
    for (Operation *op : drop)
      op->erase();
  }
  if (options.emit == Stage::Quack) {
    artifacts.text = printOp(*module);
    return success();
  }

  PipelineOptions pipeline;
  pipeline.arch = options.arch;
  pipeline.alignment = options.alignment;
  pipeline.vector = options.vector;
  pipeline.threadsPerRow = options.threadsPerRow;
  pipeline.rowsPerCta = options.rowsPerCta;
  pipeline.clusterSize = options.clusterSize;
  pipeline.minCtasPerSm = options.minCtasPerSm;
  pipeline.prefetch = options.prefetch;
  pipeline.remat = options.remat > 0 ? 1 : 0;
  pipeline.sink = options.sink > 0 ? 1 : 0;
  pipeline.copy = options.copy;
  pipeline.stages = options.stages;
  pipeline.sums = options.sums < 0 ? -1 : options.sums;
  pipeline.earlySums = options.earlySums > 0;
  pipeline.earlyVectors = options.earlyVectors > 0;
  pipeline.expFtz = options.expFtz != 0;
  pipeline.useTuned = options.useTuned;
  pipeline.tuning = options.tuning;

  // 2. Config selection.
  if (failed(runPipeline(*module, buildQuackConfigPipeline, pipeline)))
    return failure();
  std::map<std::string, std::string> reasons;
  std::map<std::string, std::string> tuned;
  std::map<std::string, int64_t> tableSums;
  std::set<std::string> exponentials;
  module->walk([&](mlir::quack::KernelOp kernel) {
    if (kernel
            ->walk([](Operation *op) {
              return isa<math::ExpOp, math::Exp2Op, math::TanhOp>(op)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted())
      exponentials.insert(kernel.getSymName().str());
    if (auto r = kernel->getAttrOfType<StringAttr>("quack.config_reason"))
      reasons[kernel.getSymName().str()] = r.str();
    if (auto table = kernel->getAttrOfType<StringAttr>(
            mlir::quack::kConfigTunedAttrName))
      tuned[kernel.getSymName().str()] = table.str();
    if (auto k = kernel->getAttrOfType<IntegerAttr>(
            mlir::quack::kConfigTableSumsAttrName))
      tableSums[kernel.getSymName().str()] = k.getInt();
    if (auto config = kernel->getAttrOfType<DictionaryAttr>(
            mlir::quack::kConfigAttrName))
      if (auto flag = config.getAs<BoolAttr>("prefetch"))
        lowered.prefetches |= flag.getValue();
  });
  if (options.emit == Stage::Config) {
    artifacts.text = printOp(*module);
    return success();
  }

  // 3. Rows over threads.
  if (failed(runPipeline(*module, buildQuackToGPUPipeline, pipeline)))
    return failure();
  artifacts.kernels =
      collectMetadata(*module, options, buffer->getBuffer(), &lowered.configs);
  module->walk([&](gpu::GPUFuncOp func) {
    if (auto config = func->getAttrOfType<DictionaryAttr>(
            mlir::quack::kConfigAttrName))
      lowered.lastConfig = config;
  });
  for (KernelMetadata &md : artifacts.kernels) {
    md.configReason = reasons[md.kernel];
    if (options.fma > 0)
      md.configReason += "; fma=1 (forced)";
    if (auto it = tuned.find(md.kernel); it != tuned.end()) {
      md.tunedConfig = true;
      md.tuningTable = it->second;
    }
    if (auto it = tableSums.find(md.kernel); it != tableSums.end())
      md.tableSums = it->second;
    md.exponentials = exponentials.count(md.kernel) != 0;
  }
  if (options.emit == Stage::GPU) {
    artifacts.text = printOp(*module);
    return success();
  }

  // 4. LLVM and NVVM dialects.
  if (failed(runPipeline(*module, buildGPUToNVVMPipeline, pipeline)))
    return failure();
  if (options.emit == Stage::NVVM) {
    artifacts.text = printOp(*module);
    return success();
  }

  SmallVector<gpu::GPUModuleOp> gpuModules(module->getOps<gpu::GPUModuleOp>());
  if (gpuModules.empty())
    return emitError(fileLoc) << "the input has no kernel (no quack.kernel "
                                 "or gpu.module)",
           failure();
  if (gpuModules.size() > 1) {
    std::string names;
    for (auto m : gpuModules)
      names += (names.empty() ? "" : ", ") + m.getName().str();
    return emitError(fileLoc)
               << "the input has " << gpuModules.size() << " kernels (" << names
               << "); choose one with --kernel=<name>",
           failure();
  }

  // 5. LLVM IR.
  llvm::LLVMContext llvmContext;
  auto llvmModule =
      translateToLLVMIR(gpuModules.front(), llvmContext, options.arch);
  if (failed(llvmModule))
    return failure();
  if (options.emit == Stage::LLVM) {
    llvm::raw_string_ostream os(artifacts.text);
    (*llvmModule)->print(os, nullptr);
    return success();
  }

  // 6. PTX.
  llvm::Expected<std::string> ptx =
      emitPTX(**llvmModule, options.arch, options.fma > 0);
  if (!ptx)
    return emitError(fileLoc) << llvm::toString(ptx.takeError()), failure();
  if (options.emit == Stage::PTX) {
    artifacts.text = std::move(*ptx);
    return success();
  }
  lowered.kernels = artifacts.kernels;
  lowered.ptx = std::move(*ptx);
  lowered.ftz = options.expFtz != 0;
  return success();
}


/// compile() without its last resort: the whole pipeline, then the retries
/// and searches that ptxas' report decides (prefetch, shared sums, CTAs per
/// SM, remat), each of which compiles again through this function: the
/// last resort judges only their final result.
static FailureOr<Artifacts> compileAndSearch(llvm::SourceMgr &sourceMgr,
                                             unsigned bufferId,
                                             MLIRContext &context,
                                             const CompileOptions &options) {
  Artifacts artifacts;
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  Location fileLoc = UnknownLoc::get(&context);

  // A retry that lowers like an earlier compile of this kernel (all but
  // the exponential's flush-to-zero) reuses its PTX; only the hashes
  // differ.
  // Only for descriptions: an .mlir input may spell ex2.approx.ftz itself
  // (inline PTX), which its exp_ftz=0 compile keeps.
  CompileMemo *memo = options.emit == Stage::Cubin &&
                              !buffer->getBufferIdentifier().ends_with(".mlir")
                          ? CompileMemo::active()
                          : nullptr;
  std::optional<LoweredKernel> lowered;
  if (memo)
    lowered = memo->findLowered(options);
  if (lowered) {
    artifacts.kernels = lowered->kernels;
    for (auto [md, config] : llvm::zip(artifacts.kernels, lowered->configs))
      md.hash = contentHash(buffer->getBuffer(), options, config);
  } else {
    lowered.emplace();
    if (failed(lower(sourceMgr, bufferId, context, options, artifacts,
                     *lowered)))
      return failure();
    if (options.emit != Stage::Cubin)
      return artifacts;
    if (memo)
      memo->storeLowered(options, *lowered);
  }
  const bool prefetches = lowered->prefetches;
  const DictionaryAttr kernelConfig = lowered->lastConfig;

  // 7. cubin.
  llvm::Expected<std::string> ptxas = findPtxas(options.ptxas);
  if (!ptxas)
    return emitError(fileLoc) << llvm::toString(ptxas.takeError()), failure();
  // compile() may compile a kernel with exponentials again without their
  // flush-to-zero: ptxas on that PTX runs beside this one where a hardware
  // thread is idle, and the retry finds its cubin.
  if (memo && options.expFtz < 0 && artifacts.kernels.size() == 1 &&
      artifacts.kernels.front().exponentials && hasFtzChoice(lowered->ptx))
    memo->assembleAhead(withExpFtz(lowered->ptx, /*ftz=*/false), options.arch,
                        *ptxas);
  llvm::Expected<Cubin> cubin =
      memo ? memo->assemble(lowered->ptx, options.arch, *ptxas)
           : assemblePTX(lowered->ptx, options.arch, *ptxas);
  if (!cubin)
    return emitError(fileLoc) << llvm::toString(cubin.takeError()), failure();
  artifacts.cubin = std::move(cubin->binary);
  artifacts.ptxasLog = cubin->log;
  artifacts.ptx = std::move(lowered->ptx);
  for (KernelMetadata &md : artifacts.kernels)
    for (const ResourceReport &report : cubin->reports)
      if (report.kernel == md.kernel)
        md.resources = report;

  // Config selection estimates whether a persistent loop has the registers
  // to load the next row group ahead; ptxas decides. When the prefetching
  // loop it chose spills, compile again without prefetch and keep the
  // version that spills less.
  auto narrowInputs = [](const Artifacts &a) {
    for (const KernelMetadata &k : a.kernels)
      for (const auto &[name, value] : k.bindings)
        if (value == "bf16" || value == "f16")
          return true;
    return false;
  };
  // A table entry's loop with its shared sums keeps its prefetch.
  bool tableLoop = keepsTableLoop(artifacts);
  if (prefetches && options.prefetch < 0 && spills(artifacts) > 0 &&
      !tableLoop && options.remat < 0 && narrowInputs(artifacts)) {
    // 16-bit rows kept packed across exchanges may leave the prefetching
    // loop the registers it needs: keep prefetch where they do.
    CompileOptions packed = options;
    packed.prefetch = 1;
    packed.remat = 1;
    FailureOr<Artifacts> retry = tryCompileAndSearch(sourceMgr, bufferId, context, packed);
    if (succeeded(retry) && spills(*retry) == 0) {
      explainRetry(*retry, "; prefetch=1 (forced)",
                   "; prefetch=1 (without remat, ptxas spilled " +
                       std::to_string(spills(artifacts)) + " bytes)");
      return retry;
    }
  }
  if (prefetches && options.prefetch < 0 && spills(artifacts) > 0 &&
      !tableLoop) {
    CompileOptions without = options;
    without.prefetch = 0;
    FailureOr<Artifacts> retry =
        tryCompileAndSearch(sourceMgr, bufferId, context, without);
    if (succeeded(retry) && spills(*retry) < spills(artifacts)) {
      explainRetry(*retry, "; prefetch=0 (forced)",
                   "; prefetch=0 (with prefetch, ptxas spilled " +
                       std::to_string(spills(artifacts)) + " bytes)");
      for (KernelMetadata &k : retry->kernels)
        k.prefetchDropped = true;
      return retry;
    }
  }

  // A cluster kernel without sums over rows is not alone on its SM: the
  // more of its CTAs an SM holds, the more bytes it has in flight while
  // each CTA waits for its peers' partials. ptxas, left to itself, takes
  // registers freely (it hoists loads and keeps values live across the
  // exchange); bound it (.minnctapersm) to the most CTAs per SM it can fit
  // without spilling.
  //
  // With 16-bit rows, also try keeping them packed across the exchanges
  // (remat) on such kernels and on kernels with sums over rows, and keep
  // it where it spills less or fits more CTAs per SM. Elsewhere (and where
  // it gains neither) its recomputation costs 3-10% (BENCHMARKS.md,
  // 2026-12-03, sixth run).
  if (artifacts.kernels.size() != 1)
    return artifacts;
  const KernelMetadata md = artifacts.kernels.front();
  int64_t threads = md.blockThreads;
  bool sums = !md.finishSymbol.empty();
  bool clusterRows = md.clusterSize > 1 && !sums && !md.persistent;
  if (threads <= 0 || (!clusterRows && !sums))
    return artifacts;
  auto occupancy = [&](const Artifacts &a) {
    return ctasPerSmByRegisters(a.kernels.front().resources.registers,
                                threads);
  };
  if (clusterRows && options.minCtasPerSm < 0 && spills(artifacts) == 0) {
    int64_t now = occupancy(artifacts);
    int64_t most =
        std::min<int64_t>(kMaxCtasPerSm, kMaxThreadsPerSm / threads);
    // The trials differ only in ptxas' register cap: assemble the PTX again
    // with each cap, from the most CTAs down, and keep the first that does
    // not spill. Fewer registers may spill less (rmsnorm_fwd bf16 at 65536
    // spills with 40 registers and not with 32), so each cap is tried (down
    // to the bound below); of the CTA counts that share a cap (and a
    // cubin), only the largest.
    // Non-persistent kernels do not prefetch: the PTX is all that changes.
    // ptxas runs on as many trials at once as there are hardware threads.
    //
    // A cap far below what ptxas takes unbounded spills. Over the GPU
    // suite's catalogue (3870 cubins), the caps that fitted without
    // spilling were 62-95% of it (cross_entropy_fwd and _fwd_bwd bf16 with
    // packed rows: 40 of 63-64; rmsnorm_fwd bf16 at 32768-262144: 32 of
    // 44; layernorm_fwd f32 at 32768-131072: 64 of 78, where 32 and 40
    // spilled); caps below kMinCapShare of it are not tried. None of those
    // trials was kept anywhere in that catalogue (it compiles
    // byte-identical with and without them), and they were 16 of the 41
    // ptxas runs of cross_entropy_fwd_bwd bf16 at 65536.
    SmallVector<int64_t> candidates;
    int64_t lowest = llvm::divideCeil(
        md.resources.registers * kMinCapShare.first, kMinCapShare.second);
    bool skipped = false;
    // The retry with exact exponentials lowers like this compile but for
    // that instruction: caps where the other spilled with no more
    // registers unbounded are not tried again. An approximation (ptxas is
    // not monotone in the cap, see above), kept because it changes no
    // cubin of the catalogue; with the floor below, cross_entropy_fwd_bwd
    // bf16 at 65536 runs ptxas 18 times instead of 28
    // (test/quackc/exact-retry-search.test).
    std::set<int64_t> knownToSpill;
    // Nor, in that retry and the retries it makes, CTA counts it would
    // have to exceed to be kept: a trial bounded to no more CTAs can only
    // make a compile win that is then not kept. That takes a trial to
    // fit as many CTAs as it was bounded to, not more: ptxas could take
    // fewer registers than the cap, but in 119 bounded trials over the
    // catalogue's kernels (16384-262144, bf16 and f32) none did, and the
    // catalogue compiles byte for byte as it did without the floor.
    int64_t floor = 0;
    if (memo) {
      knownToSpill = memo->capsKnownToSpill(options, md.resources.registers);
      floor = memo->searchFloor();
    }
    for (int64_t ctas = most; ctas > now && !prefetches; --ctas) {
      if (registerCap(ctas, threads) < lowest) {
        skipped = true;
        continue;
      }
      if (ctas <= floor || knownToSpill.count(registerCap(ctas, threads)))
        continue;
      if (candidates.empty() || registerCap(ctas, threads) !=
                                    registerCap(candidates.back(), threads))
        candidates.push_back(ctas);
    }
    KernelMetadata &kernel = artifacts.kernels.front();
    auto trial = [&](int64_t ctas) -> std::optional<Cubin> {
      // None where the PTX cannot be bounded (no trial is then kept).
      std::optional<std::string> bounded =
          withMinCtasPerSm(artifacts.ptx, ctas);
      if (!bounded)
        return std::nullopt;
      SearchSlot slot;
      llvm::Expected<Cubin> cubin =
          assemblePTX(*bounded, options.arch, *ptxas);
      if (!cubin) {
        llvm::consumeError(cubin.takeError());
        return std::nullopt;
      }
      return std::move(*cubin);
    };
    auto spillFree = [&](const std::optional<Cubin> &cubin) {
      return cubin && llvm::any_of(cubin->reports, [&](const auto &r) {
               return r.kernel == kernel.kernel &&
                      r.spillStoreBytes + r.spillLoadBytes == 0;
             });
    };
    size_t width = std::max<size_t>(
        1, llvm::hardware_concurrency().compute_thread_count());
    std::set<int64_t> spilledCaps;
    for (size_t first = 0; first < candidates.size(); first += width) {
      size_t last = std::min(candidates.size(), first + width);
      std::vector<std::future<std::optional<Cubin>>> batch;
      for (size_t i = first; i < last; ++i)
        batch.push_back(std::async(std::launch::async, trial, candidates[i]));
      std::vector<std::optional<Cubin>> cubins;
      for (auto &future : batch)
        cubins.push_back(future.get());
      for (size_t i = first; i < last; ++i)
        if (cubins[i - first] && !spillFree(cubins[i - first]))
          spilledCaps.insert(registerCap(candidates[i], threads));
      auto found = llvm::find_if(cubins, spillFree);
      if (found == cubins.end())
        continue;
      int64_t ctas = candidates[first + (found - cubins.begin())];
      // What compiling with ctas=<ctas> gives, without compiling again.
      NamedAttrList config(kernelConfig);
      config.set("min_ctas_per_sm",
                 IntegerAttr::get(IntegerType::get(&context, 64), ctas));
      kernel.hash = contentHash(buffer->getBuffer(), options,
                                config.getDictionary(&context));
      for (const ResourceReport &r : (*found)->reports)
        if (r.kernel == kernel.kernel)
          kernel.resources = r;
      kernel.configReason += "; min_ctas_per_sm=" + std::to_string(ctas) +
                             " (ptxas fits " + std::to_string(ctas) +
                             " CTAs per SM without spilling; unbounded, " +
                             std::to_string(md.resources.registers) +
                             " registers fit " + std::to_string(now) +
                             (skipped ? "; caps under " +
                                            std::to_string(lowest) +
                                            " registers not tried"
                                      : std::string()) +
                             ")";
      artifacts.cubin = std::move((*found)->binary);
      artifacts.ptxasLog = std::move((*found)->log);
      artifacts.ptx = *withMinCtasPerSm(artifacts.ptx, ctas);
      break;
    }
    if (memo)
      memo->storeSpilledCaps(options, md.resources.registers, spilledCaps);
  }
  // Why `retry` is better than `base` (it spills less, or it spills
  // neither and fits more CTAs per SM), or nothing where it is not.
  auto gain = [&](const FailureOr<Artifacts> &retry,
                  const Artifacts &base) -> std::optional<std::string> {
    if (failed(retry))
      return std::nullopt;
    if (spills(*retry) < spills(base))
      return "ptxas spills " + std::to_string(spills(*retry)) +
             " bytes instead of " + std::to_string(spills(base));
    if (spills(*retry) == 0 && spills(base) == 0 &&
        occupancy(*retry) > occupancy(base))
      return std::to_string(occupancy(*retry)) + " CTAs per SM instead of " +
             std::to_string(occupancy(base));
    return std::nullopt;
  };
  if (options.remat < 0 && narrowInputs(artifacts)) {
    CompileOptions packed = options;
    packed.remat = 1;
    FailureOr<Artifacts> retry = tryCompileAndSearch(sourceMgr, bufferId, context, packed);
    // Packed rows are widened again after the last exchange, all fragments
    // at once before the stores at the end; finishing and storing each
    // fragment before the next (sink) leaves fewer registers live
    // (layernorm_fwd bf16 at 32768: 64 -> 40, three CTAs per SM instead of
    // two) but issues the loads it moves (w, b) later. Tried on cluster
    // kernels without sums over rows whose packed rows leave at most half
    // of the SM's threads resident, and kept where it spills less or fits
    // more CTAs per SM: there it gained up to 13.6% on an H100
    // (layernorm_fwd and cross_entropy_fwd_bwd at 262144); on kernels with
    // sums over rows it lost up to 9.4% (layernorm_bwd at 1024), and where
    // three quarters of the threads were resident already, 0.4%
    // (softmax_bwd at 16384) (BENCHMARKS.md, 2026-12-06).
    bool sunk = false;
    if (options.sink < 0 && succeeded(retry) && clusterRows &&
        occupancy(*retry) * threads <= kMaxThreadsPerSm / 2) {
      CompileOptions sinking = packed;
      sinking.sink = 1;
      FailureOr<Artifacts> sunkRetry =
          tryCompileAndSearch(sourceMgr, bufferId, context, sinking);
      if (std::optional<std::string> why = gain(sunkRetry, *retry)) {
        explainRetry(*sunkRetry, "; sink=1",
                     "; sink=1 (each fragment stored before the next: " +
                         *why + ")");
        retry = std::move(sunkRetry);
        sunk = true;
      }
    }
    if (std::optional<std::string> why = gain(retry, artifacts)) {
      explainRetry(*retry, "; remat=1",
                   std::string("; remat=1 (16-bit rows kept packed across "
                               "exchanges") +
                       (sunk ? ", with sink=1: " : ": ") + *why + ")");
      return retry;
    }
  }
  return artifacts;
}

FailureOr<Artifacts> compile(llvm::SourceMgr &sourceMgr, unsigned bufferId,
                             MLIRContext &context,
                             const CompileOptions &options) {
  // The retries below (and their searches) share what this compile lowered
  // and assembled; the outermost compile on this thread owns it.
  CompileMemo::Scope memo(sourceMgr, bufferId, context);
  FailureOr<Artifacts> artifacts =
      compileAndSearch(sourceMgr, bufferId, context, options);
  if (failed(artifacts))
    return failure();
  // A table entry was measured on one flag setting of its kernel (the one
  // scripts/tune-build.sh compiles); where another (a residual input, say)
  // makes its config spill even after the searches above (remat, CTAs per
  // SM, shared sums), keep the model's config if it spills less.
  // Likewise where the searches had to give up the loop's prefetch, which
  // the entry was measured with: rmsnorm_bwd with a residual input in bf16
  // at 32768-131072 ran 18-21% slower on the table's split without prefetch
  // than on the model's config with it (BENCHMARKS.md, 2026-12-04,
  // thirteenth run). An entry's loop with its shared sums that spills at
  // most kTableSpillBytes stays as measured, and so do its sums.
  bool tunedConfig = llvm::any_of(
      artifacts->kernels, [](const auto &k) { return k.tunedConfig; });
  auto droppedPrefetch = [](const Artifacts &a) {
    return llvm::any_of(a.kernels,
                        [](const auto &k) { return k.prefetchDropped; });
  };
  const bool tableLoop = keepsTableLoop(*artifacts);
  // A tuning target's table was measured on the roots of
  // scripts/tune-build.sh, whose forced splits went through the searches
  // below (shared sums, early sums): its entries get them before another
  // config is preferred. The architecture's table keeps its order, that of
  // the measurements of its entries.
  StringRef archTable = mlir::quack::tunedConfigTableName(options.arch);
  const bool targetEntry =
      llvm::any_of(artifacts->kernels, [&](const auto &k) {
        return k.tunedConfig && k.tuningTable != archTable;
      });
  // Another config where it spills less than the table's (or, where the
  // table's loop gave up its prefetch, no more), else nothing: for a
  // target's entry, what the architecture's table gives (compiled whole,
  // with its own fallback); for the architecture's, the model's.
  auto modelInstead = [&](const Artifacts &tableArtifacts)
      -> std::optional<Artifacts> {
    CompileOptions other = options;
    if (targetEntry)
      other.tuning.clear();
    else
      other.useTuned = false;
    FailureOr<Artifacts> retry =
        targetEntry ? compile(sourceMgr, bufferId, context, other)
                    : tryCompile(sourceMgr, bufferId, context, other);
    if (failed(retry) ||
        !(spills(*retry) < spills(tableArtifacts) ||
          (droppedPrefetch(tableArtifacts) &&
           spills(*retry) <= spills(tableArtifacts))))
      return std::nullopt;
    std::string table =
        targetEntry ? "the --tuning=" + options.tuning + " table's config"
                    : std::string("the table's config");
    for (KernelMetadata &k : retry->kernels)
      k.configReason +=
          spills(tableArtifacts) > 0
              ? "; not " + table + " (ptxas spilled " +
                    std::to_string(spills(tableArtifacts)) + " bytes)"
              : "; not " + table + " (its loop could not prefetch without "
                "spilling)";
    return std::move(*retry);
  };
  const bool mayPreferModel = !tableLoop && options.useTuned && tunedConfig;
  if (mayPreferModel && !targetEntry &&
      (spills(*artifacts) > 0 || droppedPrefetch(*artifacts)))
    if (std::optional<Artifacts> model = modelInstead(*artifacts))
      return std::move(*model);
  // Sums over rows keep a register per column a thread owns and sum,
  // beside the row: where that still spills, keep the partial sums of the
  // last K sums over rows in shared memory instead, for the fewest K that
  // does not spill (else the K that spills least, if it spills less; with
  // bulk copies, if buffers and sums do not fit together, the loop drops
  // its prefetch, then the row comes through registers). Where registers
  // suffice they stay: on the H200, shared sums lost 3-8% to them
  // (layernorm_bwd bf16 at 16384-131072) and gained 14% where they spilled
  // (layernorm_bwd f32 at 262144; BENCHMARKS.md, 2026-12-04, thirteenth
  // run). Fewer shared sums leave room for a second bulk-copy buffer:
  // layernorm_bwd bf16 at 262144 keeps db's partials in shared memory and
  // dw's in registers, and its loop prefetches.
  int64_t numSums = 0;
  for (const KernelMetadata &k : artifacts->kernels)
    if (!k.finishSymbol.empty())
      numSums = std::max<int64_t>(numSums, k.finishOutputs.size());
  bool sumsOverRows = numSums > 0;
  CompileOptions chosen = options;
  // Why the sums went to shared memory, if they did, and the reason text
  // that config selection gives the forced knob.
  std::string sharedWhy, sharedForced;
  if (!tableLoop && sumsOverRows && options.sums < 0 &&
      spills(*artifacts) > 0) {
    std::optional<Artifacts> best;
    CompileOptions bestOptions = options;
    for (int64_t count = 1; count <= numSums; ++count) {
      CompileOptions shared = options;
      shared.sums = count == numSums ? CompileOptions::kAllSums : count;
      FailureOr<Artifacts> retry =
          tryCompileAndSearch(sourceMgr, bufferId, context, shared);
      if (failed(retry) ||
          spills(*retry) >= (best ? spills(*best) : spills(*artifacts)))
        continue;
      best = std::move(*retry);
      bestOptions = shared;
      if (spills(*best) == 0)
        break;
    }
    if (best) {
      std::string spilled = "ptxas spilled " +
                            std::to_string(spills(*artifacts)) + " bytes";
      int64_t count = std::min(bestOptions.sums, numSums);
      if (count == numSums) {
        sharedWhy = "; sums=shared (with the partial sums in registers, " +
                    spilled + ")";
        sharedForced = "; sums=shared (forced)";
      } else {
        sharedWhy = "; sums=" + std::to_string(count) + " (the last " +
                    std::to_string(count) + " of " +
                    std::to_string(numSums) +
                    " sums over rows in shared memory; with every sum's "
                    "partials in registers, " +
                    spilled + ")";
        sharedForced = "; sums=" + std::to_string(count) +
                       " (forced: the last " + std::to_string(count) +
                       " of " + std::to_string(numSums) +
                       " sums over rows in shared memory)";
      }
      explainRetry(*best, sharedForced, sharedWhy);
      artifacts = std::move(*best);
      chosen = bestOptions;
    }
  }
  // Then accumulate the sums over rows before the exchange, so that only
  // what the rest of the row needs stays live across it (rmsnorm_bwd with a
  // residual input over 262144 f32 elements in the 8-byte alignment class,
  // three rows through registers: 76 bytes spilled, none with early sums,
  // and 3.13 -> 3.51 TB/s on the H200, BENCHMARKS.md, fourteenth run).
  // Only here: where the rows come through shared memory or a loop
  // prefetches, the longer first phase made ptxas spill (layernorm_bwd
  // bf16 at 65536 on its table's config: none before, 932 bytes after).
  if (!tableLoop && sumsOverRows && options.earlySums < 0 &&
      spills(*artifacts) > 0) {
    CompileOptions early = chosen;
    early.earlySums = 1;
    FailureOr<Artifacts> retry =
        tryCompileAndSearch(sourceMgr, bufferId, context, early);
    if (succeeded(retry) && spills(*retry) < spills(*artifacts)) {
      if (!sharedWhy.empty())
        explainRetry(*retry, sharedForced, sharedWhy);
      explainRetry(*retry, "; early_sums=1 (forced)",
                   "; early_sums=1 (with the sums over rows after the "
                   "exchange, ptxas spilled " +
                       std::to_string(spills(*artifacts)) + " bytes)");
      artifacts = std::move(retry);
    }
  }
  // Config selection reads the rows with 128-bit loads where the loop it
  // would prefetch with bulk copies does not fit in shared memory; where
  // those loads spill, keep the single bulk-copy buffer if it spills less
  // (rmsnorm_bwd with a residual input in f32 at 262144: 16 bytes spilled
  // with 128-bit loads, none through the buffer).
  bool droppedBulk = llvm::any_of(artifacts->kernels, [](const auto &k) {
    return k.configReason.find(mlir::quack::kBulkWithoutPrefetchNote) !=
           std::string::npos;
  });
  if (droppedBulk && options.copy < 0 && spills(*artifacts) > 0) {
    CompileOptions bulk = options;
    bulk.copy = static_cast<int64_t>(mlir::quack::KernelConfig::Copy::Bulk);
    FailureOr<Artifacts> retry = tryCompile(sourceMgr, bufferId, context, bulk);
    if (succeeded(retry) && spills(*retry) < spills(*artifacts)) {
      explainRetry(*retry, "; copy=bulk (forced)",
                   "; copy=bulk (with 128-bit loads where the loop could "
                   "not prefetch, ptxas spilled " +
                       std::to_string(spills(*artifacts)) + " bytes)");
      artifacts = std::move(retry);
    }
  }
  if (mayPreferModel && targetEntry &&
      (spills(*artifacts) > 0 || droppedPrefetch(*artifacts)))
    if (std::optional<Artifacts> model = modelInstead(*artifacts))
      return std::move(*model);
  // Exponentials through ex2.approx.ftz take one instruction instead of
  // four, but ptxas may spend the freed issue slots on more registers live:
  // keep ex2.approx where that fits more CTAs per SM. On the H200,
  // cross_entropy_fwd_bwd bf16 at 16384 took 70 registers with ftz and 60
  // without (one CTA of 512 threads per SM instead of two) and lost 27%;
  // softmax bf16 at 65536-262144 kept its registers and gained 10-12%
  // (BENCHMARKS.md, fourteenth run).
  // Only where registers, not the block size, bound the CTAs per SM: a
  // second compile of every kernel with exponentials doubled their
  // compile time. The retry reuses this compile's lowering to PTX, and
  // finds the unbounded ptxas runs done ahead where a hardware thread was
  // idle (CompileMemo).
  auto ctasPerSmByThreads = [](const Artifacts &a) {
    const KernelMetadata &k = a.kernels.front();
    return k.blockThreads <= 0
               ? int64_t(0)
               : std::min(kMaxThreadsPerSm / k.blockThreads, kMaxCtasPerSm);
  };
  auto ctasPerSm = [&](const Artifacts &a) {
    const KernelMetadata &k = a.kernels.front();
    return std::min(ctasPerSmByThreads(a),
                    ctasPerSmByRegisters(k.resources.registers,
                                         std::max<int64_t>(k.blockThreads, 1)));
  };
  bool exponentials = llvm::any_of(
      artifacts->kernels, [](const auto &k) { return k.exponentials; });
  if (exponentials && options.expFtz < 0 && artifacts->kernels.size() == 1 &&
      ctasPerSm(*artifacts) < ctasPerSmByThreads(*artifacts)) {
    CompileOptions exact = options;
    exact.expFtz = 0;
    // Kept only with more CTAs per SM: its searches need not try as few.
    FailureOr<Artifacts> retry = [&] {
      CompileMemo::FloorScope floor(CompileMemo::active(),
                                    ctasPerSm(*artifacts));
      return tryCompile(sourceMgr, bufferId, context, exact);
    }();
    if (succeeded(retry) && retry->kernels.size() == 1 &&
        spills(*retry) <= spills(*artifacts) &&
        ctasPerSm(*retry) > ctasPerSm(*artifacts)) {
      retry->kernels.front().configReason +=
          "; exp_ftz=0 (" + std::to_string(ctasPerSm(*retry)) +
          " CTAs per SM; with ex2.approx.ftz, " +
          std::to_string(artifacts->kernels.front().resources.registers) +
          " registers fit " + std::to_string(ctasPerSm(*artifacts)) + ")";
      noteKeptSpills(*retry);
      return retry;
    }
  }
  noteKeptSpills(*artifacts);
  return artifacts;
}

} // namespace quack

//===----------------------------------------------------------------------===//
// Embedding: self-contained compiles with structured diagnostics
//===----------------------------------------------------------------------===//

namespace quack {

llvm::StringRef severityName(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  case Severity::Remark:
    return "remark";
  }
  llvm_unreachable("unknown severity");
}

std::string Diagnostic::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!file.empty()) {
    os << file << ":";
    if (line)
      os << line << ":" << column << ":";
    os << " ";
  }
  os << severityName(severity) << ": " << message;
  return text;
}

static Severity toSeverity(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return Severity::Error;
  case DiagnosticSeverity::Warning:
    return Severity::Warning;
  case DiagnosticSeverity::Note:
    return Severity::Note;
  case DiagnosticSeverity::Remark:
    return Severity::Remark;
  }
  llvm_unreachable("unknown severity");
}

/// The record of one MLIR diagnostic, located at the first file position
/// found inside its location (fused and call-site locations nest them).
static Diagnostic toRecord(mlir::Diagnostic &diag) {
  Diagnostic record;
  record.severity = toSeverity(diag.getSeverity());
  record.message = diag.str();
  diag.getLocation()->walk([&](Location loc) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(loc)) {
      record.file = fileLoc.getFilename().str();
      record.line = fileLoc.getLine();
      record.column = fileLoc.getColumn();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return record;
}

FailureOr<Artifacts> compileSource(llvm::StringRef source,
                                   llvm::StringRef bufferName,
                                   const CompileOptions &options,
                                   const DiagnosticCallback &callback) {
  std::unique_ptr<MLIRContext> context = createContext();
  // Consume every diagnostic here, so that nothing reaches the default
  // handler, which would print to stderr.
  ScopedDiagnosticHandler handler(
      context.get(), [&](mlir::Diagnostic &diag) -> LogicalResult {
        if (!callback)
          return success();
        callback(toRecord(diag));
        for (mlir::Diagnostic &note : diag.getNotes())
          callback(toRecord(note));
        return success();
      });
  llvm::SourceMgr sourceMgr;
  unsigned bufferId = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  return compile(sourceMgr, bufferId, *context, options);
}

FailureOr<Artifacts> compileSource(llvm::StringRef source,
                                   llvm::StringRef bufferName,
                                   const CompileOptions &options,
                                   std::vector<Diagnostic> *diagnostics) {
  DiagnosticCallback callback;
  if (diagnostics)
    callback = [diagnostics](const Diagnostic &diag) {
      diagnostics->push_back(diag);
    };
  return compileSource(source, bufferName, options, callback);
}

std::string parseConfigOverrides(llvm::StringRef text,
                                 CompileOptions &options) {
  SmallVector<StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    // 0/1 flags.
    if (key == "tuned" || key == "prefetch" || key == "remat" ||
        key == "sink" || key == "early_sums" || key == "early_vectors" ||
        key == "exp_ftz" || key == "fma") {
      StringRef v = value.trim();
      if (v != "0" && v != "1")
        return "config: '" + key.str() + "' takes 0 or 1, got '" + v.str() +
               "'";
      if (key == "tuned")
        options.useTuned = v == "1";
      else if (key == "remat")
        options.remat = v == "1";
      else if (key == "sink")
        options.sink = v == "1";
      else if (key == "early_sums")
        options.earlySums = v == "1";
      else if (key == "early_vectors")
        options.earlyVectors = v == "1";
      else if (key == "exp_ftz")
        options.expFtz = v == "1";
      else if (key == "fma")
        options.fma = v == "1";
      else
        options.prefetch = v == "1";
      continue;
    }
    if (key == "sums") {
      StringRef v = value.trim();
      int64_t count = 0;
      if (v == "shared")
        options.sums = CompileOptions::kAllSums;
      else if (v == "registers")
        options.sums = 0;
      else if (!v.getAsInteger(10, count) && count >= 1 && count <= 64)
        options.sums = count;
      else
        return "config: 'sums' takes registers, shared, or a count K of "
               "sums over rows (the last K) whose partial sums go to "
               "shared memory, got '" +
               v.str() + "'";
      continue;
    }
    if (key == "copy") {
      StringRef v = value.trim();
      std::optional<mlir::quack::KernelConfig::Copy> path =
          mlir::quack::parseCopy(v);
      if (!path)
        return "config: 'copy' takes global (128-bit loads), bulk "
               "(cp.async.bulk into shared memory) or tensor "
               "(cp.async.bulk.tensor into shared memory), got '" +
               v.str() + "'";
      options.copy = static_cast<int64_t>(*path);
      continue;
    }
    int64_t number;
    if (value.trim().getAsInteger(10, number) || number <= 0)
      return "config: '" + item.str() + "' needs a positive integer value";
    if (key == "threads")
      options.threadsPerRow = number;
    else if (key == "rows")
      options.rowsPerCta = number;
    else if (key == "vector")
      options.vector = number;
    else if (key == "align")
      options.alignment = number;
    else if (key == "cluster")
      options.clusterSize = number;
    else if (key == "ctas")
      options.minCtasPerSm = number;
    else if (key == "stages")
      options.stages = number;
    else
      return "config: unknown knob '" + key.str() +
             "'; known: threads, rows, vector, align, cluster, ctas, tuned, prefetch, remat, sink, copy, stages, sums, early_sums, early_vectors, exp_ftz, fma";
  }
  return "";
}

} // namespace quack
