// RUN: quack-opt %s -split-input-file --quack-hoist-row-sums | FileCheck %s

// RMSNorm's backward: dw's product of dy and xhat, used by the sum alone,
// moves with the sum before the reduction, so that dy is not live across
// its exchange.
// CHECK-LABEL: quack.kernel @rmsnorm_bwd
// CHECK: %[[G:.*]] = arith.mulf %[[DY:.*]], %[[W:.*]] : vector<1024xf32>
// CHECK: %[[P:.*]] = arith.mulf %[[XHAT:.*]], %[[G]] : vector<1024xf32>
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[DY]], %[[XHAT]] : vector<1024xf32>
// CHECK-NEXT: quack.sum_rows %[[D]], %{{.*}}
// CHECK-NEXT: quack.reduce <add> %[[P]]
// CHECK-NOT: quack.sum_rows
// CHECK: quack.store
// CHECK-NEXT: quack.return
quack.kernel @rmsnorm_bwd(%x: memref<?x1024xf32> {quack.name = "x"},
                          %w: memref<1024xf32> {quack.name = "w"},
                          %dy: memref<?x1024xf32> {quack.name = "dy"},
                          %dx: memref<?x1024xf32> {quack.name = "dx", quack.role = "output"},
                          %dw: memref<1024xf32> {quack.name = "dw", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %dyr = quack.load %dy : memref<?x1024xf32> -> vector<1024xf32>
  %wr = quack.load %w : memref<1024xf32> -> vector<1024xf32>
  %g = arith.mulf %dyr, %wr : vector<1024xf32>
  %p = arith.mulf %xr, %g : vector<1024xf32>
  %s = quack.reduce <add> %p : vector<1024xf32> -> f32
  %sb = vector.broadcast %s : f32 to vector<1024xf32>
  %t = arith.mulf %xr, %sb : vector<1024xf32>
  %d = arith.subf %g, %t : vector<1024xf32>
  quack.store %d, %dx : vector<1024xf32>, memref<?x1024xf32>
  %q = arith.mulf %dyr, %xr : vector<1024xf32>
  quack.sum_rows %q, %dw : vector<1024xf32>, memref<1024xf32>
  quack.return
}

// -----

// A sum of a value that is itself already before the reduction (LayerNorm's
// db, the sum of dy) moves alone, and two hoisted sums keep their order.
// CHECK-LABEL: quack.kernel @two_sums
// CHECK: arith.mulf
// CHECK-NEXT: quack.sum_rows %{{.*}}, %[[DW:[^ ]*]] :
// CHECK-NEXT: quack.sum_rows %{{.*}}, %[[DB:[^ ]*]] :
// CHECK-NEXT: quack.reduce <add>
quack.kernel @two_sums(%x: memref<?x1024xf32> {quack.name = "x"},
                       %dy: memref<?x1024xf32> {quack.name = "dy"},
                       %o: memref<?xf32> {quack.name = "o", quack.role = "output"},
                       %dw: memref<1024xf32> {quack.name = "dw", quack.role = "output"},
                       %db: memref<1024xf32> {quack.name = "db", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %dyr = quack.load %dy : memref<?x1024xf32> -> vector<1024xf32>
  %s = quack.reduce <add> %xr : vector<1024xf32> -> f32
  quack.store %s, %o : f32, memref<?xf32>
  %q = arith.mulf %dyr, %xr : vector<1024xf32>
  quack.sum_rows %q, %dw : vector<1024xf32>, memref<1024xf32>
  quack.sum_rows %dyr, %db : vector<1024xf32>, memref<1024xf32>
  quack.return
}

// -----

// A sum that needs the reduction's result stays after it.
// CHECK-LABEL: quack.kernel @dependent
// CHECK: quack.reduce <add>
// CHECK: quack.sum_rows
quack.kernel @dependent(%x: memref<?x1024xf32> {quack.name = "x"},
                        %dw: memref<1024xf32> {quack.name = "dw", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %s = quack.reduce <add> %xr : vector<1024xf32> -> f32
  %sb = vector.broadcast %s : f32 to vector<1024xf32>
  %q = arith.mulf %xr, %sb : vector<1024xf32>
  quack.sum_rows %q, %dw : vector<1024xf32>, memref<1024xf32>
  quack.return
}

// -----

// A sum whose operand the rest of the row also uses after the reduction
// stays: moving the product up would keep it live across the exchange.
// CHECK-LABEL: quack.kernel @shared_operand
// CHECK: quack.reduce <add>
// CHECK: %[[Q:.*]] = arith.mulf
// CHECK-NEXT: quack.sum_rows %[[Q]]
// CHECK-NEXT: quack.store %[[Q]]
quack.kernel @shared_operand(%x: memref<?x1024xf32> {quack.name = "x"},
                             %dy: memref<?x1024xf32> {quack.name = "dy"},
                             %o: memref<?xf32> {quack.name = "o", quack.role = "output"},
                             %y: memref<?x1024xf32> {quack.name = "y", quack.role = "output"},
                             %dw: memref<1024xf32> {quack.name = "dw", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %dyr = quack.load %dy : memref<?x1024xf32> -> vector<1024xf32>
  %s = quack.reduce <add> %xr : vector<1024xf32> -> f32
  quack.store %s, %o : f32, memref<?xf32>
  %q = arith.mulf %dyr, %xr : vector<1024xf32>
  quack.sum_rows %q, %dw : vector<1024xf32>, memref<1024xf32>
  quack.store %q, %y : vector<1024xf32>, memref<?x1024xf32>
  quack.return
}

// -----

// A sum of a row loaded after a store stays: the store's output may alias
// the row it would be read from before it.
// CHECK-LABEL: quack.kernel @read_after_write
// CHECK: quack.reduce <add>
// CHECK: quack.store
// CHECK: quack.load
// CHECK-NEXT: quack.sum_rows
quack.kernel @read_after_write(%x: memref<?x1024xf32> {quack.name = "x"},
                               %dy: memref<?x1024xf32> {quack.name = "dy"},
                               %o: memref<?xf32> {quack.name = "o", quack.role = "output"},
                               %dw: memref<1024xf32> {quack.name = "dw", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %s = quack.reduce <add> %xr : vector<1024xf32> -> f32
  quack.store %s, %o : f32, memref<?xf32>
  %dyr = quack.load %dy : memref<?x1024xf32> -> vector<1024xf32>
  quack.sum_rows %dyr, %dw : vector<1024xf32>, memref<1024xf32>
  quack.return
}

// -----

// A sum of a row loaded after the reduction with no write in between moves
// with its load.
// CHECK-LABEL: quack.kernel @late_load
// CHECK: quack.load %{{.*}} : memref<?x1024xf32>
// CHECK: %[[DY:.*]] = quack.load
// CHECK-NEXT: quack.sum_rows %[[DY]]
// CHECK-NEXT: quack.reduce <add>
quack.kernel @late_load(%x: memref<?x1024xf32> {quack.name = "x"},
                        %dy: memref<?x1024xf32> {quack.name = "dy"},
                        %o: memref<?xf32> {quack.name = "o", quack.role = "output"},
                        %dw: memref<1024xf32> {quack.name = "dw", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %s = quack.reduce <add> %xr : vector<1024xf32> -> f32
  %dyr = quack.load %dy : memref<?x1024xf32> -> vector<1024xf32>
  quack.sum_rows %dyr, %dw : vector<1024xf32>, memref<1024xf32>
  quack.store %s, %o : f32, memref<?xf32>
  quack.return
}
