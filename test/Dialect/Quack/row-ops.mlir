// RUN: quack-opt %s | quack-opt | FileCheck %s

// CHECK-LABEL: quack.kernel @ce
quack.kernel @ce(%x: memref<?x64xbf16, strided<[?, 1]>>, %t: memref<?xi64>,
                 %loss: memref<?xf32> {quack.role = "output"}) {
  %ti = quack.load %t : memref<?xi64> -> i64
  // CHECK: quack.gather %{{.*}}[%{{.*}}] : memref<?x64xbf16, strided<[?, 1]>>, i64 -> bf16
  %xt = quack.gather %x[%ti] : memref<?x64xbf16, strided<[?, 1]>>, i64 -> bf16
  %row = quack.load %x : memref<?x64xbf16, strided<[?, 1]>> -> vector<64xbf16>
  %f = arith.extf %row : vector<64xbf16> to vector<64xf32>
  // CHECK: quack.logsumexp %{{.*}} : vector<64xf32> -> f32
  %lse = quack.logsumexp %f : vector<64xf32> -> f32
  // CHECK: quack.argmax %{{.*}} : vector<64xf32> -> i64
  %am = quack.argmax %f : vector<64xf32> -> i64
  // CHECK: quack.moments %{{.*}} : vector<64xf32> -> f32, f32
  %ms:2 = quack.moments %f : vector<64xf32> -> f32, f32
  // CHECK: quack.column : vector<64xi64>
  %cols = quack.column : vector<64xi64>
  %xf = arith.extf %xt : bf16 to f32
  %l = arith.subf %lse, %xf : f32
  quack.store %l, %loss : f32, memref<?xf32>
  quack.return
}

// CHECK-LABEL: quack.kernel @grads
quack.kernel @grads(%x: memref<?x64xbf16, strided<[?, 1]>>,
                    %dw: memref<64xbf16> {quack.role = "output"}) {
  %row = quack.load %x : memref<?x64xbf16, strided<[?, 1]>> -> vector<64xbf16>
  %f = arith.extf %row : vector<64xbf16> to vector<64xf32>
  // CHECK: quack.sum_rows %{{.*}}, %{{.*}} : vector<64xf32>, memref<64xbf16>
  quack.sum_rows %f, %dw : vector<64xf32>, memref<64xbf16>
  quack.return
}
