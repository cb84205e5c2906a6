// RUN: quack-opt %s --split-input-file --quack-select-config=copy=1 --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-allreduce-to-nvvm --convert-quack-copy-to-nvvm | FileCheck %s
// RUN: quack-opt %s --split-input-file --quack-select-config=copy=1 --convert-quack-to-gpu | FileCheck %s --check-prefix=OP

// copy=bulk on the CTA-level path (bf16, N = 1024: two rows of 64 threads
// per CTA). The buffers live in dynamic shared memory (a declaration of no
// size; the bytes are the function's quack.dynamic_shared_bytes: 128 for
// the mbarrier, then one buffer of two rows of 2048 bytes). Thread 0
// initialises the mbarrier, expects the bytes of the rows inside M, and
// copies each such row with one cp.async.bulk; every thread waits for
// phase 0 and reads its vectors from the buffer, zero past M.
// Before lowering (OP): the staging protocol's ops, each row's slice one
// quack.copy with the bulk atom in the fill, completing on its mbarrier.
// OP-LABEL: gpu.module @scale
// OP: quack.stage.init @__quack_bulk_scale barriers [0]
// OP: quack.stage.fill @__quack_bulk_scale barrier %{{.*}} bytes %{{.*}} {
// OP-NEXT: ^bb0(%[[BAR:.*]]: !llvm.ptr<3>):
// OP: quack.copy <bulk> %{{.*}}, %{{.*}}, %{{.*}}, %[[BAR]] : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
// OP: quack.copy <bulk> %{{.*}}, %{{.*}}, %{{.*}}, %[[BAR]]
// OP: quack.stage.wait @__quack_bulk_scale barrier %{{.*}} parity %{{.*}}
// CHECK-LABEL: gpu.module @scale
// CHECK: llvm.mlir.global external @__quack_bulk_scale() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// CHECK: gpu.func @scale(
// CHECK-SAME: copy = "bulk"
// CHECK-SAME: quack.dynamic_shared_bytes = 4224 : i64
// quack.stage.init: thread 0 initialises the mbarrier; a CTA barrier.
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %{{.*}} : i32
// CHECK: scf.if %[[FIRST]] {
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// The bytes of the rows inside M, then quack.stage.fill: in thread 0, the
// async-proxy fence, the arm, the copies.
// CHECK: %[[R0:.*]] = arith.cmpi slt, %{{.*}}, %arg0 : i64
// CHECK: %[[B0:.*]] = arith.select %[[R0]], %{{.*}}, %{{.*}} : i64
// CHECK: %[[R1:.*]] = arith.cmpi slt, %{{.*}}, %arg0 : i64
// CHECK: %[[B1:.*]] = arith.select %[[R1]], %{{.*}}, %{{.*}} : i64
// CHECK: %[[BYTES:.*]] = arith.addi %{{.*}}, %[[B1]] : i64
// CHECK: %[[TX:.*]] = arith.trunci %[[BYTES]] : i64 to i32
// CHECK: scf.if
// CHECK-NEXT: llvm.inline_asm has_side_effects "fence.proxy.async.shared::cta;"
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %[[TX]] : !llvm.ptr<3>, i32
// CHECK: scf.if %[[R0]] {
// CHECK: llvm.inline_asm has_side_effects "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1], $2, [$3];"
// CHECK: scf.if %[[R1]] {
// CHECK: %c2176_i64
// CHECK: llvm.inline_asm has_side_effects "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %c0_i32{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// No global load of the row.
// CHECK-NOT: !llvm.ptr<1> -> vector<8xbf16>
// After the exchange, the row is read from the buffer again.
// CHECK: gpu.barrier
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
quack.kernel @scale(%x: memref<?x1024xbf16, strided<[?, 1]>>,
                    %y: memref<?x1024xbf16, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) {
  %row = quack.load %x : memref<?x1024xbf16, strided<[?, 1]>> -> vector<1024xbf16>
  %f = arith.extf %row : vector<1024xbf16> to vector<1024xf32>
  %s = quack.reduce <add> %f : vector<1024xf32> -> f32
  %b = vector.broadcast %s : f32 to vector<1024xf32>
  %g = arith.mulf %f, %b : vector<1024xf32>
  %t = arith.truncf %g : vector<1024xf32> to vector<1024xbf16>
  quack.store %t, %y : vector<1024xbf16>, memref<?x1024xbf16, strided<[?, 1]>>
  quack.return
}

// -----

// A sum over rows on the cluster path (bf16, N = 16384: 2 CTAs of 8192
// columns) with prefetch: two buffers of 16384 bytes. The first row group
// is copied into buffer 0 before the loop; iteration i (the i32 the loop
// carries) copies the next group into buffer (i + 1) % 2, the copy of this
// CTA's slice starting at column rank * 8192, waits for phase (i / 2) & 1
// of buffer i % 2, and ends with a CTA barrier before the next copy may
// overwrite what it read.
// CHECK-LABEL: gpu.module @dw
// CHECK: gpu.func @dw(
// CHECK-SAME: prefetch = true
// CHECK-SAME: quack.dynamic_shared_bytes = 32896 : i64
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: cp.async.bulk.shared::cluster.global
// CHECK: scf.for %[[G:.*]] = %{{.*}} iter_args({{.*}}, %[[IT:.*]] = %c0_i32{{.*}}, %[[PAR:.*]] = %c0_i32{{.*}}) -> (vector<8xf32>, vector<8xf32>, i32, i32)
// CHECK: %[[IT64:.*]] = arith.extui %[[IT]] : i32 to i64
// CHECK: %[[STAGE:.*]] = arith.remui %[[IT64]], %c2_i64{{.*}} : i64
// CHECK: %[[ROUND:.*]] = arith.divui %[[IT]], %c2_i32{{.*}} : i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32{{.*}} : i32
// CHECK: %[[NEXT1:.*]] = arith.addi %[[IT64]], %c1_i64{{.*}} : i64
// CHECK: %[[OTHER:.*]] = arith.remui %[[NEXT1]], %c2_i64{{.*}} : i64
// CHECK: %[[RANK64:.*]] = arith.extui %[[RANK]] : i32 to i64
// CHECK: %[[START:.*]] = arith.muli %[[RANK64]], %c8192_i64{{.*}} : i64
// CHECK: arith.muli %[[OTHER]], %c16384_i64{{.*}} : i64
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: cp.async.bulk.shared::cluster.global
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PHASE]], %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: quack.cluster.exchange
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: quack.cluster.barrier_arm
// CHECK-NEXT: gpu.barrier
// CHECK: %[[NEXT:.*]] = arith.addi %[[IT]], %c1_i32{{.*}} : i32
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[NEXT]], %{{.*}} : vector<8xf32>, vector<8xf32>, i32, i32
quack.kernel @dw(%x: memref<?x16384xbf16, strided<[?, 1]>>,
                 %dw: memref<16384xbf16> {quack.role = "output", quack.name = "dw"}) {
  %row = quack.load %x : memref<?x16384xbf16, strided<[?, 1]>> -> vector<16384xbf16>
  %f = arith.extf %row : vector<16384xbf16> to vector<16384xf32>
  %s = quack.reduce <add> %f : vector<16384xf32> -> f32
  %b = vector.broadcast %s : f32 to vector<16384xf32>
  %g = arith.mulf %f, %b : vector<16384xf32>
  quack.sum_rows %g, %dw : vector<16384xf32>, memref<16384xbf16>
  quack.return
}
