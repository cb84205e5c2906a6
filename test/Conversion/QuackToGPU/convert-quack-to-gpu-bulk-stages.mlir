// RUN: quack-opt %s --quack-select-config="copy=1 stages=3" --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-copy-to-nvvm | FileCheck %s
// RUN: not quack-opt %s --quack-select-config="copy=0 stages=3" 2>&1 | FileCheck %s --check-prefix=NOBULK
// RUN: not quack-opt %s --quack-select-config="copy=1 stages=9" 2>&1 | FileCheck %s --check-prefix=RANGE

// Three bulk-copy buffers (stages=3): 128 bytes of mbarriers and three
// buffers of 16384 bytes. Row groups 0 and 1 are copied into buffers 0
// and 1 before the loop; iteration i reads buffer i % 3 in phase
// (i / 3) & 1 and copies row group i + 2 (two grids ahead) into buffer
// (i + 2) % 3.
// CHECK: gpu.func @dw(
// CHECK-SAME: stages = 3 : i64
// CHECK-SAME: quack.dynamic_shared_bytes = 49280 : i64
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.mbarrier.init
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: cp.async.bulk.shared::cluster.global
// CHECK: %[[SECOND:.*]] = arith.muli %{{.*}}, %c1_i64{{.*}} : i64
// CHECK: cp.async.bulk.shared::cluster.global
// CHECK: scf.for
// CHECK: %[[IT64:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: arith.remui %[[IT64]], %c3_i64{{.*}} : i64
// CHECK: %[[ROUND:.*]] = arith.divui %{{.*}}, %c3_i32{{.*}} : i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[ROUND]], %c1_i32{{.*}} : i32
// CHECK: %[[AHEAD:.*]] = arith.addi %[[IT64]], %c2_i64{{.*}} : i64
// CHECK: arith.remui %[[AHEAD]], %c3_i64{{.*}} : i64
// CHECK: arith.muli %{{.*}}, %c2_i64{{.*}} : i64
// CHECK: cp.async.bulk.shared::cluster.global
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PHASE]], %{{.*}} : !llvm.ptr<3>, i32, i32

// NOBULK: error: 'quack.kernel' op stages = 3 needs bulk copies in a prefetching loop (copy=bulk or copy=tensor with prefetch)
// RANGE: error: 'quack.kernel' op stages must be 2 to 8, got 9
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
