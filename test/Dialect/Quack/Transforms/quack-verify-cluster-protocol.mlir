// RUN: quack-opt %s -split-input-file --quack-verify-cluster-protocol -verify-diagnostics | FileCheck %s

// The protocol of the cluster exchange, rule by rule (Passes.td). Each case
// is the well-formed kernel that convert-quack-to-gpu emits, or that kernel
// with one thing wrong.

// Straight line: init, relaxed arrive early, loads, wait late, two rounds,
// the second through its own mbarrier.
// CHECK-LABEL: gpu.func @two_rounds
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @two_rounds(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0, 8] expect_tx [16, 32]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    %a = quack.cluster.exchange @smem barrier 0 slots 16 parity %c0 from %src (%v) {cluster_size = 4 : i64, cta_threads = 128 : i64} : f32
    %b:2 = quack.cluster.exchange @smem barrier 8 slots 32 parity %c0 from %src (%a, %v) {cluster_size = 4 : i64, cta_threads = 128 : i64} : f32, f32
    gpu.return
  }
}

// -----

// A persistent loop: the parity is carried and flipped, the barrier is
// re-armed and a (release) cluster arrive ends each iteration, its wait
// coming before the next iteration's exchange and after the loop.
// CHECK-LABEL: gpu.func @loop
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @loop(%v: f32, %src: i32, %lb: index, %ub: index, %step: index) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    %p = scf.for %i = %lb to %ub step %step iter_args(%parity = %c0) -> (i32) {
      quack.cluster.wait
      %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %parity from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
      quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
      quack.cluster.arrive
      %next = arith.xori %parity, %c1 : i32
      scf.yield %next : i32
    }
    quack.cluster.wait
    gpu.return
  }
}

// -----

// Rule 1: an exchange through an mbarrier nobody initialised.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    // expected-error @+1 {{exchanges through the mbarrier at offset 8, which no quack.cluster.barrier_init initialised}}
    %a = quack.cluster.exchange @smem barrier 8 slots 16 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

// Rule 1: peers may write before the init is visible to them (no arrive and
// wait between the init and the exchange).
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    // expected-error @+1 {{peers may write into the mbarrier at offset 0 before its initialisation is visible to them}}
    %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

// Rule 1: an arrive that precedes the init does not publish it.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.arrive
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.wait
    // expected-error @+1 {{before its initialisation is visible to them}}
    %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

// Rule 2: the receiver expects fewer bytes than the cluster sends (the
// phase would complete before every partial landed).
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [16]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    // expected-error @+1 {{the mbarrier at offset 0 expects 16 bytes, but the cluster's 4 CTAs send it 4 x 2 x 4 = 32 bytes}}
    %a:2 = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v, %v) {cluster_size = 4 : i64, cta_threads = 128 : i64} : f32, f32
    gpu.return
  }
}

// -----

// Rule 2: arming a phase that is still armed adds the byte counts: the
// phase would never complete.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f() kernel {
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    // expected-error @+1 {{arms the mbarrier at offset 0 while its armed phase is not complete}}
    quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
    gpu.return
  }
}

// -----

// Rule 3: a second exchange through a barrier whose phase was completed
// and never re-armed.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    quack.cluster.arrive
    quack.cluster.wait
    // expected-error @+1 {{the mbarrier at offset 0 has no armed phase}}
    %b = quack.cluster.exchange @smem barrier 0 slots 8 parity %c1 from %src (%a) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

// Rule 3: the second phase of a barrier has parity 1.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
    quack.cluster.arrive
    quack.cluster.wait
    // expected-error @+1 {{waits for parity 0 of the mbarrier at offset 0, whose phase 1 has parity 1}}
    %b = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%a) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

// Rule 3: in a loop, a parity that is not carried by the loop.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32, %lb: index, %ub: index, %step: index) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    scf.for %i = %lb to %ub step %step {
      quack.cluster.wait
      // expected-error @+1 {{waits in a loop for a parity that is not carried by the loop}}
      %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
      quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
      quack.cluster.arrive
    }
    quack.cluster.wait
    gpu.return
  }
}

// -----

// Rule 3: in a loop, a carried parity that is never flipped.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32, %lb: index, %ub: index, %step: index) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    %p = scf.for %i = %lb to %ub step %step iter_args(%parity = %c0) -> (i32) {
      quack.cluster.wait
      // expected-error @+1 {{the loop-carried parity is not flipped (arith.xori with 1) every iteration}}
      %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %parity from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
      quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
      quack.cluster.arrive
      scf.yield %parity : i32
    }
    quack.cluster.wait
    gpu.return
  }
}

// -----

// Rule 3: in a loop, a carried parity that starts at the wrong phase.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32, %lb: index, %ub: index, %step: index) kernel {
    %c1 = arith.constant 1 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    %p = scf.for %i = %lb to %ub step %step iter_args(%parity = %c1) -> (i32) {
      quack.cluster.wait
      // expected-error @+1 {{the loop-carried parity starts at 1, but the mbarrier at offset 0 enters the loop in phase 0}}
      %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %parity from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
      quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
      quack.cluster.arrive
      %next = arith.xori %parity, %c1 : i32
      scf.yield %next : i32
    }
    quack.cluster.wait
    gpu.return
  }
}

// -----

// Rule 3: a loop iteration that forgets to re-arm: the second iteration's
// exchange finds no armed phase.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32, %lb: index, %ub: index, %step: index) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    %p = scf.for %i = %lb to %ub step %step iter_args(%parity = %c0) -> (i32) {
      quack.cluster.wait
      // expected-error @+1 {{the mbarrier at offset 0 has no armed phase}}
      %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %parity from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
      quack.cluster.arrive
      %next = arith.xori %parity, %c1 : i32
      scf.yield %next : i32
    }
    quack.cluster.wait
    gpu.return
  }
}

// -----

// Rule 4: the slots are reused without a cluster barrier after the reads:
// a fast peer overwrites a partial this CTA has not read yet.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
    // expected-error @+1 {{peers may overwrite slots [8, 16) before this CTA has read the values an earlier exchange left in [8, 16)}}
    %b = quack.cluster.exchange @smem barrier 0 slots 8 parity %c1 from %src (%a) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

// Rule 4: a relaxed arrive does not release the reads.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32, %lb: index, %ub: index, %step: index) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    %p = scf.for %i = %lb to %ub step %step iter_args(%parity = %c0) -> (i32) {
      quack.cluster.wait
      // expected-error @+1 {{peers may overwrite slots [8, 16) before this CTA has read the values an earlier exchange left in [8, 16)}}
      %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %parity from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
      quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
      quack.cluster.arrive relaxed
      %next = arith.xori %parity, %c1 : i32
      scf.yield %next : i32
    }
    quack.cluster.wait
    gpu.return
  }
}

// -----

// Rule 5: an exchange that some CTAs skip.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32, %cond: i1) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    scf.if %cond {
      // expected-error @+1 {{is executed conditionally (inside 'scf.if'): every thread of every CTA of the cluster must execute it}}
      %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    }
    gpu.return
  }
}

// -----

// Rule 5: a kernel that returns with its arrive unmatched.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    quack.cluster.arrive
    // expected-error @+1 {{returns with a quack.cluster.arrive that no quack.cluster.wait matched}}
    gpu.return
  }
}

// -----

// Rule 5: arrives and waits alternate.
gpu.module @k {
  gpu.func @f() kernel {
    quack.cluster.arrive
    // expected-error @+1 {{arrives on the cluster barrier again before a quack.cluster.wait matched the previous arrive}}
    quack.cluster.arrive
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f() kernel {
    // expected-error @+1 {{waits on the cluster barrier without a quack.cluster.arrive to match}}
    quack.cluster.wait
    gpu.return
  }
}

// -----

// A loop is followed twice: an mbarrier initialised in its body is
// initialised again by the second iteration.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%lb: index, %ub: index, %step: index) kernel {
    scf.for %i = %lb to %ub step %step {
      // expected-error @+1 {{initialises the mbarrier at offset 0 again}}
      quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    }
    gpu.return
  }
}

// -----

// Slots over another mbarrier: the peers' stores would land on it.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0, 8] expect_tx [16, 16]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    // expected-error @+1 {{slots [8, 24) overlap the mbarrier at offset 8}}
    %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %c0 from %src (%v) {cluster_size = 4 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

// Rule 4 across mbarriers: two rounds through the same slots with no
// cluster barrier between them.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    quack.cluster.barrier_init @smem barriers [0, 8] expect_tx [8, 8]
    quack.cluster.arrive relaxed
    quack.cluster.wait
    %a = quack.cluster.exchange @smem barrier 0 slots 16 parity %c0 from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    // expected-error @+1 {{peers may overwrite slots [16, 24) before this CTA has read the values an earlier exchange left in [16, 24)}}
    %b = quack.cluster.exchange @smem barrier 8 slots 16 parity %c0 from %src (%a) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

// Cluster ops belong to a kernel.
gpu.module @k {
  // expected-error @+1 {{is outside any function}}
  quack.cluster.arrive
}

// -----

// Deep loop nests are not followed (each body is followed twice).
gpu.module @k {
  gpu.func @f(%lb: index, %ub: index, %step: index) kernel {
    scf.for %i = %lb to %ub step %step {
      scf.for %j = %lb to %ub step %step {
        scf.for %k = %lb to %ub step %step {
          scf.for %l = %lb to %ub step %step {
            // expected-error @+1 {{holds cluster exchange ops 5 loops deep}}
            scf.for %m = %lb to %ub step %step {
              quack.cluster.arrive
              quack.cluster.wait
            }
          }
        }
      }
    }
    gpu.return
  }
}

// -----

// Rule 3: after a loop the phase is not known, so a straight-line exchange
// cannot name its parity.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32, %lb: index, %ub: index, %step: index) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    %p = scf.for %i = %lb to %ub step %step iter_args(%parity = %c0) -> (i32) {
      quack.cluster.wait
      %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %parity from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
      quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
      quack.cluster.arrive
      %next = arith.xori %parity, %c1 : i32
      scf.yield %next : i32
    }
    quack.cluster.wait
    // expected-error @+1 {{the phase of the mbarrier at offset 0 is not known here}}
    %b = quack.cluster.exchange @smem barrier 0 slots 8 parity %p from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
    gpu.return
  }
}

// -----

// Rule 3: two phases of one mbarrier per iteration; one loop-carried parity
// cannot follow them.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%v: f32, %src: i32, %lb: index, %ub: index, %step: index) kernel {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    quack.cluster.barrier_init @smem barriers [0] expect_tx [8]
    quack.cluster.arrive relaxed
    %p = scf.for %i = %lb to %ub step %step iter_args(%parity = %c0) -> (i32) {
      quack.cluster.wait
      // expected-error @+1 {{exchanges through the mbarrier at offset 0 2 times per loop iteration}}
      %a = quack.cluster.exchange @smem barrier 0 slots 8 parity %parity from %src (%v) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
      quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
      quack.cluster.arrive
      quack.cluster.wait
      %b = quack.cluster.exchange @smem barrier 0 slots 8 parity %parity from %src (%a) {cluster_size = 2 : i64, cta_threads = 128 : i64} : f32
      quack.cluster.barrier_arm @smem barriers [0] expect_tx [8]
      quack.cluster.arrive
      %next = arith.xori %parity, %c1 : i32
      scf.yield %next : i32
    }
    quack.cluster.wait
    gpu.return
  }
}

// -----

// Unstructured control flow is not followed.
// expected-error @+1 {{has cluster exchange ops and several blocks}}
func.func @f(%c: i1) {
  cf.cond_br %c, ^a, ^b
^a:
  quack.cluster.arrive
  cf.br ^b
^b:
  return
}
