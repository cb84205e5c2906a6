// RUN: quack-opt %s -split-input-file -verify-diagnostics

// Found by quack-fuzz-mlir: a global whose address space is not an integer
// (the parser drops it, leaving the property null) crashed the cluster ops'
// symbol check, whose typed accessor assumed one; symbol uses are verified
// before the global itself. The attributes are read untyped now.

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{'smem' is not in shared memory (address space 0, expected 3)}}
    quack.cluster.barrier_init @smem barriers [0, 8] expect_tx [16, 16]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{'smem' is not in shared memory (address space 0, expected 3)}}
    quack.cluster.barrier_arm @smem barriers [0] expect_tx [16]
    gpu.return
  }
}
