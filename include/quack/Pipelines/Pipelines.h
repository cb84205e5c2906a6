//===- Pipelines.h - quack pass pipelines -------------------------*- C++ -*-===//
//
// Part of the quack project.
//
// One function builds each pipeline; quack-opt, quackc, the C API and Python
// all go through them.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_PIPELINES_PIPELINES_H
#define QUACK_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

namespace quack {

/// Options shared by the quack pipelines.
struct PipelineOptions : public mlir::PassPipelineOptions<PipelineOptions> {
  Option<std::string> arch{*this, "arch",
                           llvm::cl::desc("target architecture"),
                           llvm::cl::init("sm_90")};
  Option<int64_t> alignment{
      *this, "alignment",
      llvm::cl::desc("byte alignment of pointers and row strides"),
      llvm::cl::init(16)};
  Option<int64_t> vector{*this, "vector",
                         llvm::cl::desc("forced vector width (0: choose)"),
                         llvm::cl::init(0)};
  Option<int64_t> threadsPerRow{
      *this, "threads-per-row",
      llvm::cl::desc("forced threads per row (0: choose)"), llvm::cl::init(0)};
  Option<int64_t> rowsPerCta{*this, "rows-per-cta",
                             llvm::cl::desc("forced rows per CTA (0: choose)"),
                             llvm::cl::init(0)};
  Option<int64_t> clusterSize{
      *this, "cluster-size",
      llvm::cl::desc("forced CTAs per cluster that split a row (0: choose)"),
      llvm::cl::init(0)};
  Option<int64_t> minCtasPerSm{
      *this, "min-ctas-per-sm",
      llvm::cl::desc("CTAs each SM must hold, capping registers (-1: choose)"),
      llvm::cl::init(-1)};
  Option<int64_t> prefetch{
      *this, "prefetch",
      llvm::cl::desc("persistent kernels load the next row group early "
                     "(-1: choose, 0: no, 1: yes)"),
      llvm::cl::init(-1)};
  Option<int64_t> remat{
      *this, "remat",
      llvm::cl::desc("keep 16-bit rows packed across exchanges (0: no, "
                     "1: yes)"),
      llvm::cl::init(0)};
  Option<int64_t> sink{
      *this, "sink",
      llvm::cl::desc("after the last exchange, finish and store each "
                     "fragment of the row before the next (0: no, 1: yes)"),
      llvm::cl::init(0)};
  Option<int64_t> copy{
      *this, "copy",
      llvm::cl::desc("matrix inputs through 128-bit loads (0) or bulk copies "
                     "into shared memory (1) (-1: choose)"),
      llvm::cl::init(-1)};
  Option<int64_t> sums{
      *this, "sums",
      llvm::cl::desc("partial sums over rows in registers (0), or in shared "
                     "memory for the last K sums over rows (K); -1: the "
                     "table entry's count, else registers"),
      llvm::cl::init(-1)};
  Option<bool> earlySums{
      *this, "early-sums",
      llvm::cl::desc("accumulate sums over rows before the reductions they "
                     "do not depend on (quack-hoist-row-sums)"),
      llvm::cl::init(false)};
  Option<bool> earlyVectors{
      *this, "early-vectors",
      llvm::cl::desc("issue row-vector loads (weights) with the row's loads "
                     "instead of at their first use"),
      llvm::cl::init(false)};
  Option<bool> expFtz{
      *this, "exp-ftz",
      llvm::cl::desc("exponentials through ex2.approx.ftz (results below "
                     "2^-126 flush to zero)"),
      llvm::cl::init(true)};
  Option<int64_t> stages{
      *this, "stages",
      llvm::cl::desc("buffers of a prefetching loop with bulk copies (0: "
                     "choose)"),
      llvm::cl::init(0)};
  Option<bool> useTuned{
      *this, "tuned",
      llvm::cl::desc("use the architecture's table of measured configs"),
      llvm::cl::init(true)};
  Option<std::string> tuning{
      *this, "tuning",
      llvm::cl::desc("a tuning target of the architecture (e.g. h100) whose "
                     "table takes precedence"),
      llvm::cl::init("")};
};

/// The stages of compilation, in order. `quackc --emit=` names one of them.
enum class Stage { Quack, Config, GPU, NVVM, LLVM, PTX, Cubin };

/// The stage names, in order: quack, config, gpu, nvvm, llvm, ptx, cubin.
llvm::ArrayRef<llvm::StringRef> stageNames();
/// Parses a stage name.
std::optional<Stage> parseStage(llvm::StringRef name);

/// Row level to configured row level: quack-select-config.
void buildQuackConfigPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options);
/// Configured row level to gpu.module kernels: convert-quack-to-gpu.
void buildQuackToGPUPipeline(mlir::OpPassManager &pm,
                             const PipelineOptions &options);
/// gpu.module kernels to the LLVM and NVVM dialects, ready for translation.
void buildGPUToNVVMPipeline(mlir::OpPassManager &pm,
                            const PipelineOptions &options);
/// The whole pipeline from row level to the LLVM and NVVM dialects.
void buildQuackToNVVMPipeline(mlir::OpPassManager &pm,
                              const PipelineOptions &options);

/// Registers the pipelines above by name with the pass registry.
void registerPipelines();

} // namespace quack

#endif // QUACK_PIPELINES_PIPELINES_H
