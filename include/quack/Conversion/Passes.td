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
    alignment: each a thread-level `quack.copy` with the `vector` atom,
    predicated off for vectors past `N` and rows past `M`. Staged rows come
    into shared memory through `quack.copy` with the `bulk` or `tensor` atom
    (convert-quack-copy-to-nvvm lowers them all).
    Elementwise `arith` and `math` ops are applied fragment by fragment.

    `quack.reduce` becomes an in-thread reduction (`vector.reduction`) and
    a thread-level `quack.allreduce` across the row's threads: scope `warp`
    when a row fits in a warp, `block` when it spans several warps (its
    scratch slots allocated in the kernel's shared memory). Reductions of
    one group share one allreduce. Rows split over a cluster then exchange
    the CTAs' partials with `quack.cluster.exchange` and combine them with a
    `warp` allreduce over the ranks.
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

def ConvertQuackAllReduceToNVVM
    : Pass<"convert-quack-allreduce-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "lowers quack.allreduce to warp shuffles and, across the "
                "warps of a block, shared memory and a barrier";
  let description = [{
    - scope `warp`: a butterfly of `shfl.sync.bfly` over offsets
      `lanes / 2`, ..., 1, one shuffle per value and step (two for an
      argmax pair); the online sums of `logsumexp` terms are rescaled to
      the combined maximum after the maxima's butterfly;
    - scope `block`: the same butterfly over each warp's 32 lanes; lane 0
      of each warp stores its values to the group's scratch slots
      `[warp][value]` (`llvm.store` to the shared-memory global, in an
      `scf.if`); `gpu.barrier`; lane `j` of each warp loads warp
      `j mod (lanes / 32)`'s values, and a butterfly over `lanes / 32` lanes
      combines them.

    It emits `scf.if`: it runs before scf is lowered.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def ConvertQuackCopyToNVVM
    : Pass<"convert-quack-copy-to-nvvm", "::mlir::gpu::GPUModuleOp"> {
  let summary = "lowers quack.copy to loads, stores and asynchronous "
                "bulk and tensor copies, and the staging ops to mbarriers";
  let description = [{
    - atom `vector`: an `llvm.load` or `llvm.store` with the op's alignment
      (NVPTX emits one `ld`/`st` of the address space, `.v4.b32` for 16
      bytes);
    - atom `bulk`: `cp.async.bulk.shared::cluster.global.mbarrier::
      complete_tx::bytes` (inline PTX);
    - atom `tensor`: `cp.async.bulk.tensor.3d.shared::cluster.global.tile.
      mbarrier::complete_tx::bytes` (inline PTX).

    A predicate becomes an `scf.if` around the copy; a predicated load
    yields zeros in its `else`.

    The staging ops around the asynchronous copies:
    - `quack.stage.init`: in thread 0, `mbarrier.init` (arrival count 1) of
      each mbarrier and `fence.mbarrier_init`; then `gpu.barrier`;
    - `quack.stage.fill`: in thread 0, `fence.proxy.async.shared::cta`,
      `mbarrier.arrive.expect_tx` of the fill's bytes, then the body;
    - `quack.stage.wait`: `mbarrier.try_wait.parity` in a loop.

    It emits scf.if: it runs before scf is lowered.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect",
    "::mlir::scf::SCFDialect"
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
    - `math.exp2`  -> `ex2.approx.ftz.f32` (with `ftz`, the default) or
      `ex2.approx.f32`; `math.exp(x)` -> `ex2.approx(x * log2 e)`;
    - `math.log`   -> `lg2.approx.f32 * ln 2`;
    - `math.tanh(x)` -> `1 - 2 / (exp(2x) + 1)`.

    ex2.approx.ftz is one MUFU.EX2; without ftz, ptxas adds a test and two
    conditional multiplies per exponential to keep results below 2^-126
    subnormal (with ftz they are 0: an absolute error under 1.2e-38).
  }];
  let options = [
    Option<"ftz", "ftz", "bool", /*default=*/"true",
           "exponentials flush results below 2^-126 to zero (one "
           "instruction instead of four)">
  ];
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
