// RUN: quack-opt %s -split-input-file --quack-sink-to-uses | FileCheck %s

// After the last exchange (here a cluster wait), each fragment's chain
// (widen, scale, load of the weight, multiply, narrow) moves to just before
// its store; the broadcast shared by both chains to before the first. The
// loads of the row before the wait stay where they are.
// CHECK-LABEL: gpu.func @tail
// CHECK: %[[X0:.*]] = quack.copy <vector> %arg0
// CHECK: %[[X1:.*]] = quack.copy <vector>
// CHECK-NEXT: quack.cluster.wait
// CHECK-NEXT: %[[W0:.*]] = quack.copy <vector> %arg1
// CHECK-NEXT: %[[W0F:.*]] = arith.extf %[[W0]]
// CHECK-NEXT: %[[X0F:.*]] = arith.extf %[[X0]]
// CHECK-NEXT: %[[R:.*]] = vector.broadcast
// CHECK-NEXT: %[[S0:.*]] = arith.mulf %[[X0F]], %[[R]]
// CHECK-NEXT: %[[Y0:.*]] = arith.mulf %[[S0]], %[[W0F]]
// CHECK-NEXT: %[[T0:.*]] = arith.truncf %[[Y0]]
// CHECK-NEXT: quack.copy <vector> %[[T0]], %arg2
// CHECK: %[[W1:.*]] = quack.copy <vector>
// CHECK-NEXT: %[[W1F:.*]] = arith.extf %[[W1]]
// CHECK-NEXT: %[[X1F:.*]] = arith.extf %[[X1]]
// CHECK-NEXT: %[[S1:.*]] = arith.mulf %[[X1F]], %[[R]]
// CHECK-NEXT: %[[Y1:.*]] = arith.mulf %[[S1]], %[[W1F]]
// CHECK-NEXT: %[[T1:.*]] = arith.truncf %[[Y1]]
// CHECK-NEXT: quack.copy <vector> %[[T1]]
// CHECK-NEXT: gpu.return
gpu.module @k {
  gpu.func @tail(%x: !llvm.ptr<1>, %w: !llvm.ptr<1>, %y: !llvm.ptr<1>, %r: f32) kernel
      attributes {quack.config = {remat = true, sink = true}} {
    %c8 = arith.constant 8 : i64
    %x1 = llvm.getelementptr %x[%c8] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
    %a = quack.copy <vector> %x {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    %b = quack.copy <vector> %x1 {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    quack.cluster.wait
    %rv = vector.broadcast %r : f32 to vector<8xf32>
    %a32 = arith.extf %a : vector<8xbf16> to vector<8xf32>
    %b32 = arith.extf %b : vector<8xbf16> to vector<8xf32>
    %as = arith.mulf %a32, %rv : vector<8xf32>
    %bs = arith.mulf %b32, %rv : vector<8xf32>
    %w1 = llvm.getelementptr %w[%c8] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
    %wa = quack.copy <vector> %w {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    %wb = quack.copy <vector> %w1 {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    %wa32 = arith.extf %wa : vector<8xbf16> to vector<8xf32>
    %wb32 = arith.extf %wb : vector<8xbf16> to vector<8xf32>
    %ya = arith.mulf %as, %wa32 : vector<8xf32>
    %yb = arith.mulf %bs, %wb32 : vector<8xf32>
    %ta = arith.truncf %ya : vector<8xf32> to vector<8xbf16>
    %tb = arith.truncf %yb : vector<8xf32> to vector<8xbf16>
    %y1 = llvm.getelementptr %y[%c8] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
    quack.copy <vector> %ta, %y {alignment = 16 : i64} : (vector<8xbf16>, !llvm.ptr<1>) -> ()
    quack.copy <vector> %tb, %y1 {alignment = 16 : i64} : (vector<8xbf16>, !llvm.ptr<1>) -> ()
    gpu.return
  }
}

// -----

// Without sink the function is left as it is; loads of shared memory never
// move, not past a store to shared memory either.
// CHECK-LABEL: gpu.func @no_sink
// CHECK: arith.extf
// CHECK-NEXT: arith.extf
// CHECK-LABEL: gpu.func @shared
// CHECK: %[[S:.*]] = quack.copy <vector> %{{.*}} : (!llvm.ptr<3>) -> vector<8xbf16>
// CHECK: quack.copy <vector> %{{.*}}, %{{.*}} {{.*}}(vector<8xbf16>, !llvm.ptr<3>) -> ()
// CHECK: arith.extf %[[S]]
gpu.module @k2 {
  gpu.func @no_sink(%x: !llvm.ptr<1>, %y: !llvm.ptr<1>) kernel
      attributes {quack.config = {remat = true}} {
    %a = quack.copy <vector> %x {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    %b = quack.copy <vector> %x {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    %a32 = arith.extf %a : vector<8xbf16> to vector<8xf32>
    %b32 = arith.extf %b : vector<8xbf16> to vector<8xf32>
    %ta = arith.truncf %a32 : vector<8xf32> to vector<8xbf16>
    %tb = arith.truncf %b32 : vector<8xf32> to vector<8xbf16>
    quack.copy <vector> %ta, %y {alignment = 16 : i64} : (vector<8xbf16>, !llvm.ptr<1>) -> ()
    quack.copy <vector> %tb, %y {alignment = 16 : i64} : (vector<8xbf16>, !llvm.ptr<1>) -> ()
    gpu.return
  }
  gpu.func @shared(%s: !llvm.ptr<3>, %t: !llvm.ptr<3>, %y: !llvm.ptr<1>) kernel
      attributes {quack.config = {sink = true}} {
    %z = arith.constant dense<0.0> : vector<8xbf16>
    %a = quack.copy <vector> %s {alignment = 16 : i64} : (!llvm.ptr<3>) -> vector<8xbf16>
    quack.copy <vector> %z, %s {alignment = 16 : i64} : (vector<8xbf16>, !llvm.ptr<3>) -> ()
    %a32 = arith.extf %a : vector<8xbf16> to vector<8xf32>
    %ta = arith.truncf %a32 : vector<8xf32> to vector<8xbf16>
    quack.copy <vector> %ta, %y {alignment = 16 : i64} : (vector<8xbf16>, !llvm.ptr<1>) -> ()
    gpu.return
  }
}

// -----

// Ops without memory effects also cross the last fence (here the barrier
// before stores that may overwrite gathered inputs) when their first user
// is after it; loads do not.
// CHECK-LABEL: gpu.func @across
// CHECK: %[[L:.*]] = quack.copy <vector> %arg0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[L]]
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[E]]
// CHECK-NEXT: quack.copy <vector> %[[T]], %arg1
gpu.module @k3 {
  gpu.func @across(%x: !llvm.ptr<1>, %y: !llvm.ptr<1>) kernel
      attributes {quack.config = {remat = true, sink = true}} {
    %a = quack.copy <vector> %x {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    %a32 = arith.extf %a : vector<8xbf16> to vector<8xf32>
    %ta = arith.truncf %a32 : vector<8xf32> to vector<8xbf16>
    gpu.barrier
    quack.copy <vector> %ta, %y {alignment = 16 : i64} : (vector<8xbf16>, !llvm.ptr<1>) -> ()
    gpu.return
  }
}
