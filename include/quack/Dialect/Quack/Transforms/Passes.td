//===- Passes.td - quack dialect passes --------------------*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_TRANSFORMS_PASSES_TD
#define QUACK_DIALECT_QUACK_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def QuackSelectConfig : Pass<"quack-select-config", "::mlir::ModuleOp"> {
  let summary = "chooses how each kernel's rows are spread over threads";
  let description = [{
    Attaches a `quack.config` dictionary to every `quack.kernel`: the vector
    width in elements (`vector`, 128-bit accesses when N and the alignment
    class allow), threads per row, vectors per thread, rows per CTA and the
    CTA size. The choice follows from N, the element types, the alignment
    class of the pointers and strides, and the target. Every knob can be
    forced with an option; a forced value that cannot work is an error.

    The model: a row is split into N / vector vectors; a thread owns about
    four of them (tens of bytes in flight per thread), threads per row is
    the power of two that gives that, and small rows are packed several to a
    CTA of at least 128 threads so that each SM keeps enough bytes in flight.
    Rows longer than one CTA holds in registers (16384 elements) are split
    over the CTAs of a thread-block cluster (`cluster_size`, a power of two
    up to 16, sm_90 and later), each owning a contiguous chunk of at most
    16384 elements.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"16",
           "byte alignment guaranteed for every pointer and row stride">,
    Option<"vector", "vector", "int64_t", /*default=*/"0",
           "elements per vector access (0: choose)">,
    Option<"threadsPerRow", "threads-per-row", "int64_t", /*default=*/"0",
           "threads that share one row (0: choose)">,
    Option<"rowsPerCta", "rows-per-cta", "int64_t", /*default=*/"0",
           "rows handled by one CTA (0: choose)">,
    Option<"clusterSize", "cluster-size", "int64_t", /*default=*/"0",
           "CTAs of a cluster that split each row (0: choose)">,
    Option<"minCtasPerSm", "min-ctas-per-sm", "int64_t", /*default=*/"-1",
           "CTAs each SM must hold at once, capping registers (-1: choose, "
           "0: no cap)">,
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90\"",
           "target architecture">
  ];
}

def QuackSinkRowVectors : Pass<"quack-sink-row-vectors", "::mlir::ModuleOp"> {
  let summary = "moves loads of row vectors (weights) to their first use";
  let description = [{
    A row vector such as a norm's weight is the same for every row, so a
    description may read it anywhere; where it is read before a row
    reduction, its fragments stay live in registers across the reduction's
    exchange. This pass moves every `quack.load` of a row vector, and the
    elementwise operations that depend only on such loads and on scalars,
    to just before their first use. Fewer live registers across a
    reduction let more CTAs share an SM (RMSNorm over 65536 bf16 elements,
    one CTA of 512 threads per 16384: 74 registers before, 61 after).

    ```mlir
    %w = quack.load %weight : memref<4096xbf16> -> vector<4096xbf16>
    %s = quack.reduce <add> %sq : vector<4096xf32> -> f32
    %y = arith.mulf %xr, %wf : vector<4096xf32>
    ```
    becomes a kernel in which `%w` (and its widening) is computed after
    `%s`, right before the multiplication.
  }];
}

#endif // QUACK_DIALECT_QUACK_TRANSFORMS_PASSES_TD
