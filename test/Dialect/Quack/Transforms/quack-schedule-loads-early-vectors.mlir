// RUN: quack-opt %s -split-input-file --quack-schedule-loads=early-vectors=1 | FileCheck %s
// RUN: quack-opt %s -split-input-file --quack-schedule-loads | FileCheck %s --check-prefix=LATE

// The weight's load goes out right after the row's; its widening stays at
// the first use, past the reduction. Without early-vectors, both follow
// the reduction.
// CHECK-LABEL: quack.kernel @rmsnorm
// CHECK: %[[X:.*]] = quack.load %arg0
// CHECK-NEXT: %[[W:.*]] = quack.load %arg1
// CHECK: quack.reduce <add>
// CHECK: math.rsqrt
// CHECK: %[[WF:.*]] = arith.extf %[[W]]
// CHECK-NEXT: arith.mulf %{{.*}}, %[[WF]]
// LATE-LABEL: quack.kernel @rmsnorm
// LATE: quack.reduce <add>
// LATE: %[[W:.*]] = quack.load %arg1
// LATE-NEXT: arith.extf %[[W]]
quack.kernel @rmsnorm(%arg0: memref<?x64xbf16, strided<[?, 1]>> {quack.name = "x", quack.role = "input"},
                      %arg1: memref<64xbf16> {quack.name = "w", quack.role = "input"},
                      %arg2: f32 {quack.name = "eps", quack.role = "input"},
                      %arg3: memref<?x64xbf16, strided<[?, 1]>> {quack.name = "y", quack.role = "output"}) {
  %0 = quack.load %arg0 : memref<?x64xbf16, strided<[?, 1]>> -> vector<64xbf16>
  %1 = arith.extf %0 : vector<64xbf16> to vector<64xf32>
  %2 = arith.mulf %1, %1 : vector<64xf32>
  %3 = quack.reduce <add> %2 : vector<64xf32> -> f32
  %4 = arith.addf %3, %arg2 : f32
  %5 = math.rsqrt %4 : f32
  %6 = vector.broadcast %5 : f32 to vector<64xf32>
  %7 = arith.mulf %1, %6 : vector<64xf32>
  %8 = quack.load %arg1 : memref<64xbf16> -> vector<64xbf16>
  %9 = arith.extf %8 : vector<64xbf16> to vector<64xf32>
  %10 = arith.mulf %7, %9 : vector<64xf32>
  %11 = arith.truncf %10 : vector<64xf32> to vector<64xbf16>
  quack.store %11, %arg3 : vector<64xbf16>, memref<?x64xbf16, strided<[?, 1]>>
  quack.return
}

// -----

// Two row vectors raised to the same row load keep their order.
// CHECK-LABEL: quack.kernel @two
// CHECK: quack.load %arg0
// CHECK-NEXT: quack.load %arg1
// CHECK-NEXT: quack.load %arg2
// CHECK-NEXT: quack.reduce <add>
quack.kernel @two(%arg0: memref<?x64xf32, strided<[?, 1]>> {quack.name = "x", quack.role = "input"},
                  %arg1: memref<64xf32> {quack.name = "w", quack.role = "input"},
                  %arg2: memref<64xf32> {quack.name = "b", quack.role = "input"},
                  %arg3: memref<?x64xf32, strided<[?, 1]>> {quack.name = "y", quack.role = "output"}) {
  %0 = quack.load %arg0 : memref<?x64xf32, strided<[?, 1]>> -> vector<64xf32>
  %1 = quack.reduce <add> %0 : vector<64xf32> -> f32
  %2 = vector.broadcast %1 : f32 to vector<64xf32>
  %3 = quack.load %arg1 : memref<64xf32> -> vector<64xf32>
  %4 = arith.mulf %0, %3 : vector<64xf32>
  %5 = quack.load %arg2 : memref<64xf32> -> vector<64xf32>
  %6 = arith.addf %4, %5 : vector<64xf32>
  %7 = arith.mulf %6, %2 : vector<64xf32>
  quack.store %7, %arg3 : vector<64xf32>, memref<?x64xf32, strided<[?, 1]>>
  quack.return
}

// -----

// A store of rows (a residual sum) cannot write a weight and is passed;
// both weights go out after the last row load before them.
// CHECK-LABEL: quack.kernel @stores
// CHECK: quack.load %arg0
// CHECK-NEXT: quack.load %arg1
// CHECK-NEXT: %[[W:.*]] = quack.load %arg2
// CHECK-NEXT: %[[B:.*]] = quack.load %arg3
// CHECK: quack.store %{{.*}}, %arg4
// CHECK: quack.reduce <add>
// CHECK: arith.mulf %{{.*}}, %[[W]]
// CHECK-NEXT: arith.addf %{{.*}}, %[[B]]
quack.kernel @stores(%arg0: memref<?x64xf32, strided<[?, 1]>> {quack.name = "x", quack.role = "input"},
                     %arg1: memref<?x64xf32, strided<[?, 1]>> {quack.name = "r", quack.role = "input"},
                     %arg2: memref<64xf32> {quack.name = "w", quack.role = "input"},
                     %arg3: memref<64xf32> {quack.name = "b", quack.role = "input"},
                     %arg4: memref<?x64xf32, strided<[?, 1]>> {quack.name = "h", quack.role = "output"},
                     %arg5: memref<?x64xf32, strided<[?, 1]>> {quack.name = "y", quack.role = "output"}) {
  %0 = quack.load %arg0 : memref<?x64xf32, strided<[?, 1]>> -> vector<64xf32>
  %1 = quack.load %arg1 : memref<?x64xf32, strided<[?, 1]>> -> vector<64xf32>
  %2 = arith.addf %0, %1 : vector<64xf32>
  quack.store %2, %arg4 : vector<64xf32>, memref<?x64xf32, strided<[?, 1]>>
  %3 = quack.reduce <add> %2 : vector<64xf32> -> f32
  %4 = vector.broadcast %3 : f32 to vector<64xf32>
  %5 = quack.load %arg2 : memref<64xf32> -> vector<64xf32>
  %6 = arith.mulf %4, %5 : vector<64xf32>
  %7 = quack.load %arg3 : memref<64xf32> -> vector<64xf32>
  %8 = arith.addf %6, %7 : vector<64xf32>
  quack.store %8, %arg5 : vector<64xf32>, memref<?x64xf32, strided<[?, 1]>>
  quack.return
}
