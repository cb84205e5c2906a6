// RUN: quack-opt %s -split-input-file --quack-fuse-moments | FileCheck %s

// LayerNorm's statistics: the sum of the row, its mean, the centred row and
// the sum of its squares become one quack.moments where the first sum was;
// the centred row stays for its other use.
// CHECK-LABEL: quack.kernel @layernorm
// CHECK: %[[X:.*]] = quack.load
// CHECK-NEXT: %[[S:[^,]*]], %[[M2:.*]] = quack.moments %[[X]] : vector<1024xf32> -> f32, f32
// CHECK-NOT: quack.reduce
// CHECK: %[[MU:.*]] = arith.divf %[[S]], %{{.*}} : f32
// CHECK: %[[B:.*]] = vector.broadcast %[[MU]]
// CHECK: %[[D:.*]] = arith.subf %[[X]], %[[B]]
// CHECK-NOT: arith.mulf %[[D]], %[[D]]
// CHECK: arith.divf %[[M2]], %{{.*}} : f32
// CHECK: quack.store %[[D]]
// CHECK: quack.store %[[MU]]
quack.kernel @layernorm(%x: memref<?x1024xf32> {quack.name = "x"},
                        %y: memref<?x1024xf32> {quack.name = "y", quack.role = "output"},
                        %mean: memref<?xf32> {quack.name = "mean", quack.role = "output"},
                        %var: memref<?xf32> {quack.name = "var", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %s = quack.reduce <add> %xr : vector<1024xf32> -> f32
  %n = arith.constant 1024.0 : f32
  %mu = arith.divf %s, %n : f32
  %b = vector.broadcast %mu : f32 to vector<1024xf32>
  %d = arith.subf %xr, %b : vector<1024xf32>
  %sq = arith.mulf %d, %d : vector<1024xf32>
  %q = quack.reduce <add> %sq : vector<1024xf32> -> f32
  %n2 = arith.constant 1024.0 : f32
  %v = arith.divf %q, %n2 : f32
  quack.store %d, %y : vector<1024xf32>, memref<?x1024xf32>
  quack.store %mu, %mean : f32, memref<?xf32>
  quack.store %v, %var : f32, memref<?xf32>
  quack.return
}

// -----

// The mean subtracted from the other side (mean - x) squares the same.
// CHECK-LABEL: quack.kernel @reversed
// CHECK: quack.moments
// CHECK-NOT: quack.reduce
quack.kernel @reversed(%x: memref<?x64xf32> {quack.name = "x"},
                       %var: memref<?xf32> {quack.name = "var", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x64xf32> -> vector<64xf32>
  %s = quack.reduce <add> %xr : vector<64xf32> -> f32
  %n = arith.constant 64.0 : f32
  %mu = arith.divf %s, %n : f32
  %b = vector.broadcast %mu : f32 to vector<64xf32>
  %d = arith.subf %b, %xr : vector<64xf32>
  %sq = arith.mulf %d, %d : vector<64xf32>
  %q = quack.reduce <add> %sq : vector<64xf32> -> f32
  quack.store %q, %var : f32, memref<?xf32>
  quack.return
}

// -----

// A divisor other than N is not a mean: both reductions stay.
// CHECK-LABEL: quack.kernel @not_a_mean
// CHECK-NOT: quack.moments
// CHECK-COUNT-2: quack.reduce <add>
quack.kernel @not_a_mean(%x: memref<?x64xf32> {quack.name = "x"},
                         %var: memref<?xf32> {quack.name = "var", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x64xf32> -> vector<64xf32>
  %s = quack.reduce <add> %xr : vector<64xf32> -> f32
  %n = arith.constant 63.0 : f32
  %mu = arith.divf %s, %n : f32
  %b = vector.broadcast %mu : f32 to vector<64xf32>
  %d = arith.subf %xr, %b : vector<64xf32>
  %sq = arith.mulf %d, %d : vector<64xf32>
  %q = quack.reduce <add> %sq : vector<64xf32> -> f32
  quack.store %q, %var : f32, memref<?xf32>
  quack.return
}

// -----

// Centred on the mean of another row: both reductions stay.
// CHECK-LABEL: quack.kernel @other_row
// CHECK-NOT: quack.moments
// CHECK-COUNT-2: quack.reduce <add>
quack.kernel @other_row(%x: memref<?x64xf32> {quack.name = "x"},
                        %z: memref<?x64xf32> {quack.name = "z"},
                        %var: memref<?xf32> {quack.name = "var", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x64xf32> -> vector<64xf32>
  %zr = quack.load %z : memref<?x64xf32> -> vector<64xf32>
  %s = quack.reduce <add> %zr : vector<64xf32> -> f32
  %n = arith.constant 64.0 : f32
  %mu = arith.divf %s, %n : f32
  %b = vector.broadcast %mu : f32 to vector<64xf32>
  %d = arith.subf %xr, %b : vector<64xf32>
  %sq = arith.mulf %d, %d : vector<64xf32>
  %q = quack.reduce <add> %sq : vector<64xf32> -> f32
  quack.store %q, %var : f32, memref<?xf32>
  quack.return
}

// -----

// A product of two different centred values is not a square: both stay;
// so is the maximum of the squares.
// CHECK-LABEL: quack.kernel @not_a_square
// CHECK-NOT: quack.moments
// CHECK: quack.reduce <add>
// CHECK: quack.reduce <add>
// CHECK: quack.reduce <max>
quack.kernel @not_a_square(%x: memref<?x64xf32> {quack.name = "x"},
                           %var: memref<?xf32> {quack.name = "var", quack.role = "output"},
                           %top: memref<?xf32> {quack.name = "top", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x64xf32> -> vector<64xf32>
  %s = quack.reduce <add> %xr : vector<64xf32> -> f32
  %n = arith.constant 64.0 : f32
  %mu = arith.divf %s, %n : f32
  %b = vector.broadcast %mu : f32 to vector<64xf32>
  %d = arith.subf %xr, %b : vector<64xf32>
  %p = arith.mulf %d, %xr : vector<64xf32>
  %q = quack.reduce <add> %p : vector<64xf32> -> f32
  %sq = arith.mulf %d, %d : vector<64xf32>
  %t = quack.reduce <max> %sq : vector<64xf32> -> f32
  quack.store %q, %var : f32, memref<?xf32>
  quack.store %t, %top : f32, memref<?xf32>
  quack.return
}
