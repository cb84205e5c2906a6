// RUN: quack-opt %s --allow-unregistered-dialect --convert-quack-copy-to-nvvm | FileCheck %s

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>

  // CHECK-LABEL: gpu.func @vector(
  // CHECK-SAME: %[[G:[^:]*]]: !llvm.ptr<1>, %[[S:[^:]*]]: !llvm.ptr<3>, %[[P:[^:]*]]: i1)
  gpu.func @vector(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %p: i1) kernel {
    // A predicated load: the load where the predicate holds, zeros elsewhere.
    // CHECK: %[[V:.*]] = scf.if %[[P]] -> (vector<8xbf16>) {
    // CHECK-NEXT: %[[L:.*]] = llvm.load %[[G]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
    // CHECK-NEXT: scf.yield %[[L]]
    // CHECK-NEXT: } else {
    // CHECK-NEXT: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<8xbf16>
    // CHECK-NEXT: scf.yield %[[Z]]
    %v = quack.copy <vector> %g if %p {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    // An unpredicated store: the store alone.
    // CHECK: llvm.store %[[V]], %[[S]] {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
    quack.copy <vector> %v, %s {alignment = 16 : i64} : (vector<8xbf16>, !llvm.ptr<3>) -> ()
    // A predicated store: inside an scf.if without else.
    // CHECK: scf.if %[[P]] {
    // CHECK-NEXT: llvm.store %[[V]], %[[G]] {alignment = 8 : i64} : vector<8xbf16>, !llvm.ptr<1>
    // CHECK-NEXT: }
    quack.copy <vector> %v, %g if %p {alignment = 8 : i64} : (vector<8xbf16>, !llvm.ptr<1>) -> ()
    // An unpredicated load.
    // CHECK: %[[W:.*]] = llvm.load %[[S]] {alignment = 4 : i64} : !llvm.ptr<3> -> vector<4xf32>
    // CHECK: "test.use"(%[[W]])
    %w = quack.copy <vector> %s {alignment = 4 : i64} : (!llvm.ptr<3>) -> vector<4xf32>
    "test.use"(%w) : (vector<4xf32>) -> ()
    gpu.return
  }

  // The staging protocol: thread 0 initialises both mbarriers and fences
  // the inits, then a CTA barrier; a fill is thread 0's async-proxy fence,
  // its arm and its copies; a wait is a try_wait loop on the parity.
  // CHECK-LABEL: gpu.func @async(
  // CHECK-SAME: %[[G:[^:]*]]: !llvm.ptr<1>, %[[S:[^:]*]]: !llvm.ptr<3>, %[[MAP:[^:]*]]: !llvm.ptr, %[[N:[^:]*]]: i32, %[[P:[^:]*]]: i1, %[[OFF:[^:]*]]: i64, %[[PAR:[^:]*]]: i32)
  gpu.func @async(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32, %p: i1, %off: i64, %parity: i32) kernel {
    // CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
    // CHECK: %[[T0:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : i32
    // CHECK: scf.if %[[T0]] {
    // CHECK: %[[BASE:.*]] = llvm.mlir.addressof @bulk : !llvm.ptr<3>
    // CHECK: %[[B0:.*]] = llvm.getelementptr %[[BASE]][%c0_i64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.mbarrier.init %[[B0]], %c1_i32
    // CHECK: %[[B8:.*]] = llvm.getelementptr %{{.*}}[%c8_i64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.mbarrier.init %[[B8]], %c1_i32
    // CHECK: nvvm.fence.mbarrier.init
    // CHECK: }
    // CHECK: gpu.barrier
    quack.stage.init @bulk barriers [0, 8]
    // CHECK: %[[TID2:.*]] = nvvm.read.ptx.sreg.tid.x : i32
    // CHECK: %[[T1:.*]] = arith.cmpi eq, %[[TID2]], %{{.*}} : i32
    // CHECK: scf.if %[[T1]] {
    // CHECK-NEXT: llvm.inline_asm has_side_effects "fence.proxy.async.shared::cta;"
    // CHECK: %[[BAR:.*]] = llvm.getelementptr %{{.*}}[%[[OFF]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.mbarrier.arrive.expect_tx %[[BAR]], %[[N]] : !llvm.ptr<3>, i32
    // CHECK: %[[D:.*]] = llvm.ptrtoint %[[S]] : !llvm.ptr<3> to i32
    // CHECK: %[[SRC:.*]] = llvm.ptrtoint %[[G]] : !llvm.ptr<1> to i64
    // CHECK: %[[BI:.*]] = llvm.ptrtoint %[[BAR]] : !llvm.ptr<3> to i32
    // CHECK: llvm.inline_asm has_side_effects "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];", "r,l,r,r,~{memory}" %[[D]], %[[SRC]], %[[N]], %[[BI]]
    // CHECK: scf.if %[[P]] {
    // CHECK: %[[M:.*]] = llvm.ptrtoint %[[MAP]] : !llvm.ptr to i64
    // CHECK: llvm.inline_asm has_side_effects "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];", "r,l,r,r,r,r,~{memory}" %{{.*}}, %[[M]], %[[N]], %[[N]], %[[N]], %{{.*}}
    // CHECK-NEXT: }
    // CHECK-NEXT: }
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      quack.copy <bulk> %s, %g, %n, %bar : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
      quack.copy <tensor> %s, %map, %n, %n, %n, %bar if %p : (!llvm.ptr<3>, !llvm.ptr, i32, i32, i32, !llvm.ptr<3>) -> ()
    }
    // CHECK: %[[WB:.*]] = llvm.getelementptr %{{.*}}[%[[OFF]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    // CHECK: nvvm.mbarrier.try_wait.parity %[[WB]], %[[PAR]]
    quack.stage.wait @bulk barrier %off parity %parity
    gpu.return
  }
}
