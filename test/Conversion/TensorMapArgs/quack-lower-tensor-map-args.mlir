// RUN: quack-opt %s --split-input-file --pass-pipeline='builtin.module(gpu.module(quack-lower-tensor-map-args))' --verify-diagnostics | FileCheck %s

// The tensor-map parameter (index 2) becomes a 128-byte by-value,
// 64-byte aligned, grid-constant parameter; the others are untouched and
// the marker is dropped.
// CHECK-LABEL: gpu.module @k
// CHECK: llvm.func @f(%{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant})
// CHECK-NOT: quack.tensor_map_args
gpu.module @k {
  llvm.func @f(%m: i64, %x: !llvm.ptr<1>, %map: !llvm.ptr) attributes {nvvm.kernel, quack.tensor_map_args = array<i64: 2>} {
    llvm.return
  }
}

// -----

gpu.module @not_kernel {
  // expected-error @+1 {{has tensor-map parameters but is not a kernel}}
  llvm.func @f(%m: i64, %map: !llvm.ptr) attributes {quack.tensor_map_args = array<i64: 1>} {
    llvm.return
  }
}

// -----

gpu.module @bad_index {
  // expected-error @+1 {{quack.tensor_map_args names parameter 0, which is not a pointer parameter}}
  llvm.func @f(%m: i64, %map: !llvm.ptr) attributes {nvvm.kernel, quack.tensor_map_args = array<i64: 0>} {
    llvm.return
  }
}

// -----

gpu.module @out_of_range {
  // expected-error @+1 {{quack.tensor_map_args names parameter 5, which is not a pointer parameter}}
  llvm.func @f(%m: i64, %map: !llvm.ptr) attributes {nvvm.kernel, quack.tensor_map_args = array<i64: 5>} {
    llvm.return
  }
}
