// RUN: quack-opt %s --quack-select-config="threads-per-row=2" --convert-quack-to-gpu | FileCheck %s

// N = 7: one element per access, 2 threads per row (forced), 64 rows per CTA. The
// vectors past N are predicated off and replaced by the identity (-inf for
// max) before the reduction; the row fits in one warp, so there is no
// shared memory and no barrier.
// CHECK-LABEL: gpu.module @rowmax
// CHECK-NOT: llvm.mlir.global
// CHECK: gpu.func @rowmax
// CHECK: arith.cmpi ult, %{{.*}}, %c7_i64 : i64
// CHECK: vector.reduction <maximumf>
// CHECK: arith.select %{{.*}}, %{{.*}}, %cst{{.*}} : f32
// CHECK: quack.allreduce warp lanes 2 [max] (%{{.*}}) : f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
quack.kernel @rowmax(%x: memref<?x7xf16> {quack.name = "x"},
                     %m: memref<?xf32> {quack.name = "m", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x7xf16> -> vector<7xf16>
  %xf = arith.extf %xr : vector<7xf16> to vector<7xf32>
  %v = quack.reduce <max> %xf : vector<7xf32> -> f32
  quack.store %v, %m : f32, memref<?xf32>
  quack.return
}
