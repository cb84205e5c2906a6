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
