// RUN: quack-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of the cluster exchange ops' own verifiers.

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{has 2 mbarriers but 1 expected byte counts}}
    quack.cluster.barrier_init @smem barriers [0, 8] expect_tx [16]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{names no mbarrier}}
    quack.cluster.barrier_arm @smem barriers [] expect_tx []
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{mbarrier offset 4 is not a multiple of 8 in [0, 2^24)}}
    quack.cluster.barrier_init @smem barriers [4] expect_tx [16]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{names the mbarrier at offset 8 twice}}
    quack.cluster.barrier_init @smem barriers [8, 8] expect_tx [16, 16]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{expected byte count 0 is outside [1, 2^20)}}
    quack.cluster.barrier_init @smem barriers [0] expect_tx [0]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{'missing' is not an llvm.mlir.global}}
    quack.cluster.barrier_init @missing barriers [0] expect_tx [16]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 1 : i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{'smem' is not in shared memory (address space 1, expected 3)}}
    quack.cluster.barrier_init @smem barriers [0] expect_tx [16]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{needs 72 bytes of 'smem', which has 64}}
    quack.cluster.barrier_arm @smem barriers [64] expect_tx [16]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %p: i32) kernel {
    // expected-error @+1 {{cluster size 32 is outside [2, 16]}}
    %r = quack.cluster.exchange @smem barrier 0 slots 8 parity %p from %p (%v) {cluster_size = 32 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %p: i32) kernel {
    // expected-error @+1 {{CTA thread count 2048 is outside [1, 1024]}}
    %r = quack.cluster.exchange @smem barrier 0 slots 8 parity %p from %p (%v) {cluster_size = 2 : i64, cta_threads = 2048 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%p: i32) kernel {
    // expected-error @+1 {{exchanges no value}}
    "quack.cluster.exchange"(%p, %p) <{barrier = 0 : i64, cluster_size = 2 : i64, cta_threads = 128 : i64, slots = 8 : i64, smem = @smem}> : (i32, i32) -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %p: i32) kernel {
    // expected-error @+1 {{slot offset 6 is not a multiple of 4 in [0, 2^24)}}
    %r = quack.cluster.exchange @smem barrier 0 slots 6 parity %p from %p (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %p: i32) kernel {
    // expected-error @+1 {{mbarrier offset 12 is not a multiple of 8 in [0, 2^24)}}
    %r = quack.cluster.exchange @smem barrier 12 slots 16 parity %p from %p (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %p: i32) kernel {
    // expected-error @+1 {{slots [0, 16) overlap the mbarrier at 8}}
    %r:2 = quack.cluster.exchange @smem barrier 8 slots 0 parity %p from %p (%v, %v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32, f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %p: i32) kernel {
    // expected-error @+1 {{needs 72 bytes of 'smem', which has 64}}
    %r:2 = quack.cluster.exchange @smem barrier 0 slots 8 parity %p from %p (%v, %v) {cluster_size = 8 : i64, cta_threads = 128 : i64} : f32, f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f16, %p: i32) kernel {
    // expected-error @+1 {{operand #2 must be variadic of 32-bit float or 32-bit signless integer}}
    %r = quack.cluster.exchange @smem barrier 0 slots 8 parity %p from %p (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f16
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %p: i32) kernel {
    // expected-error @+1 {{a CTA of 2 threads cannot read the values of 4 ranks}}
    %r = quack.cluster.exchange @smem barrier 0 slots 8 parity %p from %p (%v) {cluster_size = 4 : i64, cta_threads = 2 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<16 x i32>
  gpu.func @f() kernel {
    // expected-error @+1 {{'smem' is not an array of i8}}
    quack.cluster.barrier_init @smem barriers [0] expect_tx [16]
    gpu.return
  }
}
