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

  // A moments triple over 2 lanes: one shuffle per value, then Chan's
  // update: counts and sums add, the squared deviations add plus
  // (mean2 - mean1)^2 * n1 * n2 / n, zero unless both counts are positive.
  // CHECK-LABEL: gpu.func @moments(
  // CHECK-SAME: %[[N:[^:]*]]: f32, %[[S:[^:]*]]: f32, %[[M:[^:]*]]: f32)
  gpu.func @moments(%n: f32, %s: f32, %m: f32) kernel {
    // CHECK: %[[PN:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[N]], %c1_i32
    // CHECK: %[[PS:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[S]], %c1_i32
    // CHECK: %[[PM:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[M]], %c1_i32
    // CHECK: %[[CN:.*]] = arith.addf %[[N]], %[[PN]] : f32
    // CHECK: %[[CS:.*]] = arith.addf %[[S]], %[[PS]] : f32
    // CHECK: %[[MEAN1:.*]] = arith.divf %[[S]], %[[N]] fastmath<afn> : f32
    // CHECK: %[[MEAN2:.*]] = arith.divf %[[PS]], %[[PN]] fastmath<afn> : f32
    // CHECK: %[[D:.*]] = arith.subf %[[MEAN2]], %[[MEAN1]] : f32
    // CHECK: %[[NN:.*]] = arith.mulf %[[N]], %[[PN]] : f32
    // CHECK: %[[W:.*]] = arith.divf %[[NN]], %[[CN]] fastmath<afn> : f32
    // CHECK: %[[DD:.*]] = arith.mulf %[[D]], %[[D]] : f32
    // CHECK: %[[SHIFT:.*]] = arith.mulf %[[DD]], %[[W]] : f32
    // CHECK: %[[SOME1:.*]] = arith.cmpf ogt, %[[N]], %{{.*}} : f32
    // CHECK: %[[SOME2:.*]] = arith.cmpf ogt, %[[PN]], %{{.*}} : f32
    // CHECK: %[[BOTH:.*]] = arith.andi %[[SOME1]], %[[SOME2]] : i1
    // CHECK: %[[CORR:.*]] = arith.select %[[BOTH]], %[[SHIFT]], %{{.*}} : f32
    // CHECK: %[[MM:.*]] = arith.addf %[[M]], %[[PM]] : f32
    // CHECK: %[[CM:.*]] = arith.addf %[[MM]], %[[CORR]] : f32
    // CHECK-NOT: nvvm.shfl.sync
    // CHECK: "test.use"(%[[CN]], %[[CS]], %[[CM]])
    %r:3 = quack.allreduce warp lanes 2 [moments] (%n, %s, %m) : f32, f32, f32
    "test.use"(%r#0, %r#1, %r#2) : (f32, f32, f32) -> ()
    gpu.return
  }

  // A constant count (8 in every lane) is known at every step: no shuffle
  // of it, the update is (s1 + s2, m1 + m2 + (s2 - s1)^2 / (2 c)) with c =
  // 8, 16, ..., and across the two warps it stays in registers (only the
  // sum and the squared deviations go through shared memory); the result's
  // count is the constant 512.
  // CHECK-LABEL: gpu.func @fixed_count(
  // CHECK-SAME: %[[S:[^:]*]]: f32, %[[M:[^:]*]]: f32)
  gpu.func @fixed_count(%s: f32, %m: f32) kernel {
    // CHECK: %[[PS:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[S]], %c16_i32
    // CHECK: %[[PM:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[M]], %c16_i32
    // CHECK-NEXT: arith.addf %[[S]], %[[PS]] : f32
    // CHECK-NEXT: %[[D:.*]] = arith.subf %[[PS]], %[[S]] : f32
    // CHECK-NEXT: %[[DD:.*]] = arith.mulf %[[D]], %[[D]] : f32
    // CHECK-NEXT: %[[K:.*]] = arith.constant 6.250000e-02 : f32
    // CHECK-NEXT: %[[SH:.*]] = arith.mulf %[[DD]], %[[K]] : f32
    // CHECK-NEXT: %[[MM:.*]] = arith.addf %[[M]], %[[PM]] : f32
    // CHECK-NEXT: arith.addf %[[MM]], %[[SH]] : f32
    // CHECK: arith.constant 3.906250e-03 : f32
    // CHECK: scf.if
    // CHECK-COUNT-2: llvm.store
    // CHECK-NOT: llvm.store
    // CHECK: gpu.barrier
    // CHECK-COUNT-2: llvm.load
    // CHECK-NOT: llvm.load
    // CHECK: arith.constant 0.001953125 : f32
    // CHECK: %[[N:.*]] = arith.constant 5.120000e+02 : f32
    // CHECK-NEXT: "test.use"(%[[N]], %{{.*}}, %{{.*}})
    %n = arith.constant 8.0 : f32
    %r:3 = quack.allreduce block lanes 64 [moments] (%n, %s, %m) scratch @smem[0] {groups = 1 : i64} : f32, f32, f32
    "test.use"(%r#0, %r#1, %r#2) : (f32, f32, f32) -> ()
    gpu.return
  }
}
