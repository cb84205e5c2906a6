// RUN: quack-opt %s --pass-pipeline='builtin.module(gpu.module(convert-quack-math-to-nvvm))' | FileCheck %s
// Without ftz, exponentials keep results below 2^-126 subnormal.
// RUN: quack-opt %s --pass-pipeline='builtin.module(gpu.module(convert-quack-math-to-nvvm{ftz=false}))' | FileCheck %s --check-prefix=EXACT
// EXACT-NOT: ex2.approx.ftz
// EXACT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"
// EXACT-NOT: ex2.approx.ftz

module attributes {gpu.container_module} {
  gpu.module @m {
    // CHECK-LABEL: gpu.func @scalar
    gpu.func @scalar(%x: f32, %p: !llvm.ptr<1>) kernel {
      // IEEE square root; rsqrt is the hardware approximation (not ftz).
      // CHECK: %[[S:.*]] = llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"(%{{.*}}) : (f32) -> f32
      %s = math.sqrt %x : f32
      // CHECK: llvm.call_intrinsic "llvm.nvvm.rsqrt.approx.f"(%{{.*}}) : (f32) -> f32
      // CHECK-NOT: arith.divf
      %r = math.rsqrt %x : f32
      // exp(x) = ex2(x * log2(e)).
      // CHECK: %[[L:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
      // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[L]])
      %e = math.exp %x : f32
      // log(x) = lg2(x) * ln(2).
      // CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"
      %l = math.log %x : f32
      // CHECK-NOT: math.
      %a = arith.addf %s, %r : f32
      %b = arith.addf %e, %l : f32
      %c = arith.addf %a, %b : f32
      llvm.store %c, %p : f32, !llvm.ptr<1>
      gpu.return
    }

    // Vectors are expanded lane by lane.
    // CHECK-LABEL: gpu.func @vector
    gpu.func @vector(%x: vector<2xf32>, %p: !llvm.ptr<1>) kernel {
      // CHECK: vector.extract %{{.*}}[0] : f32 from vector<2xf32>
      // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
      // CHECK: vector.extract %{{.*}}[1] : f32 from vector<2xf32>
      // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
      // CHECK: vector.from_elements %{{.*}}, %{{.*}} : vector<2xf32>
      %e = math.exp2 %x : vector<2xf32>
      llvm.store %e, %p : vector<2xf32>, !llvm.ptr<1>
      gpu.return
    }

    // exp(x - s) with s broadcast over the vector: s * log2(e) once, then
    // one fma per lane, ex2(fma(x, log2(e), -s * log2(e))).
    // CHECK-LABEL: gpu.func @shifted_exp
    // CHECK-SAME: (%[[X:.*]]: vector<2xf32>, %[[S:.*]]: f32
    gpu.func @shifted_exp(%x: vector<2xf32>, %s: f32, %p: !llvm.ptr<1>) kernel {
      // CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
      // CHECK: %[[SL:.*]] = arith.mulf %[[S]], %[[LOG2E]] : f32
      // CHECK: %[[NEG:.*]] = arith.negf %[[SL]] : f32
      // CHECK: %[[X0:.*]] = vector.extract %[[X]][0]
      // CHECK: %[[A0:.*]] = math.fma %[[X0]], %[[LOG2E]], %[[NEG]] : f32
      // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[A0]])
      // CHECK: %[[X1:.*]] = vector.extract %[[X]][1]
      // CHECK: %[[A1:.*]] = math.fma %[[X1]], %[[LOG2E]], %[[NEG]] : f32
      // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[A1]])
      // CHECK-NOT: arith.subf
      %sv = vector.broadcast %s : f32 to vector<2xf32>
      %d = arith.subf %x, %sv : vector<2xf32>
      %e = math.exp %d : vector<2xf32>
      // A shift that differs per lane keeps the subtraction.
      // CHECK: arith.subf %{{.*}}, %{{.*}} : vector<2xf32>
      // CHECK: arith.mulf
      // CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
      %d2 = arith.subf %x, %e : vector<2xf32>
      %e2 = math.exp %d2 : vector<2xf32>
      llvm.store %e2, %p : vector<2xf32>, !llvm.ptr<1>
      gpu.return
    }

    // Other element types are left alone.
    // CHECK-LABEL: gpu.func @f64
    gpu.func @f64(%x: f64, %p: !llvm.ptr<1>) kernel {
      // CHECK: math.sqrt %{{.*}} : f64
      %s = math.sqrt %x : f64
      llvm.store %s, %p : f64, !llvm.ptr<1>
      gpu.return
    }
  }
}
