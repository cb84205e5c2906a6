// RUN: quack-opt %s --quack-select-config="copy=2 threads-per-row=128 rows-per-cta=2" --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-copy-to-nvvm | FileCheck %s

// Tensor copies where a slice takes several boxes: bf16, N = 3000 = 8 x 375,
// two rows of 128 threads x 3 vectors of 8 per CTA (a slice of 3072
// columns). The widest power of two dividing N is 8, so the map sees x as
// [M, 375, 8]; the slice's 384 groups of 8 take two boxes of 8 x 192 x 2
// elements (6144 bytes each, 128-byte aligned). Thread 0 expects 2 x 6144
// bytes and issues the boxes in a loop, box j at group 192 j landing at
// byte 128 + 6144 j. Each box holds 1536 columns of both rows, one row after
// the other, so a thread reads column c of row r at element
// ((c / 1536) * 2 + r) * 1536 + c % 1536.
// CHECK-LABEL: gpu.module @boxed
// CHECK: quack.dynamic_shared_bytes = 12416 : i64
// CHECK-SAME: quack.tensor_maps = [{box = array<i64: 8, 192, 2>, columns = 3000 : i64, dtype = "bf16", of = "arg0"}]
// CHECK: nvvm.mbarrier.init
// CHECK: gpu.barrier
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %{{.*}}, %arg0 : i64
// CHECK: arith.muli %c2_i64{{.*}}, %c6144_i64{{.*}} : i64
// CHECK: llvm.inline_asm has_side_effects "fence.proxy.async.shared::cta;"
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: scf.if %[[VALID]] {
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c2_i64{{.*}} step
// CHECK: %[[COL:.*]] = arith.muli %[[J]], %c1536_i64{{.*}} : i64
// CHECK: %[[FROM:.*]] = arith.addi %{{.*}}, %[[COL]] : i64
// CHECK: arith.divui %[[FROM]], %c8_i64{{.*}} : i64
// CHECK: arith.muli %[[COL]], %c4_i64{{.*}} : i64
// CHECK: cp.async.bulk.tensor.3d
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: arith.muli %{{.*}}, %c3072_i64{{.*}} : i64
// CHECK: %[[BOX:.*]] = arith.divui %{{.*}}, %c1536_i64{{.*}} : i64
// CHECK: %[[IN:.*]] = arith.remui %{{.*}}, %c1536_i64{{.*}} : i64
// CHECK: %[[BOXOFF:.*]] = arith.muli %[[BOX]], %c3072_i64{{.*}} : i64
// CHECK: arith.addi %[[BOXOFF]], %[[IN]] : i64
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
quack.kernel @boxed(%x: memref<?x3000xbf16, strided<[?, 1]>>,
                    %y: memref<?x3000xbf16, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) {
  %row = quack.load %x : memref<?x3000xbf16, strided<[?, 1]>> -> vector<3000xbf16>
  %f = arith.extf %row : vector<3000xbf16> to vector<3000xf32>
  %s = quack.reduce <add> %f : vector<3000xf32> -> f32
  %b = vector.broadcast %s : f32 to vector<3000xf32>
  %g = arith.mulf %f, %b : vector<3000xf32>
  %t = arith.truncf %g : vector<3000xf32> to vector<3000xbf16>
  quack.store %t, %y : vector<3000xbf16>, memref<?x3000xbf16, strided<[?, 1]>>
  quack.return
}
