// RUN: quack-opt %s -split-input-file --quack-select-config --convert-quack-to-gpu --convert-quack-copy-to-nvvm | FileCheck %s

// CHECK-LABEL: gpu.func @ce
// A gather reads x[row, t] only when 0 <= t < N (and the row exists);
// otherwise it yields NaN without touching memory.
// CHECK: arith.cmpi sge, %{{.*}}, %c0_i64{{.*}} : i64
// CHECK: arith.cmpi slt, %{{.*}}, %c1024_i64 : i64
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: } else {
// CHECK-NEXT: arith.constant 0x7FC00000 : f32
// logsumexp: the row maximum, a shift of 0 for an all -inf row, then the
// sum of exp(x - shift) and shift + log(sum).
// CHECK: vector.reduction <maximumf>
// CHECK: arith.cmpf oeq, %{{.*}}, %cst{{.*}} : f32
// CHECK: arith.select
// CHECK: math.exp %{{.*}} : vector<4xf32>
// CHECK: vector.reduction <add>
// CHECK: math.log
// The column index of each lane: the vector's first column plus 0..3.
// CHECK: arith.constant dense<[0, 1, 2, 3]> : vector<4xi64>
// An output may alias the gathered input (in-place gradients): a barrier
// separates every gather of the CTA from the first row written.
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: gpu.return
quack.kernel @ce(%x: memref<?x1024xf32> {quack.name = "x"},
                 %t: memref<?xi64> {quack.name = "t"},
                 %loss: memref<?xf32> {quack.name = "loss", quack.role = "output"},
                 %hot: memref<?x1024xf32> {quack.name = "hot", quack.role = "output"}) {
  %ti = quack.load %t : memref<?xi64> -> i64
  %xt = quack.gather %x[%ti] : memref<?x1024xf32>, i64 -> f32
  %row = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %lse = quack.logsumexp %row : vector<1024xf32> -> f32
  %l = arith.subf %lse, %xt : f32
  quack.store %l, %loss : f32, memref<?xf32>
  %cols = quack.column : vector<1024xi64>
  %tb = vector.broadcast %ti : i64 to vector<1024xi64>
  %eq = arith.cmpi eq, %cols, %tb : vector<1024xi64>
  %h = arith.uitofp %eq : vector<1024xi1> to vector<1024xf32>
  quack.store %h, %hot : vector<1024xf32>, memref<?x1024xf32>
  quack.return
}

// -----

// A gather written after a row store moves before it (its index is known
// there), so it never reads an element the kernel has already overwritten.
// CHECK-LABEL: gpu.func @late_gather
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK: gpu.barrier
// CHECK: llvm.store %{{.*}} : vector<4xf32>, !llvm.ptr<1>
quack.kernel @late_gather(%x: memref<?x1024xf32> {quack.name = "x"},
                          %t: memref<?xi64> {quack.name = "t"},
                          %y: memref<?x1024xf32> {quack.name = "y", quack.role = "output"},
                          %v: memref<?xf32> {quack.name = "v", quack.role = "output"}) {
  %ti = quack.load %t : memref<?xi64> -> i64
  %row = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  quack.store %row, %y : vector<1024xf32>, memref<?x1024xf32>
  %xt = quack.gather %x[%ti] : memref<?x1024xf32>, i64 -> f32
  quack.store %xt, %v : f32, memref<?xf32>
  quack.return
}
