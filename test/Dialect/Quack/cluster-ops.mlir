// RUN: quack-opt %s | quack-opt | FileCheck %s
// RUN: quack-opt %s --mlir-print-op-generic | quack-opt | FileCheck %s

// The cluster exchange ops round-trip, inside the gpu.func of a kernel whose
// rows span a cluster of 4 CTAs.

// CHECK-LABEL: gpu.module @k
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<56 x i8>
  // CHECK: gpu.func @exchange(%[[A:.*]]: f32, %[[B:.*]]: i32, %[[SRC:.*]]: i32)
  gpu.func @exchange(%a: f32, %b: i32, %src: i32) kernel {
    %c0 = arith.constant 0 : i32
    // CHECK: quack.cluster.barrier_init @smem barriers [0, 8] expect_tx [32, 16]
    quack.cluster.barrier_init @smem barriers [0, 8] expect_tx [32, 16]
    // CHECK: quack.cluster.arrive relaxed
    quack.cluster.arrive relaxed
    // CHECK: quack.cluster.wait
    quack.cluster.wait
    // CHECK: %{{.*}}:2 = quack.cluster.exchange @smem barrier 0 slots 16 parity %{{.*}} from %[[SRC]] (%[[A]], %[[B]]) {cluster_size = 4 : i64, cta_threads = 256 : i64} : f32, i32
    %r:2 = quack.cluster.exchange @smem barrier 0 slots 16 parity %c0 from %src (%a, %b) {cluster_size = 4 : i64, cta_threads = 256 : i64} : f32, i32
    // CHECK: quack.cluster.arrive{{$}}
    quack.cluster.arrive
    // CHECK: quack.cluster.barrier_arm @smem barriers [0] expect_tx [32]
    quack.cluster.barrier_arm @smem barriers [0] expect_tx [32]
    quack.cluster.wait
    gpu.return
  }
}
