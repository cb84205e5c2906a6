//===- Compiler.h - compile descriptions to cubins ----------------*- C++
//-*-===//
//
// Part of the quack project.
//
// The embedding facade: one call takes a .qk description or an .mlir module
// to any stage (row-level IR ... cubin + metadata). quackc, the C API and the
// Python JIT path all use it.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_COMPILER_COMPILER_H
#define QUACK_COMPILER_COMPILER_H

#include "quack/Frontend/Frontend.h"
#include "quack/Pipelines/Pipelines.h"
#include "quack/Target/PTX.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <string>
#include <vector>

namespace quack {

/// The compiler's version, part of every cache key and metadata hash.
inline constexpr const char *kCompilerVersion = "0.1.0";
/// The metadata schema version (docs/abi.md).
inline constexpr int kMetadataSchema = 1;

/// What to compile and how.
struct CompileOptions {
  std::string arch = "sm_90";
  Stage emit = Stage::Cubin;
  Bindings bindings;
  /// Compile only this kernel of the input (required when there are several
  /// and the stage is llvm, ptx or cubin).
  std::string kernel;
  /// Config overrides (0: let config selection choose).
  int64_t alignment = 16;
  int64_t vector = 0;
  int64_t threadsPerRow = 0;
  int64_t rowsPerCta = 0;
  int64_t clusterSize = 0;
  int64_t minCtasPerSm = -1;
  /// Prefetch of the next row group in persistent kernels (-1: choose).
  int64_t prefetch = -1;
  /// Keep 16-bit rows packed across exchanges (-1: choose by occupancy on
  /// the cluster path).
  int64_t remat = -1;
  /// Finish and store each fragment of the row after the last exchange
  /// before the next (1; -1: choose by occupancy on the cluster path).
  int64_t sink = -1;
  /// Matrix inputs through 128-bit loads (0) or bulk copies into shared
  /// memory (1); -1: choose.
  int64_t copy = -1;
  /// Buffers of a prefetching loop with bulk copies (0: choose).
  int64_t stages = 0;
  /// Partial sums over rows in registers (0), or in shared memory for the
  /// last K sums over rows (K; kAllSums: every one); -1: the table entry's
  /// K where its loop runs, else registers unless they spill.
  int64_t sums = -1;
  static constexpr int64_t kAllSums = 1 << 20;
  /// Accumulate sums over rows before the reductions they do not depend on
  /// (1) or where the description puts them (0); -1: where the description
  /// puts them unless the kernel spills.
  int64_t earlySums = -1;
  /// Issue row-vector loads (weights, biases) right after the row's loads
  /// (1) instead of at their first use (0 or -1).
  int64_t earlyVectors = -1;
  /// Exponentials through ex2.approx.ftz (1) or ex2.approx (0); -1: ftz
  /// unless the kernel fits more CTAs per SM without.
  int64_t expFtz = -1;
  /// Let the NVPTX backend fuse multiplies and adds into fma, and ptxas
  /// contract what is left (1), or round every multiply and add on its own
  /// (0, `mul.rn`/`add.rn`); -1: the default, 0.
  int64_t fma = -1;
  /// Whether the architecture's table of measured configs
  /// (kernels/tuning/) may choose threads per row and rows per CTA.
  bool useTuned = true;
  /// A tuning target of the architecture (e.g. "h100") whose table's
  /// entries take precedence over the architecture's; empty: none.
  std::string tuning;
  /// ptxas to use; empty: search.
  std::string ptxas;
};

/// Spill bytes up to which a prefetching loop with shared sums over rows
/// (a table entry's `sums=K` loop, as measured) is kept, and which
/// --fail-on-spills lets pass (see KernelMetadata::measuredSpills).
inline constexpr int64_t kTableSpillBytes = 32;

/// Launch metadata of one compiled kernel (docs/abi.md, schema 1).
struct KernelMetadata {
  std::string kernel;
  std::string arch;
  Bindings bindings;
  /// The quack.abi array, as JSON text.
  std::string paramsJson;
  int64_t rowLength = 0;
  int64_t requiredAlignment = 1;
  int64_t rowsPerCta = 1;
  int64_t blockThreads = 1;
  int64_t staticShared = 0;
  /// How matrix inputs reach the threads: "global", "bulk" or "tensor".
  std::string copy = "global";
  /// Whether the kernel's row loop copies the next row groups ahead, and
  /// into how many shared-memory buffers (0 where it copies none ahead).
  bool prefetch = false;
  int64_t stages = 0;
  /// Kernels with sums over rows: how many of them (the last ones) keep
  /// their partial sums in shared memory (finishOutputs has one per sum).
  int64_t sharedSums = 0;
  /// Tensor copies: one recipe per tensor map the runtime encodes at each
  /// launch and appends to the parameters (JSON array text; empty: none).
  std::string tensorMapsJson;
  /// Shared memory the kernel declares at launch (bulk-copy buffers).
  int64_t dynamicShared = 0;
  int64_t vector = 1;
  int64_t threadsPerRow = 1;
  int64_t vectorsPerThread = 1;
  /// CTAs of a cluster that split each row.
  int64_t clusterSize = 1;
  int64_t maxRowLength = 0;
  /// Kernels with sums over rows run on a persistent grid and finish with a
  /// second entry point that sums the workspace (empty symbol: none).
  std::string finishSymbol;
  /// The grid loops over row groups (sums over rows, or prefetch).
  bool persistent = false;
  int64_t finishThreads = 0;
  int64_t finishColumns = 0;
  /// The row-vector outputs the finishing kernel writes, in its order.
  std::vector<std::string> finishOutputs;
  std::string configReason;
  /// The table of measured configs chose the split (quack.config_tuned).
  bool tunedConfig = false;
  /// The file name of that table (kernels/tuning/), e.g. "sm_90.tsv".
  std::string tuningTable;
  /// quackc gave up the loop's prefetch to keep ptxas from spilling.
  bool prefetchDropped = false;
  /// The K of the table entry (`sums=K`) whose loop the kernel runs; 0
  /// where none.
  int64_t tableSums = 0;
  /// ptxas spills a few bytes (at most kTableSpillBytes) in a prefetching
  /// loop with shared sums, as the table's entries of such loops were
  /// measured: quackc keeps it, and --fail-on-spills lets it pass.
  bool measuredSpills = false;
  /// The kernel computes exponentials (math.exp, exp2 or tanh).
  bool exponentials = false;
  /// Metadata files (beside this one) of the same kernel compiled on
  /// smaller clusters, largest first, for the runtime to fall back to.
  std::vector<std::string> clusterFallbacks;
  ResourceReport resources;
  std::string hash;

  /// The metadata file's JSON text, naming `cubinFile` as its cubin.
  std::string toJSON(llvm::StringRef cubinFile) const;
};

/// Bindings as they appear in metadata and bundle indexes: integers as
/// numbers, everything else as strings.
llvm::json::Object bindingsToJSON(const Bindings &bindings);

/// What a compile produced.
struct Artifacts {
  /// Textual output for the stages quack ... ptx.
  std::string text;
  /// The cubin, for the cubin stage.
  std::string cubin;
  /// One entry per kernel that reached the gpu stage.
  std::vector<KernelMetadata> kernels;
  /// ptxas' verbose output.
  std::string ptxasLog;
  /// The PTX the cubin was assembled from.
  std::string ptx;
};

/// Compiles buffer `bufferId` of `sourceMgr`, a .qk description unless its
/// name ends in `.mlir`. Errors are reported through `context`'s diagnostic
/// engine (attach a SourceMgrDiagnosticHandler to print them with carets).
mlir::FailureOr<Artifacts> compile(llvm::SourceMgr &sourceMgr,
                                   unsigned bufferId,
                                   mlir::MLIRContext &context,
                                   const CompileOptions &options);

/// Makes a context with every dialect and translation quack needs.
std::unique_ptr<mlir::MLIRContext> createContext();

//===----------------------------------------------------------------------===//
// Embedding: self-contained compiles with structured diagnostics
//===----------------------------------------------------------------------===//

/// How serious a diagnostic is.
enum class Severity { Error, Warning, Note, Remark };

/// The lower-case name of `severity`: "error", "warning", "note", "remark".
llvm::StringRef severityName(Severity severity);

/// One diagnostic as a record rather than printed text. A note attached to
/// an error follows it as its own record.
struct Diagnostic {
  Severity severity = Severity::Error;
  /// The buffer name given to compileSource; empty when the diagnostic is
  /// about the whole input (flags, tools) and has no source position.
  std::string file;
  /// 1-based; 0 when unknown.
  unsigned line = 0;
  unsigned column = 0;
  std::string message;

  /// `file:line:col: error: message`, the way quackc prints it (without the
  /// source line and caret).
  std::string str() const;
};

/// Receives each diagnostic as it is emitted.
using DiagnosticCallback = std::function<void(const Diagnostic &)>;

/// Compiles `source`, a .qk description unless `bufferName` ends in `.mlir`,
/// in a context of its own. Nothing is printed: every diagnostic goes to
/// `callback` (when set). Calls with different arguments may run on several
/// threads at once; the compiler keeps no global mutable state.
mlir::FailureOr<Artifacts> compileSource(llvm::StringRef source,
                                         llvm::StringRef bufferName,
                                         const CompileOptions &options,
                                         const DiagnosticCallback &callback);

/// Like the above, appending the diagnostics to `diagnostics` (when not
/// null).
mlir::FailureOr<Artifacts>
compileSource(llvm::StringRef source, llvm::StringRef bufferName,
              const CompileOptions &options,
              std::vector<Diagnostic> *diagnostics = nullptr);

/// Parses quackc's `--config=` syntax (`threads=<n>,rows=<n>,vector=<n>,
/// align=<n>`, any subset) into `options`. Returns an error message, or ""
/// on success.
std::string parseConfigOverrides(llvm::StringRef text, CompileOptions &options);

} // namespace quack

#endif // QUACK_COMPILER_COMPILER_H
