//===- Pipelines.cpp - quack pass pipelines --------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Pipelines/Pipelines.h"
#include "quack/Conversion/Passes.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace quack {

static constexpr llvm::StringLiteral kStageNames[] = {
    "quack", "config", "gpu", "nvvm", "llvm", "ptx", "cubin"};

llvm::ArrayRef<llvm::StringRef> stageNames() {
  static const llvm::SmallVector<llvm::StringRef> names(
      std::begin(kStageNames), std::end(kStageNames));
  return names;
}

std::optional<Stage> parseStage(llvm::StringRef name) {
  for (auto [index, stage] : llvm::enumerate(kStageNames))
    if (stage == name)
      return static_cast<Stage>(index);
  return std::nullopt;
}

void buildQuackConfigPipeline(OpPassManager &pm,
                              const PipelineOptions &options) {
  mlir::quack::QuackSelectConfigOptions config;
  config.arch = options.arch;
  config.alignment = options.alignment;
  config.vector = options.vector;
  config.threadsPerRow = options.threadsPerRow;
  config.rowsPerCta = options.rowsPerCta;
  config.clusterSize = options.clusterSize;
  config.minCtasPerSm = options.minCtasPerSm;
  config.prefetch = options.prefetch;
  config.remat = options.remat;
  config.sink = options.sink;
  config.copy = options.copy;
  config.stages = options.stages;
  config.sums = options.sums;
  config.earlySums = options.earlySums;
  config.earlyVectors = options.earlyVectors;
  config.useTuned = options.useTuned;
  config.tuning = options.tuning;
  pm.addPass(mlir::quack::createQuackFuseMoments());
  pm.addPass(mlir::quack::createQuackGroupReductions());
  if (options.earlySums)
    pm.addPass(mlir::quack::createQuackHoistRowSums());
  mlir::quack::QuackScheduleLoadsOptions schedule;
  schedule.earlyVectors = options.earlyVectors;
  pm.addPass(mlir::quack::createQuackScheduleLoads(schedule));
  pm.addPass(mlir::quack::createQuackSelectConfig(config));
  pm.addPass(mlir::quack::createQuackAssignLayouts());
}

void buildQuackToGPUPipeline(OpPassManager &pm, const PipelineOptions &) {
  pm.addPass(mlir::quack::createConvertQuackToGPU());
  pm.addPass(mlir::quack::createQuackSinkToUses());
  pm.addPass(mlir::quack::createQuackVerifyClusterProtocol());
  pm.addPass(mlir::quack::createQuackVerifyStaging());
}

void buildGPUToNVVMPipeline(OpPassManager &pm,
                            const PipelineOptions &options) {
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  // They emit scf.if: before scf is lowered.
  gpu.addPass(mlir::quack::createConvertQuackCopyToNVVM());
  gpu.addPass(mlir::quack::createConvertQuackAllReduceToNVVM());
  gpu.addPass(mlir::quack::createConvertQuackClusterToNVVM());
  gpu.addPass(createSCFToControlFlowPass());
  mlir::quack::ConvertQuackMathToNVVMOptions math;
  math.ftz = options.expFtz;
  gpu.addPass(mlir::quack::createConvertQuackMathToNVVM(math));
  // Math first: what LLVM's NVPTX backend lowers natively must not become a
  // libdevice call, which would need linking.
  gpu.addPass(createConvertMathToLLVMPass());
  gpu.addPass(createConvertGpuOpsToNVVMOps());
  gpu.addPass(mlir::quack::createQuackLowerTensorMapArgs());
  // These conversions are anchored on builtin.module; they reach into the
  // gpu.module bodies from there.
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  // NVVM ops without an LLVM intrinsic (mbarrier.try_wait.parity) become
  // inline PTX.
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void buildQuackToNVVMPipeline(OpPassManager &pm,
                              const PipelineOptions &options) {
  buildQuackConfigPipeline(pm, options);
  buildQuackToGPUPipeline(pm, options);
  buildGPUToNVVMPipeline(pm, options);
}

void registerPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "quack-config-pipeline", "Choose each kernel's configuration",
      buildQuackConfigPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "quack-to-gpu-pipeline", "Lower configured row kernels to gpu.func",
      buildQuackToGPUPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "quack-gpu-to-nvvm-pipeline",
      "Lower gpu.module kernels to the LLVM and NVVM dialects",
      buildGPUToNVVMPipeline);
  PassPipelineRegistration<PipelineOptions>(
      "quack-to-nvvm-pipeline",
      "Lower row kernels all the way to the LLVM and NVVM dialects",
      buildQuackToNVVMPipeline);
}

} // namespace quack
