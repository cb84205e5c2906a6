//===- PTX.cpp - LLVM IR, PTX and cubins from gpu.module kernels -----------===//
//
// Part of the quack project.
//
// gpu-module-to-binary drops ptxas' resource report on success, so quack runs
// each step itself: MLIR -> LLVM IR (-O3) -> PTX (NVPTX backend) -> cubin
// (ptxas -v), keeping registers, shared memory and spills visible.
//
//===----------------------------------------------------------------------===//

#include "quack/Target/PTX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <chrono>
#include <csignal>
#include <mutex>
#include <thread>

using namespace mlir;

namespace quack {

static constexpr llvm::StringLiteral kTriple = "nvptx64-nvidia-cuda";

static void initializeNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::string ptxFeaturesFor(llvm::StringRef arch) {
  // sm_100 and later need a newer ISA than sm_90; 8.6 is accepted by the
  // CUDA 13 ptxas for every Hopper target.
  if (arch.starts_with("sm_10") || arch.starts_with("sm_12"))
    return "+ptx88";
  return "+ptx86";
}

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(llvm::StringRef arch, bool fuseMulAdd = false) {
  initializeNVPTX();
  std::string error;
  llvm::Triple triple(kTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("cannot find the NVPTX target: " + error);
  // sm_90a and friends keep their suffix in the CPU name.
  llvm::TargetOptions options;
  if (fuseMulAdd)
    options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, arch, ptxFeaturesFor(arch), options, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for " +
                                   arch.str());
  return machine;
}

FailureOr<std::unique_ptr<llvm::Module>>
translateToLLVMIR(gpu::GPUModuleOp gpuModule, llvm::LLVMContext &context,
                  llvm::StringRef arch) {
  // Translate the gpu.module's body as if it were a builtin module.
  OpBuilder b(gpuModule.getContext());
  OwningOpRef<ModuleOp> module = ModuleOp::create(gpuModule.getLoc());
  b.setInsertionPointToStart(module->getBody());
  for (Operation &op : gpuModule.getBody()->without_terminator())
    b.clone(op);
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, context, gpuModule.getName());
  if (!llvmModule) {
    gpuModule.emitError("cannot translate to LLVM IR");
    return failure();
  }
  auto machine = createTargetMachine(arch);
  if (!machine) {
    gpuModule.emitError(llvm::toString(machine.takeError()));
    return failure();
  }
  llvmModule->setTargetTriple(llvm::Triple(kTriple));
  llvmModule->setDataLayout((*machine)->createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(machine->get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(*llvmModule, mam);
  return llvmModule;
}

llvm::Expected<std::string> emitPTX(llvm::Module &module, llvm::StringRef arch,
                                    bool fuseMulAdd) {
  auto machine = createTargetMachine(arch, fuseMulAdd);
  if (!machine)
    return machine.takeError();
  std::string ptx;
  {
    llvm::raw_string_ostream os(ptx);
    llvm::buffer_ostream bos(os);
    llvm::legacy::PassManager pm;
    if ((*machine)->addPassesToEmitFile(pm, bos, nullptr,
                                        llvm::CodeGenFileType::AssemblyFile))
      return llvm::createStringError("the NVPTX backend cannot emit PTX");
    pm.run(module);
  }
  return ptx;
}

llvm::Expected<std::string> findPtxas(llvm::StringRef explicitPath) {
  auto isExecutable = [](llvm::StringRef path) {
    return llvm::sys::fs::can_execute(path);
  };
  if (!explicitPath.empty()) {
    if (isExecutable(explicitPath))
      return explicitPath.str();
    return llvm::createStringError("ptxas not found at '" +
                                   explicitPath.str() + "'");
  }
  if (const char *env = std::getenv("QUACK_PTXAS")) {
    if (isExecutable(env))
      return std::string(env);
    return llvm::createStringError(
        "ptxas not found at '" + std::string(env) + "' (from QUACK_PTXAS)");
  }
  if (auto found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  for (llvm::StringRef candidate :
       {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (isExecutable(candidate))
      return candidate.str();
  return llvm::createStringError(
      "cannot find ptxas: install the CUDA Toolkit, put ptxas on PATH, or "
      "pass --ptxas=<path>");
}

std::vector<ResourceReport> parsePtxasReport(llvm::StringRef log) {
  std::vector<ResourceReport> reports;
  llvm::Regex function("Compiling entry function '([^']+)'");
  llvm::Regex usage("Used ([0-9]+) registers");
  llvm::Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill "
                    "stores, ([0-9]+) bytes spill loads");
  llvm::Regex smem("([0-9]+) bytes smem");
  llvm::Regex cmem("([0-9]+) bytes cmem\\[0\\]");
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef> m;
    if (function.match(line, &m)) {
      reports.emplace_back();
      reports.back().kernel = m[1].str();
      continue;
    }
    if (reports.empty())
      continue;
    ResourceReport &r = reports.back();
    if (frame.match(line, &m)) {
      m[1].getAsInteger(10, r.stackBytes);
      m[2].getAsInteger(10, r.spillStoreBytes);
      m[3].getAsInteger(10, r.spillLoadBytes);
    }
    if (usage.match(line, &m))
      m[1].getAsInteger(10, r.registers);
    if (smem.match(line, &m))
      m[1].getAsInteger(10, r.sharedBytes);
    if (cmem.match(line, &m))
      m[1].getAsInteger(10, r.constantBytes);
  }
  return reports;
}

namespace {
/// A temporary file removed when it goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  explicit TempFile(llvm::StringRef suffix) {
    if (llvm::sys::fs::createTemporaryFile("quack", suffix, path))
      path.clear();
  }
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};
} // namespace

static llvm::Expected<Cubin> runPtxas(llvm::StringRef ptx,
                                      llvm::StringRef arch,
                                      llvm::StringRef ptxasPath);

/// Runs `program` with stdout and stderr into `log`, and waits at most
/// `seconds` for it. Unlike ExecuteAndWait's timeout, which arms the
/// process-wide alarm(2), this is safe from several threads at once (config
/// selection runs ptxas so). Returns the exit code, -1 where the program
/// could not start, -2 where it crashed or was killed after `seconds`;
/// `error` then says why.
static int runLogged(llvm::StringRef program,
                     llvm::ArrayRef<llvm::StringRef> argv, unsigned seconds,
                     std::string &log, std::string &error) {
  TempFile logFile("log");
  if (logFile.path.empty()) {
    error = "cannot create a temporary file for its output";
    return -1;
  }
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logFile.path,
                                                logFile.path};
  bool failed = false;
  llvm::sys::ProcessInfo child = llvm::sys::ExecuteNoWait(
      program, argv, std::nullopt, redirects, 0, &error, &failed);
  if (failed || child.Pid == 0)
    return -1;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int rc;
  while (true) {
    // A non-blocking wait: Pid is 0 while the child runs.
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(child, /*SecondsToWait=*/0, &error);
    if (done.Pid != 0) {
      rc = done.ReturnCode;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child.Pid, SIGKILL);
      llvm::sys::Wait(child, std::nullopt);
      error = "killed after " + std::to_string(seconds) + " seconds";
      rc = -2;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto text = llvm::MemoryBuffer::getFile(logFile.path);
  log = text ? (*text)->getBuffer().str() : "";
  return rc;
}

static int64_t spillBytes(const Cubin &cubin) {
  int64_t bytes = 0;
  for (const auto &report : cubin.reports)
    bytes += report.spillStoreBytes + report.spillLoadBytes;
  return bytes;
}

llvm::Expected<Cubin> assemblePTX(llvm::StringRef ptx, llvm::StringRef arch,
                                  llvm::StringRef ptxasPath) {
  llvm::Expected<Cubin> first = runPtxas(ptx, arch, ptxasPath);
  if (!first || spillBytes(*first) == 0)
    return first;
  // Without a register directive, ptxas may accept a spill to fit one more
  // CTA per SM (layernorm_fwd f32 at N = 131072: 40 registers and 8 bytes
  // of spills, to hold three CTAs of 512 threads). Its choice stands where
  // it does not spill; where it does, ask for one CTA per SM at least,
  // which lets it use the registers the kernel needs, and keep that if it
  // spills less.
  std::optional<std::string> retried = withMinCtasPerSm(ptx, 1);
  if (!retried) // it has a register directive already
    return first;
  llvm::Expected<Cubin> second = runPtxas(*retried, arch, ptxasPath);
  if (!second) {
    llvm::consumeError(second.takeError());
    return first;
  }
  if (spillBytes(*second) < spillBytes(*first))
    return second;
  return first;
}

llvm::Expected<std::string> ptxasVersion(llvm::StringRef ptxasPath) {
  llvm::SmallVector<llvm::StringRef> argv = {ptxasPath, "--version"};
  std::string log, error;
  if (runLogged(ptxasPath, argv, /*seconds=*/30, log, error) != 0)
    return llvm::createStringError(
        "'" + ptxasPath.str() + " --version' failed" +
        (error.empty() ? "" : " (" + error + ")"));
  std::string version;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(log).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.starts_with("Cuda compilation tools") ||
        line.starts_with("Build "))
      version += (version.empty() ? "" : "; ") + line.str();
  }
  if (version.empty())
    return llvm::createStringError("'" + ptxasPath.str() +
                                   " --version' printed no release line");
  return version;
}

std::optional<std::string> withMinCtasPerSm(llvm::StringRef ptx,
                                            int64_t ctas) {
  if (!ptx.contains(".maxntid") || ptx.contains(".minnctapersm") ||
      ptx.contains(".maxnreg"))
    return std::nullopt;
  std::string result;
  result.reserve(ptx.size() + 32);
  llvm::StringRef rest = ptx;
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    result += line;
    result += '\n';
    if (line.trim().starts_with(".maxntid"))
      result += ".minnctapersm " + std::to_string(ctas) + "\n";
    rest = tail;
  }
  return result;
}

/// Seconds one ptxas run may take: $QUACK_PTXAS_TIMEOUT, else 120.
static unsigned ptxasTimeout() {
  static const unsigned seconds = [] {
    unsigned value = 120;
    if (const char *env = std::getenv("QUACK_PTXAS_TIMEOUT"))
      if (llvm::StringRef(env).getAsInteger(10, value) || value == 0)
        value = 120;
    return value;
  }();
  return seconds;
}

static llvm::Expected<Cubin> runPtxas(llvm::StringRef ptx,
                                      llvm::StringRef arch,
                                      llvm::StringRef ptxasPath) {
  TempFile input("ptx"), output("cubin");
  if (input.path.empty() || output.path.empty())
    return llvm::createStringError("cannot create temporary files for ptxas");
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(input.path, ec);
    if (ec)
      return llvm::createStringError("cannot write " + input.path.str() +
                                     ": " + ec.message());
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::SmallVector<llvm::StringRef> argv = {
      ptxasPath,  archFlag,         "-v", "--warn-on-spills", "-O3", "-o",
      output.path, input.path};
  std::string logText, error;
  int rc = runLogged(ptxasPath, argv, ptxasTimeout(), logText, error);
  if (rc != 0)
    return llvm::createStringError(
        "ptxas failed" + (error.empty() ? "" : " (" + error + ")") +
        (llvm::StringRef(logText).trim().empty() ? "" : ":\n" + logText));
  auto binary = llvm::MemoryBuffer::getFile(output.path, /*IsText=*/false);
  if (!binary)
    return llvm::createStringError("cannot read the cubin ptxas wrote");
  Cubin result;
  result.binary = (*binary)->getBuffer().str();
  result.log = logText;
  result.reports = parsePtxasReport(logText);
  return result;
}

} // namespace quack
