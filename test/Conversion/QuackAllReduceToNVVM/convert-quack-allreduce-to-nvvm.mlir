// RUN: quack-opt %s --allow-unregistered-dialect --convert-quack-allreduce-to-nvvm | FileCheck %s

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<256 x i8>

  // A warp of 8-lane groups: a sum and a maximum share each step's round
  // of shuffles, offsets 4, 2, 1.
  // CHECK-LABEL: gpu.func @warp(
  // CHECK-SAME: %[[X:[^:]*]]: f32, %[[I:[^:]*]]: i32)
  gpu.func @warp(%x: f32, %i: i32) kernel {
    // CHECK: %[[S4:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[X]], %c4_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}} : f32 -> f32
    // CHECK: %[[A4:.*]] = arith.addf %[[X]], %[[S4]] : f32
    // CHECK: %[[M4:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[I]], %c4_i32{{[_0-9]*}}, %c31_i32{{[_0-9]*}} : i32 -> i32
    // CHECK: %[[B4:.*]] = arith.maxsi %[[I]], %[[M4]] : i32
    // CHECK: nvvm.shfl.sync  bfly %{{.*}}, %[[A4]], %c2_i32{{[_0-9]*}}
    // CHECK: arith.addf
    // CHECK: nvvm.shfl.sync  bfly %{{.*}}, %[[B4]], %c2_i32{{[_0-9]*}}
    // CHECK: arith.maxsi
    // CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c1_i32{{[_0-9]*}}
    // CHECK: %[[SUM:.*]] = arith.addf
    // CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c1_i32{{[_0-9]*}}
    // CHECK: %[[MAX:.*]] = arith.maxsi
    // CHECK-NOT: nvvm.shfl.sync
    // CHECK: "test.use"(%[[SUM]], %[[MAX]])
    %r:2 = quack.allreduce warp lanes 8 [add, max] (%x, %i) : f32, i32
    "test.use"(%r#0, %r#1) : (f32, i32) -> ()
    gpu.return
  }

  // A logsumexp pair over 2 lanes: the maxima first, then each lane's sum
  // rescaled to the combined maximum (shifted to 0 where it is -inf), then
  // the sums.
  // CHECK-LABEL: gpu.func @online(
  // CHECK-SAME: %[[M:[^:]*]]: f32, %[[S:[^:]*]]: f32)
  gpu.func @online(%m: f32, %s: f32) kernel {
    // CHECK: %[[PM:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[M]], %c1_i32{{[_0-9]*}}
    // CHECK: %[[MAX:.*]] = arith.maximumf %[[M]], %[[PM]] : f32
    // CHECK: %[[EMPTY:.*]] = arith.cmpf oeq, %[[MAX]], %cst
    // CHECK: %[[SHIFT:.*]] = arith.select %[[EMPTY]], %{{.*}}, %[[MAX]]
    // CHECK: %[[D:.*]] = arith.subf %[[M]], %[[SHIFT]]
    // CHECK: %[[E:.*]] = math.exp %[[D]]
    // CHECK: %[[SCALED:.*]] = arith.mulf %[[S]], %[[E]]
    // CHECK: %[[PS:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[SCALED]], %c1_i32{{[_0-9]*}}
    // CHECK: %[[SUM:.*]] = arith.addf %[[SCALED]], %[[PS]]
    // CHECK: "test.use"(%[[MAX]], %[[SUM]])
    %r:2 = quack.allreduce warp lanes 2 [logsumexp] (%m, %s) : f32, f32
    "test.use"(%r#0, %r#1) : (f32, f32) -> ()
    gpu.return
  }

  // An argmax pair over 2 lanes: the partner's value and index, and the
  // better pair kept.
  // CHECK-LABEL: gpu.func @argmax(
  // CHECK-SAME: %[[V:[^:]*]]: f32, %[[J:[^:]*]]: i32)
  gpu.func @argmax(%v: f32, %j: i32) kernel {
    // CHECK: %[[W:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[V]], %c1_i32{{.*}} : f32 -> f32
    // CHECK: %[[K:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[J]], %c1_i32{{.*}} : i32 -> i32
    // CHECK: arith.cmpf ogt, %[[W]], %[[V]]
    // CHECK: arith.cmpi slt, %[[K]], %[[J]]
    // CHECK: %[[BEATS:.*]] = arith.select
    // CHECK: %[[BV:.*]] = arith.select %[[BEATS]], %[[W]], %[[V]] : f32
    // CHECK: %[[BJ:.*]] = arith.select %[[BEATS]], %[[K]], %[[J]] : i32
    // CHECK: "test.use"(%[[BV]], %[[BJ]])
    %r:2 = quack.allreduce warp lanes 2 [argmax] (%v, %j) : f32, i32
    "test.use"(%r#0, %r#1) : (f32, i32) -> ()
    gpu.return
  }

  // Two groups of 128 threads (4 warps each): a butterfly over each warp,
  // lane 0 of each warp stores into its group's slot [warp] from byte 32
  // (slot 8 + 4 * group), a barrier, lane j loads warp j mod 4's value, and
  // a butterfly over 4 lanes.
  // CHECK-LABEL: gpu.func @block(
  // CHECK-SAME: %[[Y:[^:]*]]: f32)
  gpu.func @block(%y: f32) kernel {
    // CHECK-COUNT-5: nvvm.shfl.sync  bfly
    // CHECK: %[[BASE:.*]] = llvm.mlir.addressof @smem : !llvm.ptr<3>
    // CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
    // CHECK: %[[LANE:.*]] = arith.andi %[[TID]], %c31_i32{{[_0-9]*}}
    // CHECK: %[[INGROUP:.*]] = arith.andi %[[TID]], %c127_i32{{[_0-9]*}}
    // CHECK: %[[WARP:.*]] = arith.shrui %[[INGROUP]], %c5_i32{{[_0-9]*}}
    // CHECK: %[[GROUP:.*]] = arith.shrui %[[TID]], %c7_i32{{[_0-9]*}}
    // CHECK: %[[G4:.*]] = arith.muli %[[GROUP]], %c4_i32{{[_0-9]*}}
    // CHECK: %[[GBASE:.*]] = arith.addi %[[G4]], %c8_i32{{[_0-9]*}}
    // CHECK: %[[LEAD:.*]] = arith.cmpi eq, %[[LANE]], %c0_i32{{[_0-9]*}}
    // CHECK: scf.if %[[LEAD]] {
    // CHECK: llvm.getelementptr %[[BASE]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
    // CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
    // CHECK: }
    // CHECK: gpu.barrier
    // CHECK: %[[SRC:.*]] = arith.andi %[[LANE]], %c3_i32{{[_0-9]*}}
    // CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
    // CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c2_i32{{[_0-9]*}}
    // CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c1_i32{{[_0-9]*}}
    // CHECK: %[[R:.*]] = arith.addf
    // CHECK-NOT: nvvm.shfl.sync
    // CHECK: "test.use"(%[[R]])
    %r = quack.allreduce block lanes 128 [add] (%y) scratch @smem[32] {groups = 2 : i64} : f32
    "test.use"(%r) : (f32) -> ()
    gpu.return
  }
}
