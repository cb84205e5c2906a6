// RUN: quack-opt %s --quack-to-nvvm-pipeline | FileCheck %s
// RUN: quack-opt %s --quack-to-nvvm-pipeline="threads-per-row=32 rows-per-cta=4" | FileCheck %s --check-prefix=FORCED

// The whole pipeline ends in the LLVM and NVVM dialects only: a kernel
// llvm.func with its launch bounds, no libdevice call, nothing left of quack,
// arith, scf, vector or math.
// CHECK-LABEL: gpu.module @softmax
// CHECK: llvm.func @softmax(%{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK-NOT: __nv_
// CHECK-NOT: quack.load
// CHECK-NOT: arith.
// CHECK-NOT: scf.
// CHECK-NOT: math.
// CHECK: nvvm.shfl.sync
// CHECK: nvvm.barrier
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: llvm.return
// FORCED: nvvm.maxntid = array<i32: 128, 1, 1>
// FORCED-NOT: nvvm.barrier
quack.kernel @softmax(%x: memref<?x2048xf32> {quack.name = "x"},
                      %y: memref<?x2048xf32> {quack.name = "y", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x2048xf32> -> vector<2048xf32>
  %m = quack.reduce <max> %xr : vector<2048xf32> -> f32
  %mb = vector.broadcast %m : f32 to vector<2048xf32>
  %d = arith.subf %xr, %mb : vector<2048xf32>
  %e = math.exp %d : vector<2048xf32>
  %s = quack.reduce <add> %e : vector<2048xf32> -> f32
  %sb = vector.broadcast %s : f32 to vector<2048xf32>
  %y0 = arith.divf %e, %sb : vector<2048xf32>
  quack.store %y0, %y : vector<2048xf32>, memref<?x2048xf32>
  quack.return
}
