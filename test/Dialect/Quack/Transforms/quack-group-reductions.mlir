// RUN: quack-opt %s -split-input-file --quack-group-reductions | FileCheck %s

// Two independent sums (layernorm backward's): the second one's operand
// moves before the first sum, and the sums become adjacent; the division
// that uses the first sum stays after both.
// CHECK-LABEL: quack.kernel @independent
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<1024xf32>
// CHECK-NEXT: %[[A:.*]] = quack.reduce <add> %{{.*}} : vector<1024xf32> -> f32
// CHECK-NEXT: %[[C:.*]] = quack.reduce <add> %[[P]] : vector<1024xf32> -> f32
// CHECK-NOT: quack.reduce
// CHECK: arith.divf %[[A]]
quack.kernel @independent(%x: memref<?x1024xf32> {quack.name = "x"},
                          %dy: memref<?x1024xf32> {quack.name = "dy"},
                          %o: memref<?xf32> {quack.name = "o", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %g = quack.load %dy : memref<?x1024xf32> -> vector<1024xf32>
  %a = quack.reduce <add> %g : vector<1024xf32> -> f32
  %n = arith.constant 1024.0 : f32
  %m = arith.divf %a, %n : f32
  %p = arith.mulf %xr, %g : vector<1024xf32>
  %c = quack.reduce <add> %p : vector<1024xf32> -> f32
  %r = arith.addf %m, %c : f32
  quack.store %r, %o : f32, memref<?xf32>
  quack.return
}

// -----

// A reduction of a value computed from an earlier reduction stays where it
// is (softmax's max, then the sum of exp(x - max)).
// CHECK-LABEL: quack.kernel @dependent
// CHECK: quack.reduce <max>
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: arith.subf
// CHECK-NEXT: math.exp
// CHECK-NEXT: quack.reduce <add>
quack.kernel @dependent(%x: memref<?x1024xf32> {quack.name = "x"},
                        %o: memref<?xf32> {quack.name = "o", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %m = quack.reduce <max> %xr : vector<1024xf32> -> f32
  %mb = vector.broadcast %m : f32 to vector<1024xf32>
  %d = arith.subf %xr, %mb : vector<1024xf32>
  %e = math.exp %d : vector<1024xf32>
  %s = quack.reduce <add> %e : vector<1024xf32> -> f32
  quack.store %s, %o : f32, memref<?xf32>
  quack.return
}

// -----

// A load does not move above a store: the output may alias the input.
// CHECK-LABEL: quack.kernel @store_between
// CHECK: quack.reduce
// CHECK-NEXT: quack.store
// CHECK-NEXT: quack.load %arg1
// CHECK-NEXT: quack.reduce
quack.kernel @store_between(%x: memref<?x1024xf32> {quack.name = "x"},
                            %z: memref<?x1024xf32> {quack.name = "z"},
                            %o: memref<?xf32> {quack.name = "o", quack.role = "output"},
                            %q: memref<?xf32> {quack.name = "q", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %a = quack.reduce <add> %xr : vector<1024xf32> -> f32
  quack.store %a, %o : f32, memref<?xf32>
  %zr = quack.load %z : memref<?x1024xf32> -> vector<1024xf32>
  %c = quack.reduce <add> %zr : vector<1024xf32> -> f32
  quack.store %c, %q : f32, memref<?xf32>
  quack.return
}

// -----

// A logsumexp and an independent sum share a group; a third reduction that
// depends on the sum stays after it.
// CHECK-LABEL: quack.kernel @mixed
// CHECK: quack.logsumexp
// CHECK-NEXT: quack.reduce <add>
// CHECK-NOT: quack.reduce
// CHECK: vector.broadcast
// CHECK: quack.reduce <max>
quack.kernel @mixed(%x: memref<?x1024xf32> {quack.name = "x"},
                    %o: memref<?xf32> {quack.name = "o", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %l = quack.logsumexp %xr : vector<1024xf32> -> f32
  %sq = arith.mulf %xr, %xr : vector<1024xf32>
  %s = quack.reduce <add> %sq : vector<1024xf32> -> f32
  %sb = vector.broadcast %s : f32 to vector<1024xf32>
  %t = arith.mulf %xr, %sb : vector<1024xf32>
  %mx = quack.reduce <max> %t : vector<1024xf32> -> f32
  %r0 = arith.addf %l, %s : f32
  %r = arith.addf %r0, %mx : f32
  quack.store %r, %o : f32, memref<?xf32>
  quack.return
}

// -----

// An argmax is a reduction like the others: it joins an independent sum.
// CHECK-LABEL: quack.kernel @argmax_and_sum
// CHECK: quack.argmax
// CHECK-NEXT: quack.reduce <add>
quack.kernel @argmax_and_sum(%x: memref<?x1024xf32> {quack.name = "x"},
                             %i: memref<?xi64> {quack.name = "i", quack.role = "output"},
                             %o: memref<?xf32> {quack.name = "o", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %a = quack.argmax %xr : vector<1024xf32> -> i64
  quack.store %a, %i : i64, memref<?xi64>
  %sq = arith.mulf %xr, %xr : vector<1024xf32>
  %s = quack.reduce <add> %sq : vector<1024xf32> -> f32
  quack.store %s, %o : f32, memref<?xf32>
  quack.return
}
