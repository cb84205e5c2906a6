// RUN: quack-opt %s -split-input-file --quack-verify-staging -verify-diagnostics | FileCheck %s

// The protocol of a two-buffer prefetching loop passes: one init of both
// mbarriers, the first fill before the loop, then in each iteration a fill
// of buffer (i + 1) % 2 and a wait on buffer i % 2, offsets 8 * stage, and
// after the loop a wait on the last iteration's buffer.
// CHECK-LABEL: gpu.func @loop
gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @loop(%src: !llvm.ptr<1>, %n: i32, %iters: i64) kernel {
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %c2 = arith.constant 2 : i64
    %c8 = arith.constant 8 : i64
    %p0 = arith.constant 0 : i32
    quack.stage.init @bulk barriers [0, 8]
    %dst = llvm.mlir.addressof @bulk : !llvm.ptr<3>
    quack.stage.fill @bulk barrier %c0 bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      quack.copy <bulk> %dst, %src, %n, %bar : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
    }
    %r = scf.for %i = %c0 to %iters step %c1 iter_args(%it = %p0) -> (i32) : i64 {
      %it64 = arith.extui %it : i32 to i64
      %next = arith.addi %it64, %c1 : i64
      %ahead = arith.remui %next, %c2 : i64
      %aoff = arith.muli %ahead, %c8 : i64
      quack.stage.fill @bulk barrier %aoff bytes %n {
      ^bb0(%bar: !llvm.ptr<3>):
        quack.copy <bulk> %dst, %src, %n, %bar : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
      }
      %stage = arith.remui %it64, %c2 : i64
      %off = arith.muli %stage, %c8 : i64
      %one = arith.constant 1 : i32
      %parity = arith.andi %it, %one : i32
      quack.stage.wait @bulk barrier %off parity %parity
      %it1 = arith.addi %it, %one : i32
      scf.yield %it1 : i32
    }
    // The last iteration's fill, waited on after the loop.
    %r64 = arith.extui %r : i32 to i64
    %last = arith.remui %r64, %c2 : i64
    %loff = arith.muli %last, %c8 : i64
    %two = arith.constant 2 : i32
    %round = arith.divui %r, %two : i32
    %bit = arith.constant 1 : i32
    %lp = arith.andi %round, %bit : i32
    quack.stage.wait @bulk barrier %loff parity %lp
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%c: i1) kernel {
    scf.if %c {
      // expected-error @+1 {{must be in the function's entry block, executed once by every thread, not in a loop or a branch}}
      quack.stage.init @bulk barriers [0]
    }
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f() kernel {
    quack.stage.init @bulk barriers [0]
    // expected-error @+1 {{initialises the mbarriers of 'bulk' a second time}}
    quack.stage.init @bulk barriers [0]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%p: i32) kernel {
    %c0 = arith.constant 0 : i64
    // expected-error @+1 {{uses the mbarriers of 'bulk' before a quack.stage.init of them}}
    quack.stage.wait @bulk barrier %c0 parity %p
    quack.stage.init @bulk barriers [0]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%p: i32) kernel {
    %c16 = arith.constant 16 : i64
    quack.stage.init @bulk barriers [0, 8]
    // expected-error @+1 {{mbarrier offset 16 is not one of the init's mbarriers}}
    quack.stage.wait @bulk barrier %c16 parity %p
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%p: i32, %it: i64) kernel {
    %c3 = arith.constant 3 : i64
    %c8 = arith.constant 8 : i64
    quack.stage.init @bulk barriers [0, 8]
    %stage = arith.remui %it, %c3 : i64
    %off = arith.muli %stage, %c8 : i64
    // expected-error @+1 {{mbarrier offset may lie in [0, 16], outside the init's mbarriers at [0, 8]}}
    quack.stage.wait @bulk barrier %off parity %p
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%p: i32, %off: i64) kernel {
    quack.stage.init @bulk barriers [0, 8]
    // expected-error @+1 {{mbarrier offset may lie in}}
    quack.stage.wait @bulk barrier %off parity %p
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%p: i32, %n: i32) kernel {
    %c0 = arith.constant 0 : i64
    quack.stage.init @bulk barriers [0]
    quack.stage.fill @bulk barrier %c0 bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // expected-error @+1 {{is collective and may not be in the body of a quack.stage.fill, which thread 0 runs alone}}
      quack.stage.wait @bulk barrier %c0 parity %p
    }
    quack.stage.wait @bulk barrier %c0 parity %p
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%x: f32, %n: i32, %p: i32) kernel {
    %c0 = arith.constant 0 : i64
    quack.stage.init @bulk barriers [0]
    quack.stage.fill @bulk barrier %c0 bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // expected-error @+1 {{is collective and may not be in the body of a quack.stage.fill}}
      %r = quack.allreduce warp lanes 32 [add] (%x) : f32
    }
    quack.stage.wait @bulk barrier %c0 parity %p
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%src: !llvm.ptr<1>, %n: i32) kernel {
    %c0 = arith.constant 0 : i64
    quack.stage.init @bulk barriers [0]
    %dst = llvm.mlir.addressof @bulk : !llvm.ptr<3>
    // expected-error @+1 {{is followed by no quack.stage.wait on an mbarrier it may arm ('bulk'), on some path: the CTA could exit while its copies land}}
    quack.stage.fill @bulk barrier %c0 bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      quack.copy <bulk> %dst, %src, %n, %bar : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
    }
    gpu.return
  }
}

// -----

// A fill in a branch, waited on after the branch; a one-buffer loop whose
// fill and wait share the offset: both pass.
// CHECK-LABEL: gpu.func @branch
gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @branch(%c: i1, %n: i32, %p: i32, %iters: i64) kernel {
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    quack.stage.init @bulk barriers [0]
    scf.if %c {
      quack.stage.fill @bulk barrier %c0 bytes %n {
      ^bb0(%bar: !llvm.ptr<3>):
      }
    }
    quack.stage.wait @bulk barrier %c0 parity %p
    scf.for %i = %c0 to %iters step %c1 : i64 {
      %off = arith.muli %c0, %c8 : i64
      quack.stage.fill @bulk barrier %off bytes %n {
      ^bb0(%bar: !llvm.ptr<3>):
      }
      %off2 = arith.muli %c0, %c8 : i64
      quack.stage.wait @bulk barrier %off2 parity %p
    }
    gpu.return
  }
}

// -----

// A wait in a branch does not close a fill: the other path exits.
gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%c: i1, %n: i32, %p: i32) kernel {
    %c0 = arith.constant 0 : i64
    quack.stage.init @bulk barriers [0]
    // expected-error @+1 {{is followed by no quack.stage.wait on an mbarrier it may arm}}
    quack.stage.fill @bulk barrier %c0 bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
    }
    scf.if %c {
      quack.stage.wait @bulk barrier %c0 parity %p
    }
    gpu.return
  }
}

// -----

// In a two-buffer loop, the wait of the next iteration is on the other
// buffer: without a wait after the loop, the last fill is never waited on.
gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%n: i32, %p: i32, %iters: i64) kernel {
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %c2 = arith.constant 2 : i64
    %c8 = arith.constant 8 : i64
    quack.stage.init @bulk barriers [0, 8]
    scf.for %i = %c0 to %iters step %c1 : i64 {
      %s = arith.remui %i, %c2 : i64
      %off = arith.muli %s, %c8 : i64
      quack.stage.wait @bulk barrier %off parity %p
      %next = arith.addi %i, %c1 : i64
      %s1 = arith.remui %next, %c2 : i64
      %off1 = arith.muli %s1, %c8 : i64
      // expected-error @+1 {{is followed by no quack.stage.wait on an mbarrier it may arm}}
      quack.stage.fill @bulk barrier %off1 bytes %n {
      ^bb0(%bar: !llvm.ptr<3>):
      }
    }
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%n: i32, %p: i32) kernel {
    %c0 = arith.constant 0 : i64
    quack.stage.init @bulk barriers [0]
    quack.stage.fill @bulk barrier %c0 bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // expected-error @+1 {{is collective and may not be in the body of a quack.stage.fill}}
      gpu.barrier
    }
    quack.stage.wait @bulk barrier %c0 parity %p
    gpu.return
  }
}

// -----

// A function nested in another is checked on its own: its init is in its
// own entry block.
// CHECK-LABEL: func.func @inner
func.func @outer() {
  builtin.module {
    llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
    func.func @inner(%n: i32, %p: i32) {
      %c0 = arith.constant 0 : i64
      quack.stage.init @bulk barriers [0]
      quack.stage.fill @bulk barrier %c0 bytes %n {
      ^bb0(%bar: !llvm.ptr<3>):
      }
      quack.stage.wait @bulk barrier %c0 parity %p
      return
    }
  }
  return
}

// -----

// A wait in code that never runs (a branch on a constant false) is not
// checked: its offset 16 names no mbarrier of the init.
// CHECK-LABEL: gpu.func @dead
gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @dead(%p: i32) kernel {
    quack.stage.init @bulk barriers [0, 8]
    %false = arith.constant false
    scf.if %false {
      %c16 = arith.constant 16 : i64
      quack.stage.wait @bulk barrier %c16 parity %p
    }
    gpu.return
  }
}
