// RUN: quack-opt %s --convert-quack-cluster-to-nvvm | FileCheck %s

// The exchange between the CTAs of a cluster of 4, two values per CTA.
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<56 x i8>
  // CHECK-LABEL: gpu.func @exchange(
  // CHECK-SAME: %[[A:[^:]*]]: f32, %[[B:[^:]*]]: i32, %[[SRC:[^:]*]]: i32, %[[PARITY:[^:]*]]: i32)
  gpu.func @exchange(%a: f32, %b: i32, %src: i32, %parity: i32) kernel {
    // Thread 0 initialises both mbarriers (arrival count 1) and fences the
    // inits for the cluster; a warp barrier; thread 0 arms phase 0.
    // CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
    // CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0_i32
    // CHECK: scf.if %[[FIRST]] {
    // CHECK: %[[BASE:.*]] = llvm.mlir.addressof @smem : !llvm.ptr<3>
    // CHECK: %[[BAR0:.*]] = llvm.getelementptr %[[BASE]][%c0_i32{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.mbarrier.init %[[BAR0]], %c1_i32
    // CHECK: %[[BAR8:.*]] = llvm.getelementptr %{{.*}}[%c8_i32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.mbarrier.init %[[BAR8]], %c1_i32
    // CHECK: nvvm.fence.mbarrier.init
    // CHECK: }
    // CHECK: nvvm.bar.warp.sync %c-1_i32
    // CHECK: scf.if
    // CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32_i32
    // CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16_i32
    // CHECK: }
    quack.cluster.barrier_init @smem barriers [0, 8] expect_tx [32, 16]
    // CHECK: nvvm.cluster.arrive.relaxed {aligned}
    quack.cluster.arrive relaxed
    // CHECK: nvvm.cluster.wait {aligned}
    quack.cluster.wait
    // Threads 0-3 send to peers 0-3: each value at its slot [rank][j] (byte
    // 16 on) in the peer, mapped with mapa, completing on the peer's
    // mbarrier.
    // CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
    // CHECK: %[[ROW:.*]] = arith.muli %[[RANK]], %c2_i32
    // CHECK: %[[MINE:.*]] = arith.addi %[[ROW]], %c4_i32
    // CHECK: %[[S0:.*]] = arith.cmpi ult, %[[PEER0:[^,]*]], %c4_i32
    // CHECK: scf.if %[[S0]] {
    // CHECK: %[[PBAR:.*]] = nvvm.mapa %{{.*}}, %[[PEER0]] : !llvm.ptr<3> -> !llvm.ptr<7>
    // CHECK: %[[J0:.*]] = arith.addi %[[MINE]], %c0_i32
    // CHECK: %[[SLOT0:.*]] = llvm.getelementptr %{{.*}}[%[[J0]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
    // CHECK: %[[R0:.*]] = nvvm.mapa %[[SLOT0]], %[[PEER0]]
    // CHECK: %[[ABITS:.*]] = arith.bitcast %[[A]] : f32 to i32
    // CHECK: llvm.inline_asm has_side_effects "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [$0], $1, [$2];", "l,r,l,~{memory}" %{{.*}}, %[[ABITS]], %{{.*}}
    // CHECK: llvm.getelementptr %{{.*}} : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
    // CHECK: llvm.inline_asm has_side_effects "st.async{{.*}}" %{{.*}}, %[[B]], %{{.*}}
    // CHECK: }
    // CHECK-NOT: st.async
    // Every thread waits for the phase, then reads rank SRC's two values.
    // CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PARITY]], %{{.*}} : !llvm.ptr<3>, i32, i32
    // CHECK: %[[SROW:.*]] = arith.muli %[[SRC]], %c2_i32
    // CHECK: %[[SBASE:.*]] = arith.addi %[[SROW]], %c4_i32
    // CHECK: arith.addi %[[SBASE]], %c0_i32
    // CHECK: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
    // CHECK: %[[X:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
    // CHECK: %[[Y:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32
    %r:2 = quack.cluster.exchange @smem barrier 0 slots 16 parity %parity from %src (%a, %b) {cluster_size = 4 : i64, cta_threads = 4 : i64} : f32, i32
    // CHECK: nvvm.cluster.arrive {aligned}
    quack.cluster.arrive
    // Re-arming is thread 0's expect_tx alone, without a new init.
    // CHECK: scf.if
    // CHECK-NOT: nvvm.mbarrier.init
    // CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32_i32
    // CHECK: }
    quack.cluster.barrier_arm @smem barriers [0] expect_tx [32]
    // CHECK: nvvm.cluster.wait {aligned}
    quack.cluster.wait
    // CHECK: %[[SUM:.*]] = arith.addf %[[X]], %[[X]]
    %s = arith.addf %r#0, %r#0 : f32
    // CHECK-NOT: quack.cluster
    // CHECK: gpu.return
    gpu.return
  }
}
