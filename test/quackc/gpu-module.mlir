// A hand-written gpu.module goes through the same back end as descriptions.
// RUN: quackc %s --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: quackc %s --emit=llvm | FileCheck %s --check-prefix=LLVM

// PTX: .visible .entry scale(
// PTX: ld.global.b32
// PTX: mul.rn.f32
// PTX: st.global.b32
// LLVM: define ptx_kernel void @scale(ptr addrspace(1) {{.*}}, i64 {{.*}})

module attributes {gpu.container_module} {
  gpu.module @scale {
    gpu.func @scale(%p: !llvm.ptr<1>, %n: i64) kernel {
      %tid = gpu.thread_id x
      %i = arith.index_cast %tid : index to i64
      %ok = arith.cmpi slt, %i, %n : i64
      scf.if %ok {
        %q = llvm.getelementptr %p[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
        %v = llvm.load %q {alignment = 4 : i64} : !llvm.ptr<1> -> f32
        %c = arith.constant 3.0 : f32
        %w = arith.mulf %v, %c : f32
        llvm.store %w, %q {alignment = 4 : i64} : f32, !llvm.ptr<1>
      }
      gpu.return
    }
  }
}
