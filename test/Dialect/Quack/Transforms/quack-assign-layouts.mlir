// RUN: quack-opt %s --split-input-file --quack-select-config="threads-per-row=2 rows-per-cta=1" --quack-assign-layouts | FileCheck %s
// RUN: quack-opt %s --split-input-file --quack-select-config="threads-per-row=2 rows-per-cta=4" --quack-assign-layouts | FileCheck %s --check-prefix=ROWS

// N = 8 f32, two threads per row, vectors of 4: thread t holds elements
// 4 t .. 4 t + 3 of the row (a tile of 1 x 8). The kernel and every op that
// produces or reads a row get the layout; the scalar reduction result and
// the return do not.
// CHECK-LABEL: quack.kernel @k
// CHECK-SAME: quack.tv_layout = #quack.tv_layout<((2,1,1),(4,1)):((4,0,0),(1,0)), tile = (1,8):(8,1)>
// CHECK: quack.load %{{.*}} {quack.tv_layout = #quack.tv_layout<((2,1,1),(4,1)):((4,0,0),(1,0)), tile = (1,8):(8,1)>}
// CHECK: quack.reduce <add> %{{.*}} {quack.tv_layout = #quack.tv_layout<((2,1,1),(4,1)):((4,0,0),(1,0)), tile = (1,8):(8,1)>}
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: vector.broadcast %{{.*}} {quack.tv_layout
// CHECK: arith.mulf %{{.*}}, %{{.*}} {quack.tv_layout
// CHECK: quack.store %{{.*}}, %{{.*}} {quack.tv_layout
// CHECK: quack.return
// CHECK-NOT: quack.tv_layout

// Four rows per CTA: a tile of 4 x 8; thread t of 8 holds row t / 2, columns
// 4 (t % 2) .. 4 (t % 2) + 3, at offset 8 (t / 2) + 4 (t % 2).
// ROWS-LABEL: quack.kernel @k
// ROWS-SAME: quack.tv_layout = #quack.tv_layout<((2,4,1),(4,1)):((4,8,0),(1,0)), tile = (4,8):(8,1)>
quack.kernel @k(%x: memref<?x8xf32, strided<[?, 1]>>,
                %y: memref<?x8xf32, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) {
  %row = quack.load %x : memref<?x8xf32, strided<[?, 1]>> -> vector<8xf32>
  %s = quack.reduce <add> %row : vector<8xf32> -> f32
  %t = arith.mulf %s, %s : f32
  %b = vector.broadcast %t : f32 to vector<8xf32>
  %g = arith.mulf %row, %b : vector<8xf32>
  quack.store %g, %y : vector<8xf32>, memref<?x8xf32, strided<[?, 1]>>
  quack.return
}
