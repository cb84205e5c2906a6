// RUN: quack-opt %s -split-input-file --quack-select-config --convert-quack-to-gpu | FileCheck %s

// A one-hot (col == t for a per-row t) compares 32-bit offsets: one
// distance t - (this thread's first column) per row, -1 when it is outside
// [0, 2^31), against each lane's constant offset. A select on a per-row
// condition keeps it scalar, so LLVM and NVPTX select whole vectors.
// CHECK-LABEL: gpu.func @onehot
// CHECK: %[[D:.*]] = arith.subi %[[T:.*]], %[[C0:.*]] : i64
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[D]], %c2147483648_i64 : i64
// CHECK: %[[D32:.*]] = arith.trunci %[[D]] : i64 to i32
// CHECK: %[[SEL:.*]] = arith.select %[[IN]], %[[D32]], %c-1_i32 : i32
// CHECK: %[[SPLAT:.*]] = vector.broadcast %[[SEL]] : i32 to vector<8xi32>
// CHECK: %[[L0:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : vector<8xi32>
// CHECK: arith.cmpi eq, %[[SPLAT]], %[[L0]] : vector<8xi32>
// CHECK: %[[L1:.*]] = arith.constant dense<[512, 513, 514, 515, 516, 517, 518, 519]> : vector<8xi32>
// CHECK: arith.cmpi eq, %[[SPLAT]], %[[L1]] : vector<8xi32>
// CHECK-NOT: arith.cmpi eq, {{.*}} : vector<8xi64>
// CHECK: %[[SKIP:.*]] = arith.cmpi eq, %[[T]], %{{.*}} : i64
// CHECK: arith.select %[[SKIP]], %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.select %[[SKIP]], %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
quack.kernel @onehot(%x: memref<?x1024xbf16> {quack.name = "x"},
                     %t: memref<?xi64> {quack.name = "t"},
                     %skip_index: i64 {quack.name = "skip_index"},
                     %dx: memref<?x1024xbf16> {quack.name = "dx", quack.role = "output"}) {
  %ti = quack.load %t : memref<?xi64> -> i64
  %row = quack.load %x : memref<?x1024xbf16> -> vector<1024xbf16>
  %xf = arith.extf %row : vector<1024xbf16> to vector<1024xf32>
  %cols = quack.column : vector<1024xi64>
  %tb = vector.broadcast %ti : i64 to vector<1024xi64>
  %eq = arith.cmpi eq, %cols, %tb : vector<1024xi64>
  %one = arith.constant dense<1.0> : vector<1024xf32>
  %zero = arith.constant dense<0.0> : vector<1024xf32>
  %hot = arith.select %eq, %one, %zero : vector<1024xi1>, vector<1024xf32>
  %g = arith.subf %xf, %hot : vector<1024xf32>
  %skip = arith.cmpi eq, %ti, %skip_index : i64
  %sb = vector.broadcast %skip : i1 to vector<1024xi1>
  %d = arith.select %sb, %zero, %g : vector<1024xi1>, vector<1024xf32>
  %db = arith.truncf %d : vector<1024xf32> to vector<1024xbf16>
  quack.store %db, %dx : vector<1024xbf16>, memref<?x1024xbf16>
  quack.return
}

// -----

// The scalar on the left and `ne` work the same way; a 32-bit scalar is
// sign-extended first. Other predicates compare the columns themselves.
// CHECK-LABEL: gpu.func @not_hot
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: arith.cmpi ne, %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: arith.cmpi slt, %{{.*}}, %{{.*}} : vector<4xi32>
quack.kernel @not_hot(%t: memref<?xi32> {quack.name = "t"},
                      %y: memref<?x256xf32> {quack.name = "y", quack.role = "output"},
                      %z: memref<?x256xf32> {quack.name = "z", quack.role = "output"}) {
  %ti = quack.load %t : memref<?xi32> -> i32
  %cols = quack.column : vector<256xi32>
  %tb = vector.broadcast %ti : i32 to vector<256xi32>
  %ne = arith.cmpi ne, %tb, %cols : vector<256xi32>
  %yv = arith.uitofp %ne : vector<256xi1> to vector<256xf32>
  quack.store %yv, %y : vector<256xf32>, memref<?x256xf32>
  %lt = arith.cmpi slt, %cols, %tb : vector<256xi32>
  %zv = arith.uitofp %lt : vector<256xi1> to vector<256xf32>
  quack.store %zv, %z : vector<256xf32>, memref<?x256xf32>
  quack.return
}
