// RUN: quack-opt %s | quack-opt | FileCheck %s
// RUN: quack-opt %s --mlir-print-op-generic | quack-opt | FileCheck %s

// quack.allreduce round-trips in both scopes, with every kind of term;
// quack.copy with every atom, and the staging ops.

// CHECK-LABEL: gpu.module @k
gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<512 x i8>
  // CHECK: gpu.func @f(%[[X:.*]]: f32, %[[I:.*]]: i32)
  gpu.func @f(%x: f32, %i: i32) kernel {
    // CHECK: quack.allreduce warp lanes 32 [add] (%[[X]]) : f32
    %s = quack.allreduce warp lanes 32 [add] (%x) : f32
    // CHECK: quack.allreduce warp lanes 8 [max, min, add] (%[[X]], %[[X]], %[[I]]) : f32, f32, i32
    %a:3 = quack.allreduce warp lanes 8 [max, min, add] (%x, %x, %i) : f32, f32, i32
    // CHECK: quack.allreduce block lanes 256 [logsumexp, argmax] (%[[X]], %[[X]], %[[X]], %[[I]]) scratch @smem[64] {groups = 2 : i64} : f32, f32, f32, i32
    %b:4 = quack.allreduce block lanes 256 [logsumexp, argmax] (%x, %x, %x, %i) scratch @smem[64] {groups = 2 : i64} : f32, f32, f32, i32
    // CHECK: quack.allreduce warp lanes 4 [moments, add] (%[[X]], %[[X]], %[[X]], %[[X]]) : f32, f32, f32, f32
    %c:4 = quack.allreduce warp lanes 4 [moments, add] (%x, %x, %x, %x) : f32, f32, f32, f32
    gpu.return
  }
}

// CHECK-LABEL: gpu.module @copies
gpu.module @copies {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  // CHECK: gpu.func @f(%[[G:.*]]: !llvm.ptr<1>, %[[S:.*]]: !llvm.ptr<3>, %[[MAP:.*]]: !llvm.ptr, %[[P:.*]]: i1, %[[N:.*]]: i32)
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %p: i1, %n: i32) kernel {
    // CHECK: %[[V:.*]] = quack.copy <vector> %[[G]] if %[[P]] {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    %v = quack.copy <vector> %g if %p {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
    // CHECK: quack.copy <vector> %[[V]], %[[S]] {alignment = 4 : i64} : (vector<8xbf16>, !llvm.ptr<3>) -> ()
    quack.copy <vector> %v, %s {alignment = 4 : i64} : (vector<8xbf16>, !llvm.ptr<3>) -> ()
    // The staging protocol around the asynchronous copies.
    // CHECK: quack.stage.init @bulk barriers [0, 8]
    quack.stage.init @bulk barriers [0, 8]
    %off = arith.constant 8 : i64
    // CHECK: quack.stage.fill @bulk barrier %{{.*}} bytes %[[N]] {
    // CHECK-NEXT: ^bb0(%[[BAR:.*]]: !llvm.ptr<3>):
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // CHECK: quack.copy <bulk> %[[S]], %[[G]], %[[N]], %[[BAR]] : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
      quack.copy <bulk> %s, %g, %n, %bar : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
      // CHECK: quack.copy <tensor> %[[S]], %[[MAP]], %[[N]], %[[N]], %[[N]], %[[BAR]] if %[[P]] : (!llvm.ptr<3>, !llvm.ptr, i32, i32, i32, !llvm.ptr<3>) -> ()
      quack.copy <tensor> %s, %map, %n, %n, %n, %bar if %p : (!llvm.ptr<3>, !llvm.ptr, i32, i32, i32, !llvm.ptr<3>) -> ()
    }
    // CHECK: quack.stage.wait @bulk barrier %{{.*}} parity %[[N]]
    quack.stage.wait @bulk barrier %off parity %n
    gpu.return
  }
}
