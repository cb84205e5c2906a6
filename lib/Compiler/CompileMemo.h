//===- CompileMemo.h - what the retries of one compile share ---*- C++ -*-===//
//
// Part of the quack project.
//
// A compile of one kernel may compile it again several times (the searches
// and retries of lib/Compiler/Compiler.cpp). Two of those repeats redo work
// already done: the retry with exact exponentials (exp_ftz=0) lowers the
// kernel to the same PTX as the first compile except for the exponential
// instruction, and may assemble a PTX text that was assembled before. The
// memo of the outermost compile on a thread keeps both, and runs ptxas on
// the exact-exponential PTX ahead, on a hardware thread no compile uses.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LIB_COMPILER_COMPILEMEMO_H
#define QUACK_LIB_COMPILER_COMPILEMEMO_H

#include "quack/Compiler/Compiler.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace quack {

/// A kernel lowered to PTX, before ptxas: what the cubin stage needs.
struct LoweredKernel {
  /// Metadata of each kernel, with the facts config selection gave (not yet
  /// ptxas' resources).
  std::vector<KernelMetadata> kernels;
  /// Each kernel's quack.config, from which its hash is computed.
  std::vector<mlir::DictionaryAttr> configs;
  /// The quack.config of the last kernel (the CTAs-per-SM search's).
  mlir::DictionaryAttr lastConfig;
  /// Whether any kernel's loop prefetches the next row group.
  bool prefetches = false;
  /// The PTX, its exponentials through ex2.approx.ftz where `ftz`.
  std::string ptx;
  bool ftz = true;
};

/// `ptx` with every f32 exponential through ex2.approx.ftz (`ftz`) or
/// ex2.approx. The two lowerings differ in that instruction alone
/// (test/quackc/exp-ftz.test checks this on the catalogue's kernels).
std::string withExpFtz(llvm::StringRef ptx, bool ftz);

/// Whether `ptx` has an exponential whose flush-to-zero can be chosen.
bool hasFtzChoice(llvm::StringRef ptx);

class CompileMemo {
public:
  /// The memo of the compile running on this thread, or nullptr.
  static CompileMemo *active();

  /// Installs a memo for a compile of `bufferId` of `sourceMgr` in
  /// `context`, unless one for the same input is active on this thread (the
  /// compile is a retry of that one); counts the compiles running in this
  /// process. A compile of another input (say, from a diagnostic callback)
  /// gets a memo of its own, and the previous one is active again after.
  class Scope {
  public:
    Scope(const llvm::SourceMgr &sourceMgr, unsigned bufferId,
          const mlir::MLIRContext &context);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    std::unique_ptr<CompileMemo> owned;
    CompileMemo *previous = nullptr;
  };

  /// The lowering stored for options that lower alike (all but expFtz),
  /// with its PTX for `options`' exponentials; none if there is none.
  std::optional<LoweredKernel> findLowered(const CompileOptions &options) const;
  void storeLowered(const CompileOptions &options, const LoweredKernel &lowered);

  /// ptxas on `ptx`, or the result of an earlier run on the same text in
  /// this compile (waiting for it where it runs ahead).
  llvm::Expected<Cubin> assemble(const std::string &ptx, llvm::StringRef arch,
                                 llvm::StringRef ptxas);

  /// The CTAs-per-SM search's register caps that made ptxas spill, for a
  /// compile that lowers like `options` (all but expFtz alike) and took
  /// `registers` unbounded: the caps another such compile found spilling
  /// with at most as many registers unbounded. The two lowerings differ in
  /// the exponential's instruction alone; one that needs more registers
  /// unbounded is taken not to fit a cap where the other spilled.
  std::set<int64_t> capsKnownToSpill(const CompileOptions &options,
                                     int64_t registers) const;
  /// Records that ptxas spilled at `caps` for a compile that lowers like
  /// `options` and took `registers` unbounded.
  void storeSpilledCaps(const CompileOptions &options, int64_t registers,
                        const std::set<int64_t> &caps);

  /// The CTAs per SM that the retry now running must exceed to be kept (0:
  /// none): the CTAs-per-SM searches of its compiles, its own retries
  /// included, need not try fewer.
  int64_t searchFloor() const { return floor; }

  /// Raises the search floor of `memo` (if any) to `ctas` while it lives,
  /// and gives back the floor before when it ends, so that a retry nested
  /// in another leaves the outer one's floor as it found it.
  class FloorScope {
  public:
    FloorScope(CompileMemo *memo, int64_t ctas) : memo(memo) {
      if (!memo)
        return;
      previous = memo->floor;
      memo->floor = std::max(previous, ctas);
    }
    ~FloorScope() {
      if (memo)
        memo->floor = previous;
    }
    FloorScope(const FloorScope &) = delete;
    FloorScope &operator=(const FloorScope &) = delete;

  private:
    CompileMemo *memo;
    int64_t previous = 0;
  };

  /// Starts ptxas on `ptx` in the background, for assemble() to pick up,
  /// where fewer compiles run in this process than it has hardware
  /// threads. Returns whether it started.
  bool assembleAhead(const std::string &ptx, llvm::StringRef arch,
                     llvm::StringRef ptxas);

  ~CompileMemo();

private:
  CompileMemo(const llvm::SourceMgr &sourceMgr, unsigned bufferId,
              const mlir::MLIRContext &context)
      : sourceMgr(&sourceMgr), bufferId(bufferId), context(&context) {}

  /// The input this memo's lowerings are of.
  const llvm::SourceMgr *sourceMgr;
  unsigned bufferId;
  const mlir::MLIRContext *context;

  struct Assembled {
    std::optional<Cubin> cubin;
    std::string error;
  };
  static Assembled run(const std::string &ptx, const std::string &arch,
                       const std::string &ptxas);
  /// run() on a thread of its own, counted among the running compiles.
  static Assembled runAhead(const std::string &ptx, const std::string &arch,
                            const std::string &ptxas);

  std::map<std::string, LoweredKernel> lowered;
  /// Per lowering key: (registers unbounded, caps that spilled) of each
  /// search that ran.
  std::map<std::string, std::vector<std::pair<int64_t, std::set<int64_t>>>>
      spilledCaps;
  int64_t floor = 0;
  /// Keyed by arch and PTX text.
  std::map<std::string, std::shared_future<Assembled>> assembled;
  /// The keys of `assembled` whose runs were started ahead.
  std::set<std::string> ahead;
};

} // namespace quack

#endif // QUACK_LIB_COMPILER_COMPILEMEMO_H
