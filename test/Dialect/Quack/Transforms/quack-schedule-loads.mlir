// RUN: quack-opt %s -split-input-file --quack-schedule-loads | FileCheck %s

// The weight (a row vector) and its widening move past the reduction to
// their first use; the matrix load and the per-row scalar stay in place.
// CHECK-LABEL: quack.kernel @rmsnorm
// CHECK: %[[X:.*]] = quack.load %arg0 : memref<?x64xbf16, strided<[?, 1]>>
// CHECK: quack.reduce <add>
// CHECK: math.rsqrt
// CHECK: %[[W:.*]] = quack.load %arg1 : memref<64xbf16>
// CHECK-NEXT: %[[WF:.*]] = arith.extf %[[W]]
// CHECK-NEXT: arith.mulf %{{.*}}, %[[WF]]
quack.kernel @rmsnorm(%arg0: memref<?x64xbf16, strided<[?, 1]>> {quack.name = "x", quack.role = "input"},
                      %arg1: memref<64xbf16> {quack.name = "w", quack.role = "input"},
                      %arg2: f32 {quack.name = "eps", quack.role = "input"},
                      %arg3: memref<?x64xbf16, strided<[?, 1]>> {quack.name = "y", quack.role = "output"}) {
  %0 = quack.load %arg0 : memref<?x64xbf16, strided<[?, 1]>> -> vector<64xbf16>
  %1 = arith.extf %0 : vector<64xbf16> to vector<64xf32>
  %2 = quack.load %arg1 : memref<64xbf16> -> vector<64xbf16>
  %3 = arith.extf %2 : vector<64xbf16> to vector<64xf32>
  %4 = arith.mulf %1, %1 : vector<64xf32>
  %5 = quack.reduce <add> %4 : vector<64xf32> -> f32
  %6 = arith.addf %5, %arg2 : f32
  %7 = math.rsqrt %6 : f32
  %8 = vector.broadcast %7 : f32 to vector<64xf32>
  %9 = arith.mulf %1, %8 : vector<64xf32>
  %10 = arith.mulf %9, %3 : vector<64xf32>
  %11 = arith.truncf %10 : vector<64xf32> to vector<64xbf16>
  quack.store %11, %arg3 : vector<64xbf16>, memref<?x64xbf16, strided<[?, 1]>>
  quack.return
}

// -----

// A weight combined with a scalar argument (Gemma's w + offset) moves as a
// whole; a value that depends on the row does not move.
// CHECK-LABEL: quack.kernel @offset
// CHECK: %[[X:.*]] = quack.load %arg0
// CHECK-NEXT: %[[S:.*]] = quack.reduce <add> %[[X]]
// CHECK-NEXT: %[[B:.*]] = vector.broadcast %[[S]]
// CHECK-NEXT: %[[XS:.*]] = arith.mulf %[[X]], %[[B]]
// CHECK-DAG: %[[W:.*]] = quack.load %arg1
// CHECK-DAG: %[[O:.*]] = vector.broadcast %arg2
// CHECK: %[[WO:.*]] = arith.addf %[[W]], %[[O]]
// CHECK-NEXT: arith.mulf %[[XS]], %[[WO]]
quack.kernel @offset(%arg0: memref<?x64xf32, strided<[?, 1]>> {quack.name = "x", quack.role = "input"},
                     %arg1: memref<64xf32> {quack.name = "w", quack.role = "input"},
                     %arg2: f32 {quack.name = "offset", quack.role = "input"},
                     %arg3: memref<?x64xf32, strided<[?, 1]>> {quack.name = "y", quack.role = "output"}) {
  %0 = quack.load %arg0 : memref<?x64xf32, strided<[?, 1]>> -> vector<64xf32>
  %1 = quack.load %arg1 : memref<64xf32> -> vector<64xf32>
  %2 = vector.broadcast %arg2 : f32 to vector<64xf32>
  %3 = arith.addf %1, %2 : vector<64xf32>
  %4 = quack.reduce <add> %0 : vector<64xf32> -> f32
  %5 = vector.broadcast %4 : f32 to vector<64xf32>
  %6 = arith.mulf %0, %5 : vector<64xf32>
  %7 = arith.mulf %6, %3 : vector<64xf32>
  quack.store %7, %arg3 : vector<64xf32>, memref<?x64xf32, strided<[?, 1]>>
  quack.return
}

// -----

// Cross-entropy: the target first, then the row, then the gathered logit
// (which waits for the target), all in flight before the logsumexp.
// CHECK-LABEL: quack.kernel @ce
// CHECK-NEXT: %[[T:.*]] = quack.load %arg1 : memref<?xi64> -> i64
// CHECK-NEXT: quack.load %arg0 : memref<?x64xbf16, strided<[?, 1]>>
// CHECK-NEXT: %[[XT:.*]] = quack.gather %arg0[%[[T]]]
// CHECK: quack.logsumexp
quack.kernel @ce(%arg0: memref<?x64xbf16, strided<[?, 1]>> {quack.name = "x", quack.role = "input"},
                 %arg1: memref<?xi64> {quack.name = "target", quack.role = "input"},
                 %arg2: memref<?xf32> {quack.name = "loss", quack.role = "output"}) {
  %0 = quack.load %arg0 : memref<?x64xbf16, strided<[?, 1]>> -> vector<64xbf16>
  %1 = arith.extf %0 : vector<64xbf16> to vector<64xf32>
  %2 = quack.logsumexp %1 : vector<64xf32> -> f32
  %3 = quack.load %arg1 : memref<?xi64> -> i64
  %4 = quack.gather %arg0[%3] : memref<?x64xbf16, strided<[?, 1]>>, i64 -> bf16
  %5 = arith.extf %4 : bf16 to f32
  %6 = arith.subf %2, %5 : f32
  quack.store %6, %arg2 : f32, memref<?xf32>
  quack.return
}

// -----

// A gather does not move past a store (the output may be the gathered
// matrix's storage): here the row load after the store stays after it.
// CHECK-LABEL: quack.kernel @ce_store_first
// CHECK-NEXT: quack.load %arg1
// CHECK-NEXT: %[[X:.*]] = quack.load %arg0
// CHECK-NEXT: quack.gather %arg0
// CHECK: quack.store
// CHECK: quack.load %arg3
quack.kernel @ce_store_first(%arg0: memref<?x64xf32, strided<[?, 1]>> {quack.name = "x", quack.role = "input"},
                             %arg1: memref<?xi64> {quack.name = "target", quack.role = "input"},
                             %arg2: memref<?x64xf32, strided<[?, 1]>> {quack.name = "y", quack.role = "output"},
                             %arg3: memref<?x64xf32, strided<[?, 1]>> {quack.name = "z", quack.role = "input"},
                             %arg4: memref<?xf32> {quack.name = "v", quack.role = "output"}) {
  %0 = quack.load %arg1 : memref<?xi64> -> i64
  %1 = quack.gather %arg0[%0] : memref<?x64xf32, strided<[?, 1]>>, i64 -> f32
  %2 = quack.load %arg0 : memref<?x64xf32, strided<[?, 1]>> -> vector<64xf32>
  quack.store %2, %arg2 : vector<64xf32>, memref<?x64xf32, strided<[?, 1]>>
  %3 = quack.load %arg3 : memref<?x64xf32, strided<[?, 1]>> -> vector<64xf32>
  %4 = quack.reduce <add> %3 : vector<64xf32> -> f32
  %5 = arith.addf %4, %1 : f32
  quack.store %5, %arg4 : f32, memref<?xf32>
  quack.return
}
