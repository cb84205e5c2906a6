//===- quackc.cpp - the quack compiler driver
//-------------------------------===//
//
// Part of the quack project.
//
// quackc INPUT [-o OUT] [--emit=STAGE] [--arch=sm_90] [-D NAME=VALUE ...]
// maps flags onto CompileOptions and writes what the compiler produced. With
// --bundle=DIR it compiles every kernel of a description for the cartesian
// product of comma-separated -D values and every alignment class, into a
// directory with an index.json.
//
//===----------------------------------------------------------------------===//

#include "PrintLayout.h"
#include "quack/Compiler/Compiler.h"
#include "quack/Dialect/Quack/Transforms/TunedConfigs.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

using namespace llvm;

namespace {

cl::OptionCategory category("quackc options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .qk or .mlir>"),
                               cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("output file"),
                                cl::value_desc("file"), cl::cat(category));
// cl::desc keeps a StringRef, so the text must outlive the option.
const std::string &stageHelp() {
  static const std::string help = [] {
    std::string text = "stop after this stage:";
    for (StringRef s : quack::stageNames())
      text += " " + s.str();
    return text + " (default: cubin, with a .json metadata file beside it)";
  }();
  return help;
}
cl::opt<std::string> emit("emit", cl::desc(stageHelp()),
                          cl::value_desc("stage"), cl::init("cubin"),
                          cl::cat(category));
cl::opt<std::string> arch("arch", cl::desc("target architecture"),
                          cl::init("sm_90"), cl::cat(category));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("bind a compile-time parameter "
                                       "(-D N=4096 -D T=bf16)"),
                              cl::value_desc("NAME=VALUE"), cl::cat(category));
cl::opt<std::string> kernelName("kernel", cl::desc("compile only this kernel"),
                                cl::cat(category));
cl::opt<std::string> configFlag(
    "config",
    cl::desc("force config knobs: threads=<n>,rows=<n>,vector=<n>,align=<n>,"
             "cluster=<n>,ctas=<n>,prefetch=0|1,remat=0|1,sink=0|1,"
             "copy=global|bulk|tensor,stages=<n>,sums=registers|shared,"
             "early_sums=0|1,early_vectors=0|1,exp_ftz=0|1,fma=0|1; tuned=0 "
             "ignores the table "
             "of measured configs"),
    cl::value_desc("k=v,..."), cl::cat(category));
cl::opt<std::string> tuningFlag(
    "tuning",
    cl::desc("take configs from the table measured on this GPU model of the "
             "architecture (sm_90: h100) before the architecture's own; "
             "with --bundle, write only the variants whose config that "
             "table chose, in a bundle the runtime uses on such devices"),
    cl::value_desc("target"), cl::cat(category));
cl::opt<bool> printConfig("print-config",
                          cl::desc("print each kernel's config and why"),
                          cl::cat(category));
cl::opt<bool> report("report",
                     cl::desc("print ptxas' resource report to stderr"),
                     cl::cat(category));
const std::string failOnSpillsHelp =
    "make register spills (any spill bytes in ptxas' report) an error, "
    "except at most " +
    std::to_string(quack::kTableSpillBytes) +
    " bytes in a prefetching loop with shared sums (as the table's entries "
    "of such loops were measured)";
cl::opt<bool> failOnSpills("fail-on-spills", cl::desc(failOnSpillsHelp),
                           cl::cat(category));
cl::opt<std::string> ptxasPath("ptxas", cl::desc("path to ptxas"),
                               cl::cat(category));
cl::opt<std::string> bundleDir(
    "bundle",
    cl::desc("compile every kernel for all combinations of comma-separated "
             "-D values and every alignment class into DIR"),
    cl::value_desc("DIR"), cl::cat(category));

cl::opt<std::string> printLayoutFlag(
    "print-layout",
    cl::desc("draw a layout and exit: '(4,8):(8,1)', 'Sw<3,3,3> o "
             "(8,64):(64,1)', 'tv:N=64,threads=8,vec=4,rows=2[,cluster=2]' or "
             "'tv:<layout>, tile = <layout>'; with -o FILE also writes an SVG"),
    cl::value_desc("layout"), cl::cat(category));

cl::list<int64_t> bundleAlignments(
    "alignments", cl::CommaSeparated,
    cl::desc("with --bundle: the alignment classes to compile, in bytes "
             "(default 16,8,4,2,1)"),
    cl::cat(category));

cl::opt<int> bundleJobs(
    "jobs",
    cl::desc("with --bundle: compile this many kernel variants at once "
             "(default 0: one per hardware thread)"),
    cl::init(0), cl::value_desc("n"), cl::cat(category));

cl::opt<int> clusterFallbacks(
    "cluster-fallbacks",
    cl::desc("with --bundle: for a kernel on a cluster of C CTAs, also "
             "compile it on clusters of C/2, C/4, ... (at most <n> sizes; "
             "-1: every size the compiler accepts), which the runtime falls "
             "back to where the device cannot co-schedule C CTAs"),
    cl::init(-1), cl::value_desc("n"), cl::cat(category));

int fail(const Twine &message) {
  WithColor::error(errs(), "quackc") << message << "\n";
  return 1;
}

/// Resolves bindings whose value names another binding (-D TW=T): one level,
/// so that a weight type can follow the activation type in a bundle.
void resolveReferences(quack::Bindings &bindings) {
  quack::Bindings resolved = bindings;
  for (auto &[name, value] : resolved) {
    auto it = bindings.find(value);
    if (it != bindings.end() && it->first != name)
      value = it->second;
  }
  bindings = std::move(resolved);
}

/// Splits -D flags into NAME -> list of values.
std::string parseDefines(std::map<std::string, std::vector<std::string>> &out,
                         bool allowLists) {
  for (StringRef def : defines) {
    auto [name, value] = def.split('=');
    if (name.empty() || !def.contains('=') || value.empty())
      return "-D" + def.str() + ": expected -D NAME=VALUE";
    if (out.count(name.str()))
      return "-D " + name.str() + " is given twice";
    SmallVector<StringRef> values;
    value.split(values, ',', -1, /*KeepEmpty=*/false);
    if (values.size() != 1 && !allowLists)
      return "-D " + name.str() + "=" + value.str() +
             ": lists of values need --bundle";
    for (StringRef v : values)
      out[name.str()].push_back(v.trim().str());
  }
  return "";
}

bool writeFile(StringRef path, StringRef data, bool binary,
               raw_ostream &err = errs()) {
  std::error_code ec;
  raw_fd_ostream os(path, ec, binary ? sys::fs::OF_None : sys::fs::OF_Text);
  if (ec) {
    WithColor::error(err, "quackc")
        << "cannot write '" << path << "': " << ec.message() << "\n";
    return false;
  }
  os << data;
  return true;
}

/// With --fail-on-spills, an error naming the kernel that spills.
bool spillsAreFatal(const quack::KernelMetadata &md, StringRef what,
                    raw_ostream &err = errs()) {
  const auto &r = md.resources;
  if (!failOnSpills || r.spillStoreBytes + r.spillLoadBytes == 0 ||
      md.measuredSpills)
    return false;
  WithColor::error(err, "quackc")
      << what << ": " << md.kernel << " spills " << r.spillStoreBytes
      << " bytes of stores and " << r.spillLoadBytes
      << " bytes of loads (--fail-on-spills)\n";
  return true;
}

/// The JSON-ish metadata file path beside a cubin.
std::string metadataPathFor(StringRef cubinPath) {
  SmallString<256> path(cubinPath);
  sys::path::replace_extension(path, "json");
  return std::string(path);
}

void printReport(const quack::KernelMetadata &md, raw_ostream &os) {
  const auto &r = md.resources;
  os << md.kernel << ": " << r.registers << " registers, " << r.sharedBytes
     << " B smem, " << r.stackBytes << " B stack, "
     << r.spillStoreBytes + r.spillLoadBytes << " B spills\n";
}

int compileOne(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
               const quack::CompileOptions &options) {
  mlir::FailureOr<quack::Artifacts> artifacts =
      quack::compile(sourceMgr, 1, context, options);
  if (failed(artifacts))
    return 1;
  if (printConfig) {
    for (const quack::KernelMetadata &md : artifacts->kernels)
      outs() << md.kernel << ": threads_per_row=" << md.threadsPerRow
             << " rows_per_cta=" << md.rowsPerCta << " vector=" << md.vector
             << " vectors_per_thread=" << md.vectorsPerThread
             << " cluster=" << md.clusterSize << " block=" << md.blockThreads << "\n  why: " << md.configReason
             << "\n";
    if (outputFile.empty())
      return 0;
  }
  if (options.emit != quack::Stage::Cubin) {
    if (outputFile.empty() || outputFile == "-") {
      outs() << artifacts->text;
      return 0;
    }
    return writeFile(outputFile, artifacts->text, false) ? 0 : 1;
  }
  std::string out = outputFile;
  if (out.empty()) {
    SmallString<128> stem(sys::path::stem(inputFile));
    out = (stem + ".cubin").str();
  }
  if (out == "-")
    return fail("a cubin cannot be written to stdout; use -o <file>");
  if (!writeFile(out, artifacts->cubin, true))
    return 1;
  for (const quack::KernelMetadata &md : artifacts->kernels)
    if (spillsAreFatal(md, inputFile))
      return 1;
  for (const quack::KernelMetadata &md : artifacts->kernels) {
    std::string json = md.toJSON(sys::path::filename(out));
    if (!writeFile(metadataPathFor(out), json, false))
      return 1;
  }
  if (report) {
    for (const quack::KernelMetadata &md : artifacts->kernels)
      printReport(md, errs());
    if (artifacts->kernels.empty())
      errs() << artifacts->ptxasLog;
  }
  return 0;
}

/// Compiles the kernel of `options` (whose config chose a cluster of
/// `md.clusterSize` CTAs) on halved clusters, down to the first size the
/// compiler refuses or --cluster-fallbacks sizes, writes each as
/// `<name>__c<C>` beside the variant and lists them in `md` (largest first)
/// for the runtime to fall back to. A fallback may spill: it runs only where
/// the variant itself cannot. Returns false after reporting a write error.
bool writeClusterFallbacks(llvm::SourceMgr &sourceMgr,
                           mlir::MLIRContext &context,
                           const quack::CompileOptions &options,
                           const std::string &name, quack::KernelMetadata &md,
                           raw_ostream &out, raw_ostream &err) {
  int budget = clusterFallbacks;
  for (int64_t cluster = md.clusterSize / 2; cluster >= 1 && budget != 0;
       cluster /= 2, --budget) {
    quack::CompileOptions smaller = options;
    smaller.clusterSize = cluster;
    smaller.alignment = md.requiredAlignment;
    mlir::FailureOr<quack::Artifacts> artifacts = mlir::failure();
    {
      mlir::ScopedDiagnosticHandler capture(
          &context, [](mlir::Diagnostic &) { return mlir::success(); });
      artifacts = quack::compile(sourceMgr, 1, context, smaller);
    }
    if (succeeded(artifacts) &&
        artifacts->kernels.front().requiredAlignment != md.requiredAlignment)
      artifacts = mlir::failure();
    // The chain ends at the first size the compiler refuses (quietly: every
    // chain ends so).
    if (failed(artifacts))
      break;
    const quack::KernelMetadata &fb = artifacts->kernels.front();
    std::string fbName = name + "__c" + std::to_string(fb.clusterSize);
    SmallString<256> cubinPath(bundleDir);
    sys::path::append(cubinPath, fbName + ".cubin");
    if (!writeFile(cubinPath, artifacts->cubin, true, err) ||
        !writeFile(metadataPathFor(cubinPath), fb.toJSON(fbName + ".cubin"),
                   false, err))
      return false;
    md.clusterFallbacks.push_back(fbName + ".json");
    out << cubinPath << "  (fallback: " << fb.resources.registers
        << " regs, "
        << fb.resources.spillStoreBytes + fb.resources.spillLoadBytes
        << " B spills, block " << fb.blockThreads << ")\n";
  }
  return true;
}

/// Diagnostics with no source position are about the invocation: `context`
/// reports them to `os` as the driver's own (`quackc: error: ...`). Register
/// after the SourceMgr handler: handlers run newest first.
void reportUnlocatedAsDriver(mlir::MLIRContext &context, raw_ostream &os) {
  context.getDiagEngine().registerHandler(
      [&os](mlir::Diagnostic &diag) -> mlir::LogicalResult {
        if (!isa<mlir::UnknownLoc>(diag.getLocation()))
          return mlir::failure();
        auto &stream = diag.getSeverity() == mlir::DiagnosticSeverity::Error
                           ? WithColor::error(os, "quackc")
                           : WithColor::note(os, "quackc");
        stream << diag.str() << "\n";
        return mlir::success();
      });
}

/// One combination of a kernel's parameter values in a bundle.
struct BundleJob {
  quack::CompileOptions options;
  /// The variant's name without its alignment class.
  std::string tag;
};

/// What one job wrote, kept until the jobs before it have been printed.
struct BundleOutput {
  bool ok = true;
  std::string out, err;
  json::Array index;
  int produced = 0;
};

/// A compiler for bundle jobs on one thread: its own context and copy of
/// the description, with the driver's diagnostic handlers writing into
/// `diagnostics` instead of stderr.
class BundleWorker {
public:
  BundleWorker(const MemoryBuffer &source, bool threaded)
      : context(quack::createContext()), os(diagnostics) {
    if (threaded)
      context->disableMultithreading();
    sourceMgr.AddNewSourceBuffer(
        MemoryBuffer::getMemBufferCopy(source.getBuffer(),
                                       source.getBufferIdentifier()),
        SMLoc());
    handler.emplace(sourceMgr, context.get(), os);
    reportUnlocatedAsDriver(*context, os);
  }

  /// Compiles every alignment class of `job` (and its cluster fallbacks)
  /// into the bundle directory.
  BundleOutput run(const BundleJob &job);

private:
  std::unique_ptr<mlir::MLIRContext> context;
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  raw_string_ostream os;
  std::optional<mlir::SourceMgrDiagnosticHandler> handler;
};

/// Whether the table of the tuning target of `options` chose the config of
/// `md` (a target's bundle holds those variants alone).
bool tunedByTarget(const quack::KernelMetadata &md,
                   const quack::CompileOptions &options) {
  const mlir::quack::TuningTarget *target =
      mlir::quack::findTuningTarget(options.arch, options.tuning);
  return target && md.tunedConfig && md.tuningTable == target->table;
}

/// Whether the table of the tuning target of `options` has an entry for
/// the kernel of `job` at its N, whatever its element size: the jobs of a
/// target's bundle without one are not compiled.
bool targetHasEntry(const BundleJob &job) {
  const quack::CompileOptions &options = job.options;
  const mlir::quack::TuningTarget *target =
      mlir::quack::findTuningTarget(options.arch, options.tuning);
  auto n = options.bindings.find("N");
  int64_t rowLength = 0;
  if (!target || n == options.bindings.end() ||
      StringRef(n->second).getAsInteger(10, rowLength))
    return false;
  for (int64_t bytes : {1, 2, 4, 8})
    if (std::optional<mlir::quack::TunedConfig> entry =
            mlir::quack::lookupTunedConfig(options.arch, options.kernel,
                                           bytes, rowLength, options.tuning))
      if (entry->table == target->table)
        return true;
  return false;
}

BundleOutput BundleWorker::run(const BundleJob &job) {
  BundleOutput result;
  raw_string_ostream out(result.out);
  quack::CompileOptions options = job.options;
  std::set<int64_t> alignments;
  bool skippedUntuned = false;
  static constexpr int64_t kAllClasses[] = {16, 8, 4, 2, 1};
  ArrayRef<int64_t> aligns = bundleAlignments.empty()
                                 ? ArrayRef<int64_t>(kAllClasses)
                                 : ArrayRef<int64_t>(bundleAlignments);
  auto finish = [&](bool ok) {
    result.ok = ok;
    result.err = diagnostics;
    diagnostics.clear();
    return std::move(result);
  };
  for (int64_t align : aligns) {
    options.alignment = align;
    // A narrower alignment class may not fit the CTA-level path (more
    // vectors per thread than it holds): skip it with a note, since the
    // wider classes serve every well-aligned tensor.
    std::string firstError;
    mlir::FailureOr<quack::Artifacts> artifacts = mlir::failure();
    {
      std::optional<mlir::ScopedDiagnosticHandler> capture;
      if (align != aligns.front())
        capture.emplace(context.get(), [&](mlir::Diagnostic &diag) {
          if (firstError.empty())
            firstError = diag.str();
          return mlir::success();
        });
      artifacts = quack::compile(sourceMgr, 1, *context, options);
    }
    if (failed(artifacts)) {
      if (align == aligns.front())
        return finish(false);
      WithColor::note(os, "quackc") << "no " << align << "-byte variant of "
                                    << job.tag << ": " << firstError << "\n";
      continue;
    }
    quack::KernelMetadata &md = artifacts->kernels.front();
    if (!options.tuning.empty() && !tunedByTarget(md, options)) {
      // The architecture's bundle serves this variant (once per job: a
      // table entry for another element size skips every alignment).
      if (!skippedUntuned)
        WithColor::note(os, "quackc")
            << "skipped " << job.tag << " from " << md.requiredAlignment
            << "-byte alignment: the --tuning=" << options.tuning
            << " table does not choose its config\n";
      skippedUntuned = true;
      continue;
    }
    if (spillsAreFatal(md, job.tag, os))
      return finish(false);
    if (!alignments.insert(md.requiredAlignment).second)
      continue;
    std::string name = job.tag + "__a" + std::to_string(md.requiredAlignment);
    if (!writeClusterFallbacks(sourceMgr, *context, options, name, md, out,
                               os))
      return finish(false);
    SmallString<256> cubinPath(bundleDir);
    sys::path::append(cubinPath, name + ".cubin");
    if (!writeFile(cubinPath, artifacts->cubin, true, os) ||
        !writeFile(metadataPathFor(cubinPath), md.toJSON(name + ".cubin"),
                   false, os))
      return finish(false);
    result.index.push_back(
        json::Object{{"kernel", options.kernel},
                     {"bindings", quack::bindingsToJSON(options.bindings)},
                     {"alignment", md.requiredAlignment},
                     {"metadata", name + ".json"}});
    out << cubinPath << "  (" << md.resources.registers << " regs, "
        << md.resources.spillStoreBytes + md.resources.spillLoadBytes
        << " B spills, block " << md.blockThreads << ", vector " << md.vector
        << ")\n";
    ++result.produced;
  }
  return finish(true);
}

/// Runs `jobs` on `threads` workers and prints what each wrote in job
/// order, as soon as the jobs before it are done. Stops at the first job
/// that fails (the jobs after it are not printed). Returns false then.
bool runBundleJobs(const std::vector<BundleJob> &jobs,
                   const MemoryBuffer &source, unsigned threads,
                   json::Array &index, int &produced) {
  std::vector<std::optional<BundleOutput>> outputs(jobs.size());
  std::mutex mutex;
  std::condition_variable done;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    BundleWorker worker(source, threads > 1);
    // `stop` is read before a job is taken, never after: every job taken
    // is run, so that the printer, waiting for each job up to a failed one
    // in order, never waits for one that was skipped.
    while (!stop) {
      size_t i = next++;
      if (i >= jobs.size())
        break;
      BundleOutput output = worker.run(jobs[i]);
      if (!output.ok)
        stop = true;
      std::lock_guard<std::mutex> lock(mutex);
      outputs[i] = std::move(output);
      done.notify_all();
    }
  };
  // The workers compile; this thread prints.
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(work);
  // Every job before a failed one was started, so each of them finishes.
  bool ok = true;
  for (size_t i = 0; i < jobs.size() && ok; ++i) {
    BundleOutput output;
    {
      std::unique_lock<std::mutex> lock(mutex);
      done.wait(lock, [&] { return outputs[i].has_value(); });
      output = std::move(*outputs[i]);
    }
    outs() << output.out;
    outs().flush();
    errs() << output.err;
    ok = output.ok;
    for (json::Value &entry : output.index)
      index.push_back(std::move(entry));
    produced += output.produced;
  }
  for (std::thread &thread : pool)
    thread.join();
  return ok;
}

/// A bundle's index.json. A tuning target's bundle names the target and
/// the devices it serves (those whose name contains `tuning_device`).
json::Object indexObject(const quack::CompileOptions &base,
                         json::Array index) {
  json::Object object{{"schema", 1},
                      {"arch", base.arch},
                      {"compiler", quack::kCompilerVersion}};
  if (const mlir::quack::TuningTarget *target =
          mlir::quack::findTuningTarget(base.arch, base.tuning)) {
    object["tuning"] = target->name.str();
    object["tuning_device"] = target->deviceName.str();
  }
  object["kernels"] = std::move(index);
  return object;
}

int compileBundle(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
                  quack::CompileOptions base,
                  const std::map<std::string, std::vector<std::string>> &defs) {
  if (StringRef(inputFile).ends_with(".mlir"))
    return fail("--bundle compiles .qk descriptions");
  if (base.emit != quack::Stage::Cubin)
    return fail("--bundle writes cubins; it cannot be combined with --emit");
  if (bundleJobs < 0)
    return fail("--jobs takes a positive count, or 0 for one per hardware "
                "thread; got " +
                Twine(bundleJobs));
  std::optional<quack::qk::File> file =
      quack::parseKernelFile(sourceMgr, 1, &context);
  if (!file)
    return 1;
  if (std::error_code ec = sys::fs::create_directories(bundleDir))
    return fail("cannot create '" + bundleDir + "': " + ec.message());

  std::vector<BundleJob> jobs;
  for (const quack::qk::Kernel &kernel : file->kernels) {
    if (!kernelName.empty() && kernel.name != kernelName)
      continue;
    // The kernel's own parameters, each with its list of values.
    std::vector<std::pair<std::string, std::vector<std::string>>> axes;
    for (const auto &g : kernel.generics) {
      auto it = defs.find(g.name);
      if (it == defs.end())
        return fail("kernel '" + kernel.name + "' needs -D " + g.name +
                    "=<values>");
      axes.push_back(*it);
    }
    std::vector<size_t> pos(axes.size(), 0);
    while (true) {
      BundleJob job{base, kernel.name};
      job.options.kernel = kernel.name;
      job.options.bindings.clear();
      for (size_t i = 0; i < axes.size(); ++i)
        job.options.bindings[axes[i].first] = axes[i].second[pos[i]];
      resolveReferences(job.options.bindings);
      for (const auto &g : kernel.generics)
        job.tag += "__" + g.name + "-" + job.options.bindings[g.name];
      if (base.tuning.empty() || targetHasEntry(job))
        jobs.push_back(std::move(job));
      // Next combination.
      size_t i = 0;
      for (; i < axes.size(); ++i) {
        if (++pos[i] < axes[i].second.size())
          break;
        pos[i] = 0;
      }
      if (i == axes.size())
        break;
    }
  }

  unsigned threads = bundleJobs > 0
                         ? static_cast<unsigned>(bundleJobs)
                         : hardware_concurrency().compute_thread_count();
  threads = std::max(1u, std::min<unsigned>(threads, jobs.size()));
  json::Array index;
  int produced = 0;
  if (!jobs.empty() && !runBundleJobs(jobs, *sourceMgr.getMemoryBuffer(1),
                                      threads, index, produced))
    return 1;
  SmallString<256> indexPath(bundleDir);
  sys::path::append(indexPath, "index.json");
  std::string text;
  raw_string_ostream os(text);
  os << formatv("{0:2}",
                json::Value(indexObject(base, std::move(index))))
     << "\n";
  if (!writeFile(indexPath, text, false))
    return 1;
  outs() << "wrote " << produced << " kernel variants and " << indexPath
         << "\n";
  return 0;
}

} // namespace

/// `quackc --version`, after LLVM's lines: what decides the cubins quackc
/// writes besides its input (a JIT cache keys on it).
void printQuackVersion(raw_ostream &os) {
  os << "quack " << quack::kCompilerVersion << "\n";
  StringRef table = mlir::quack::builtinTunedConfigText("sm_90");
  os << "  tuning table " << mlir::quack::tunedConfigTableName("sm_90")
     << ": sha256 " << toHex(SHA256::hash(arrayRefFromStringRef(table)), true)
     << "\n";
  for (const mlir::quack::TuningTarget &target :
       mlir::quack::tuningTargets("sm_90")) {
    StringRef text = mlir::quack::builtinTunedConfigText("sm_90", target.name);
    os << "  tuning table " << target.table << " (--tuning=" << target.name
       << "): sha256 " << toHex(SHA256::hash(arrayRefFromStringRef(text)), true)
       << "\n";
  }
  Expected<std::string> ptxas = quack::findPtxas(ptxasPath);
  if (!ptxas) {
    os << "  ptxas: not found (" << toString(ptxas.takeError()) << ")\n";
    return;
  }
  Expected<std::string> version = quack::ptxasVersion(*ptxas);
  os << "  ptxas: " << *ptxas << " ("
     << (version ? *version : toString(version.takeError())) << ")\n";
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::AddExtraVersionPrinter(printQuackVersion);
  std::string parseErrors;
  raw_string_ostream errStream(parseErrors);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "quack compiler: kernel descriptions to Hopper cubins\n\n"
          "  quackc kernels/rmsnorm.qk -D T=bf16 -D N=4096 -o rms.cubin\n"
          "  quackc kernels/rmsnorm.qk --bundle=out -D T=bf16,f32 -D "
          "N=1024,4096\n",
          &errStream)) {
    // Re-issue LLVM's option errors in the driver's own format.
    SmallVector<StringRef> lines;
    StringRef(parseErrors).split(lines, '\n', -1, false);
    for (StringRef line : lines) {
      line.consume_front("quackc: ");
      line = line.trim();
      if (!line.empty())
        WithColor::error(errs(), "quackc") << line << "\n";
    }
    return 1;
  }
  if (!printLayoutFlag.empty())
    return quack::printLayoutCommand(printLayoutFlag, outputFile, outs());
  if (inputFile.empty())
    return fail("no input file; usage: quackc INPUT [-o OUT] [--emit=STAGE]");
  if (bundleDir.empty())
    // (cl::list's operator& gives its vector: take the option itself.)
    for (const cl::Option *flag :
         {static_cast<const cl::Option *>(std::addressof(bundleJobs)),
          static_cast<const cl::Option *>(std::addressof(bundleAlignments)),
          static_cast<const cl::Option *>(std::addressof(clusterFallbacks))})
      if (flag->getNumOccurrences())
        return fail("--" + flag->ArgStr + " applies to --bundle=DIR only");

  quack::CompileOptions options;
  std::optional<quack::Stage> stage = quack::parseStage(emit);
  if (!stage) {
    std::string names;
    for (StringRef s : quack::stageNames())
      names += (names.empty() ? "" : ", ") + s.str();
    return fail("unknown stage '" + emit + "' for --emit; expected one of " +
                names);
  }
  options.emit = *stage;
  options.arch = arch;
  options.kernel = kernelName;
  options.ptxas = ptxasPath;
  if (tuningFlag.getNumOccurrences()) {
    const mlir::quack::TuningTarget *target =
        mlir::quack::findTuningTarget(arch, tuningFlag);
    if (!target)
      return fail("unknown --tuning target '" + tuningFlag + "' for " + arch +
                  mlir::quack::knownTuningTargets(arch));
    options.tuning = target->name.str();
  }
  if (std::string msg = quack::parseConfigOverrides(configFlag, options);
      !msg.empty())
    return fail("--" + msg);
  std::map<std::string, std::vector<std::string>> defs;
  if (std::string msg = parseDefines(defs, !bundleDir.empty()); !msg.empty())
    return fail(msg);
  for (const auto &[k, v] : defs)
    options.bindings[k] = v.front();
  resolveReferences(options.bindings);

  auto buffer = MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (!buffer)
    return fail("cannot read '" + inputFile +
                "': " + buffer.getError().message());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  std::unique_ptr<mlir::MLIRContext> context = quack::createContext();
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, context.get());
  reportUnlocatedAsDriver(*context, errs());

  if (!bundleDir.empty())
    return compileBundle(sourceMgr, *context, options, defs);
  return compileOne(sourceMgr, *context, options);
}
