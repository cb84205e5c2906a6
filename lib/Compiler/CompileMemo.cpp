//===- CompileMemo.cpp - what the retries of one compile share ------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "CompileMemo.h"

#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>

using namespace quack;

static constexpr llvm::StringLiteral kFtz = "ex2.approx.ftz.f32";
static constexpr llvm::StringLiteral kExact = "ex2.approx.f32";

std::string quack::withExpFtz(llvm::StringRef ptx, bool ftz) {
  llvm::StringRef from = ftz ? kExact : kFtz, to = ftz ? kFtz : kExact;
  std::string out;
  out.reserve(ptx.size() + 8);
  while (true) {
    size_t at = ptx.find(from);
    if (at == llvm::StringRef::npos)
      break;
    out += ptx.take_front(at);
    out += to;
    ptx = ptx.drop_front(at + from.size());
  }
  out += ptx;
  return out;
}

bool quack::hasFtzChoice(llvm::StringRef ptx) {
  return ptx.contains(kFtz) || ptx.contains(kExact);
}

/// Every option that the lowering to PTX reads, but expFtz (the emitted
/// instruction alone) and the ptxas path. A new CompileOptions field that
/// changes the PTX must be added here.
static std::string loweringKey(const CompileOptions &o) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << o.arch << '|' << static_cast<int>(o.emit) << '|' << o.kernel << '|'
     << o.alignment << '|' << o.vector << '|' << o.threadsPerRow << '|'
     << o.rowsPerCta << '|' << o.clusterSize << '|' << o.minCtasPerSm << '|'
     << o.prefetch << '|' << o.remat << '|' << o.sink << '|' << o.copy << '|'
     << o.stages << '|' << o.sums << '|' << o.earlySums << '|'
     << o.earlyVectors << '|' << o.fma << '|'
     << o.useTuned << '|' << o.tuning;
  for (const auto &[name, value] : o.bindings)
    os << '|' << name << '=' << value;
  return key;
}

static thread_local CompileMemo *activeMemo = nullptr;
/// Outermost compiles and ptxas runs started ahead, running in this
/// process (all threads).
static std::atomic<size_t> running{0};

CompileMemo *CompileMemo::active() { return activeMemo; }

CompileMemo::Scope::Scope(const llvm::SourceMgr &sourceMgr, unsigned bufferId,
                          const mlir::MLIRContext &context) {
  if (activeMemo && activeMemo->sourceMgr == &sourceMgr &&
      activeMemo->bufferId == bufferId && activeMemo->context == &context)
    return;
  previous = activeMemo;
  owned.reset(new CompileMemo(sourceMgr, bufferId, context));
  activeMemo = owned.get();
  ++running;
}

CompileMemo::Scope::~Scope() {
  if (!owned)
    return;
  owned.reset(); // waits for ptxas runs started ahead
  activeMemo = previous;
  --running;
}

CompileMemo::~CompileMemo() {
  for (auto &[key, result] : assembled)
    result.wait();
}

std::optional<LoweredKernel>
CompileMemo::findLowered(const CompileOptions &options) const {
  auto it = lowered.find(loweringKey(options));
  if (it == lowered.end())
    return std::nullopt;
  LoweredKernel result = it->second;
  bool ftz = options.expFtz != 0;
  if (result.ftz != ftz) {
    result.ptx = withExpFtz(result.ptx, ftz);
    result.ftz = ftz;
  }
  return result;
}

void CompileMemo::storeLowered(const CompileOptions &options,
                               const LoweredKernel &result) {
  lowered.emplace(loweringKey(options), result);
}

std::set<int64_t> CompileMemo::capsKnownToSpill(const CompileOptions &options,
                                                int64_t registers) const {
  std::set<int64_t> caps;
  auto it = spilledCaps.find(loweringKey(options));
  if (it == spilledCaps.end())
    return caps;
  for (const auto &[unbounded, spilled] : it->second)
    if (unbounded <= registers)
      caps.insert(spilled.begin(), spilled.end());
  return caps;
}

void CompileMemo::storeSpilledCaps(const CompileOptions &options,
                                   int64_t registers,
                                   const std::set<int64_t> &caps) {
  if (!caps.empty())
    spilledCaps[loweringKey(options)].emplace_back(registers, caps);
}

CompileMemo::Assembled CompileMemo::run(const std::string &ptx,
                                        const std::string &arch,
                                        const std::string &ptxas) {
  Assembled result;
  llvm::Expected<Cubin> cubin = assemblePTX(ptx, arch, ptxas);
  if (cubin)
    result.cubin = std::move(*cubin);
  else
    result.error = llvm::toString(cubin.takeError());
  return result;
}

CompileMemo::Assembled CompileMemo::runAhead(const std::string &ptx,
                                             const std::string &arch,
                                             const std::string &ptxas) {
  Assembled result = run(ptx, arch, ptxas);
  --running;
  return result;
}

llvm::Expected<Cubin> CompileMemo::assemble(const std::string &ptx,
                                            llvm::StringRef arch,
                                            llvm::StringRef ptxas) {
  std::string key = arch.str() + '\n' + ptx;
  auto it = assembled.find(key);
  // A run started ahead that failed (a timeout under the extra load, say)
  // is run again here, as it would have been without it.
  if (it != assembled.end() && ahead.count(key) && !it->second.get().cubin) {
    assembled.erase(it);
    ahead.erase(key);
    it = assembled.end();
  }
  if (it == assembled.end()) {
    std::promise<Assembled> done;
    done.set_value(run(ptx, arch.str(), ptxas.str()));
    it = assembled.emplace(std::move(key), done.get_future().share()).first;
  }
  const Assembled &result = it->second.get();
  if (!result.cubin)
    return llvm::createStringError(result.error);
  return *result.cubin;
}

bool CompileMemo::assembleAhead(const std::string &ptx, llvm::StringRef arch,
                                llvm::StringRef ptxas) {
  size_t threads = llvm::hardware_concurrency().compute_thread_count();
  std::string key = arch.str() + '\n' + ptx;
  if (assembled.count(key))
    return false;
  // Take a place among the running compiles and runs ahead, if one is free.
  size_t now = running.load();
  do {
    if (now >= threads)
      return false;
  } while (!running.compare_exchange_weak(now, now + 1));
  ahead.insert(key);
  assembled.emplace(std::move(key),
                    std::async(std::launch::async, runAhead, ptx, arch.str(),
                               ptxas.str())
                        .share());
  return true;
}
