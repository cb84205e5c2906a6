//===- Passes.td - quack conversion passes -----------------*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_CONVERSION_PASSES_TD
#define QUACK_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertQuackToGPU : Pass<"convert-quack-to-gpu", "::mlir::ModuleOp"> {
  let summary = "distributes row kernels over the threads of a CTA";
  let description = [{
    Turns every configured `quack.kernel` into a `gpu.module` holding one
    `gpu.func` kernel with the frozen ABI: the row count `M` (`i64`), then
    for each argument a global pointer (`!llvm.ptr<1>`, followed by an `i64`
    row stride for matrices) or a scalar value.

    Each row value `vector<NxT>` becomes, in every thread, `vectors_per_thread`
    fragments `vector<VxT>` (V = the config's vector width): thread `t` of
    the row's group owns vectors `t`, `t + threads_per_row`, ... so each
    warp's accesses are contiguous 128-bit loads and stores that carry their
    alignment. Vectors past `N` and rows past `M` are predicated off.
    Elementwise `arith` and `math` ops are applied fragment by fragment.

    `quack.reduce` becomes an in-thread reduction, a shuffle butterfly across
    the row's lanes, and, when a row spans several warps, one shared-memory
    exchange behind a barrier, combined in a fixed order so that every
    thread holds the bit-identical result.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def ConvertQuackClusterToNVVM
    : Pass<"convert-quack-cluster-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "lowers the cluster exchange ops to mbarriers, mapa, "
                "st.async and barrier.cluster";
  let description = [{
    - `quack.cluster.barrier_init`: in thread 0, `mbarrier.init` (arrival
      count 1) of each barrier and `fence.mbarrier_init.release.cluster`;
      a `bar.warp.sync`; then, in thread 0,
      `mbarrier.arrive.expect_tx` of each barrier's byte count;
    - `quack.cluster.barrier_arm`: in thread 0, `mbarrier.arrive.expect_tx`;
    - `quack.cluster.arrive` / `wait`: `barrier.cluster.arrive[.relaxed]` /
      `barrier.cluster.wait` (aligned);
    - `quack.cluster.exchange`: thread `t` (and `t + cta_threads`, ...)
      sends each value to peer `t` with
      `st.async.shared::cluster.mbarrier::complete_tx::bytes.b32` at the
      `mapa` address of this CTA's slot in the peer, completing on the
      peer's mbarrier; then `mbarrier.try_wait.parity` on this CTA's
      mbarrier, and a load of each value of rank `source`.

    Run it before `scf` is lowered (it emits `scf.if`) and after
    quack-verify-cluster-protocol.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def ConvertQuackMathToNVVM
    : Pass<"convert-quack-math-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "lowers f32 math to NVPTX instructions without libdevice";
  let description = [{
    Rewrites f32 `math` ops (scalars, and vectors lane by lane) to the NVPTX
    instructions that implement them, so that no libdevice call and no link
    step is needed:

    - `math.sqrt`  -> `sqrt.rn.f32` (IEEE round-to-nearest);
    - `math.rsqrt` -> `1 / sqrt.rn.f32` with an IEEE divide;
    - `math.exp2`  -> `ex2.approx.f32`; `math.exp(x)` -> `ex2.approx(x * log2 e)`;
    - `math.log`   -> `lg2.approx.f32 * ln 2`;
    - `math.tanh(x)` -> `1 - 2 / (exp(2x) + 1)`.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def QuackLowerTensorMapArgs
    : Pass<"quack-lower-tensor-map-args", "::mlir::gpu::GPUModuleOp"> {
  let summary = "makes tensor-map parameters 128-byte by-value kernel "
                "parameters in the parameter space";
  let description = [{
    A kernel with tensor copies (`copy=tensor`) takes one tensor map (a
    128-byte `CUtensorMap`, encoded by the runtime per launch) per staged
    input, which convert-quack-to-gpu passes as a generic pointer and lists
    in the kernel's `quack.tensor_map_args` (parameter indices). On the
    `llvm.func` kernels that convert-gpu-to-nvvm produced, this pass makes
    each such parameter `llvm.byval = !llvm.array<128 x i8>`, 64-byte
    aligned and `nvvm.grid_constant`: the NVPTX backend then declares a
    `.param .align 64 .b8 [128]` and the pointer becomes the parameter's
    generic address (`cvta.param`), which `cp.async.bulk.tensor` reads the
    map through, with no copy to local memory.

    Run it after convert-gpu-to-nvvm (the NVVM verifier admits
    `nvvm.grid_constant` only on the arguments of `llvm.func` kernels).
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect"
  ];
}

#endif // QUACK_CONVERSION_PASSES_TD
