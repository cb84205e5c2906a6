// RUN: quack-opt %s | quack-opt | FileCheck %s
// RUN: quack-opt %s --mlir-print-op-generic | quack-opt | FileCheck %s

// CHECK-LABEL: quack.kernel @rmsnorm_fwd(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x64xbf16, strided<[?, 1]>> {quack.name = "x", quack.role = "input"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<64xbf16>
// CHECK-SAME: %[[EPS:[a-z0-9]+]]: f32
// CHECK-SAME: %[[RSTD:[a-z0-9]+]]: memref<?xf32> {quack.name = "rstd", quack.role = "output"}
quack.kernel @rmsnorm_fwd(%x: memref<?x64xbf16, strided<[?, 1]>> {quack.name = "x", quack.role = "input"},
                          %w: memref<64xbf16>, %eps: f32,
                          %y: memref<?x64xbf16, strided<[?, 1]>> {quack.role = "output"},
                          %rstd: memref<?xf32> {quack.name = "rstd", quack.role = "output"}) {
  // CHECK: %[[ROW:[a-z0-9]+]] = quack.load %[[X]] : memref<?x64xbf16, strided<[?, 1]>> -> vector<64xbf16>
  %row = quack.load %x : memref<?x64xbf16, strided<[?, 1]>> -> vector<64xbf16>
  %f = arith.extf %row : vector<64xbf16> to vector<64xf32>
  %sq = arith.mulf %f, %f : vector<64xf32>
  // CHECK: quack.reduce <add> %{{.*}} : vector<64xf32> -> f32
  %s = quack.reduce <add> %sq : vector<64xf32> -> f32
  // CHECK: quack.reduce <max> %{{.*}} : vector<64xf32> -> f32
  %m = quack.reduce <max> %f : vector<64xf32> -> f32
  // CHECK: quack.reduce <min>
  %n = quack.reduce <min> %f : vector<64xf32> -> f32
  %r = math.rsqrt %s : f32
  %wr = quack.load %w : memref<64xbf16> -> vector<64xbf16>
  // CHECK: quack.store %{{.*}}, %[[RSTD]] : f32, memref<?xf32>
  quack.store %r, %rstd : f32, memref<?xf32>
  quack.store %row, %y : vector<64xbf16>, memref<?x64xbf16, strided<[?, 1]>>
  // CHECK: quack.return
  quack.return
}

// A matrix may also use the identity layout (rows packed at stride N).
// CHECK-LABEL: quack.kernel @packed
quack.kernel @packed(%x: memref<?x8xf32>, %ids: memref<?xi64>) {
  %t = quack.load %ids : memref<?xi64> -> i64
  quack.return
}
