// RUN: quack-opt %s --quack-select-config --convert-quack-to-gpu | FileCheck %s

// A row divided by a per-row scalar takes one reciprocal per thread and then
// multiplies each fragment, instead of dividing every element.
// CHECK-LABEL: gpu.func @normalize
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: %[[INV:.*]] = arith.divf %cst{{.*}}, %{{.*}} : f32
// CHECK: %[[B:.*]] = vector.broadcast %[[INV]] : f32 to vector<4xf32>
// CHECK: arith.mulf %{{.*}}, %[[B]] : vector<4xf32>
// CHECK-NOT: arith.divf %{{.*}} : vector<4xf32>
// CHECK: gpu.return
quack.kernel @normalize(%x: memref<?x1024xf32> {quack.name = "x"},
                        %y: memref<?x1024xf32> {quack.name = "y", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %s = quack.reduce <add> %xr : vector<1024xf32> -> f32
  %sb = vector.broadcast %s : f32 to vector<1024xf32>
  %q = arith.divf %xr, %sb : vector<1024xf32>
  quack.store %q, %y : vector<1024xf32>, memref<?x1024xf32>
  quack.return
}
