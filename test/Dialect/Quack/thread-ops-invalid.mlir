// RUN: quack-opt %s -split-input-file -verify-diagnostics

// Every diagnostic of quack.allreduce's verifier and syntax, of
// quack.copy's verifier, and of the staging ops' verifiers.

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{a warp group of 64 lanes; expected a power of two in [1, 32]}}
    %r = quack.allreduce warp lanes 64 [add] (%x) : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{a warp group of -9223372036854775808 lanes; expected a power of two in [1, 32]}}
    %r = quack.allreduce warp lanes -9223372036854775808 [add] (%x) : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{4611686018427387904 groups of 64 lanes exceed a CTA of 1024 threads}}
    %r = quack.allreduce block lanes 64 [add] (%x) scratch @smem[0] {groups = 4611686018427387904 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{a warp group of 12 lanes; expected a power of two in [1, 32]}}
    %r = quack.allreduce warp lanes 12 [add] (%x) : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{a block group of 32 lanes; expected a power of two in [64, 1024]}}
    %r = quack.allreduce block lanes 32 [add] (%x) scratch @smem[0] {groups = 1 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{combines no term}}
    "quack.allreduce"() <{scope = #quack.reduce_scope<warp>, lanes = 32 : i64, terms = array<i32>}> : () -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{has 2 values but its terms combine 1}}
    %r:2 = quack.allreduce warp lanes 32 [add] (%x, %x) : f32, f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{terms need more than the 1 values given}}
    %r = quack.allreduce warp lanes 32 [logsumexp] (%x) : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32, %i: i32) kernel {
    // expected-error @+1 {{term 0 (moments) combines an (f32, f32, f32) triple; value 2 is 'i32'}}
    %r:3 = quack.allreduce warp lanes 32 [moments] (%x, %x, %i) : f32, f32, i32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{terms need more than the 2 values given}}
    %r:2 = quack.allreduce warp lanes 32 [moments] (%x, %x) : f32, f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32, %i: i32) kernel {
    // expected-error @+1 {{term 0 (logsumexp) combines an (f32, f32) pair; value 1 is 'i32'}}
    %r:2 = quack.allreduce warp lanes 32 [logsumexp] (%x, %i) : f32, i32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{term 1 (argmax) combines an (f32, i32) pair; value 2 is 'f32'}}
    %r:3 = quack.allreduce warp lanes 32 [add, argmax] (%x, %x, %x) : f32, f32, f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{term 0 has unknown kind 9}}
    %r = "quack.allreduce"(%x) <{scope = #quack.reduce_scope<warp>, lanes = 32 : i64, terms = array<i32: 9>}> : (f32) -> f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{in a warp uses no scratch memory or groups}}
    %r = quack.allreduce warp lanes 32 [add] (%x) scratch @smem[0] : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{in a block needs scratch shared memory and the CTA's group count}}
    %r = quack.allreduce block lanes 64 [add] (%x) : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{4 groups of 512 lanes exceed a CTA of 1024 threads}}
    %r = quack.allreduce block lanes 512 [add] (%x) scratch @smem[0] {groups = 4 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{scratch offset 6 is not a multiple of 4 in [0, 2^24)}}
    %r = quack.allreduce block lanes 64 [add] (%x) scratch @smem[6] {groups = 1 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 3 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%x: f32) kernel {
    // 2 groups x 8 warps x 2 values x 4 bytes = 128 bytes from byte 16.
    // expected-error @+1 {{needs 144 bytes of 'smem', which has 64}}
    %r:2 = quack.allreduce block lanes 256 [add, max] (%x, %x) scratch @smem[16] {groups = 2 : i64} : f32, f32
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @smem() {addr_space = 1 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{'smem' is not in shared memory (address space 1, expected 3)}}
    %r = quack.allreduce block lanes 64 [add] (%x) scratch @smem[0] {groups = 1 : i64} : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{unknown scope 'grid', expected 'warp' or 'block'}}
    %r = quack.allreduce grid lanes 32 [add] (%x) : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%x: f32) kernel {
    // expected-error @+1 {{unknown reduction term 'mul', expected add, max, min, logsumexp, argmax or moments}}
    %r = quack.allreduce warp lanes 32 [mul] (%x) : f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{a vector load takes 1 operands, not 2}}
    %v = quack.copy <vector> %g, %g {alignment = 16 : i64} : (!llvm.ptr<1>, !llvm.ptr<1>) -> vector<8xbf16>
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{a vector store takes 2 operands, not 1}}
    quack.copy <vector> %g {alignment = 16 : i64} : (!llvm.ptr<1>) -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{operand 0 (the address) must be an !llvm.ptr in address space 1 or 3, not 'i32'}}
    %v = quack.copy <vector> %n {alignment = 4 : i64} : (i32) -> vector<4xf32>
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{copies 'vector<3xf32>'; a vector copy moves a power of two of bytes up to 64 of integers or floats}}
    %v = quack.copy <vector> %g {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<3xf32>
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{copies 'vector<32xf32>'; a vector copy moves a power of two of bytes up to 64}}
    %v = quack.copy <vector> %g {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<32xf32>
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{a vector copy needs its alignment}}
    %v = quack.copy <vector> %g : (!llvm.ptr<1>) -> vector<4xf32>
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{alignment 2 is not a power of two in [4, 16] for 'vector<4xf32>'}}
    %v = quack.copy <vector> %g {alignment = 2 : i64} : (!llvm.ptr<1>) -> vector<4xf32>
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{alignment 32 is not a power of two in [4, 16] for 'vector<4xf32>'}}
    %v = quack.copy <vector> %g {alignment = 32 : i64} : (!llvm.ptr<1>) -> vector<4xf32>
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{an asynchronous bulk copy has no result}}
    %v = quack.copy <bulk> %s, %g, %n, %s : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> f32
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{a bulk copy takes no alignment}}
    quack.copy <bulk> %s, %g, %n, %s {alignment = 16 : i64} : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{a bulk copy takes 4 operands (destination, source, bytes, mbarrier), not 3}}
    quack.copy <bulk> %s, %g, %n : (!llvm.ptr<3>, !llvm.ptr<1>, i32) -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{operand 0 (the destination) must be an !llvm.ptr in address space 3, not '!llvm.ptr<1>'}}
    quack.copy <bulk> %g, %g, %n, %s : (!llvm.ptr<1>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{operand 2 (the byte count) must be i32, not '!llvm.ptr<1>'}}
    quack.copy <bulk> %s, %g, %g, %s : (!llvm.ptr<3>, !llvm.ptr<1>, !llvm.ptr<1>, !llvm.ptr<3>) -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{operand 1 (the tensor map) must be an !llvm.ptr in address space 0, not '!llvm.ptr<1>'}}
    quack.copy <tensor> %s, %g, %n, %n, %n, %s : (!llvm.ptr<3>, !llvm.ptr<1>, i32, i32, i32, !llvm.ptr<3>) -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32) kernel {
    // expected-error @+1 {{a tensor copy takes 6 operands (destination, tensor map, 3 coordinates, mbarrier), not 5}}
    quack.copy <tensor> %s, %map, %n, %n, %s : (!llvm.ptr<3>, !llvm.ptr, i32, i32, !llvm.ptr<3>) -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32, %off: i64) kernel {
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // expected-error @+1 {{a bulk copy must complete on its quack.stage.fill's mbarrier (the fill's body argument)}}
      quack.copy <bulk> %s, %g, %n, %s : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
    }
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32, %off: i64) kernel {
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // expected-error @+1 {{a tensor copy must complete on its quack.stage.fill's mbarrier}}
      quack.copy <tensor> %s, %map, %n, %n, %n, %s : (!llvm.ptr<3>, !llvm.ptr, i32, i32, i32, !llvm.ptr<3>) -> ()
    }
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %n: i32) kernel {
    // expected-error @+1 {{a bulk copy must be inside a quack.stage.fill, which arms the mbarrier it completes on}}
    quack.copy <bulk> %s, %g, %n, %s : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{names no mbarrier}}
    quack.stage.init @bulk barriers []
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{mbarrier offset 4 is not a multiple of 8 in [0, 2^24)}}
    quack.stage.init @bulk barriers [4]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{names the mbarrier at offset 8 twice}}
    quack.stage.init @bulk barriers [8, 8]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @small() {addr_space = 3 : i32} : !llvm.array<8 x i8>
  gpu.func @f() kernel {
    // expected-error @+1 {{needs 16 bytes of 'small', which has 8}}
    quack.stage.init @small barriers [0, 8]
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global internal @g() {addr_space = 1 : i32} : !llvm.array<64 x i8>
  gpu.func @f(%off: i64, %p: i32) kernel {
    // expected-error @+1 {{'g' is not in shared memory (address space 1, expected 3)}}
    quack.stage.wait @g barrier %off parity %p
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%off: i64, %n: i32) kernel {
    // expected-error @+1 {{body must take one argument, the mbarrier's address (!llvm.ptr<3>)}}
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<1>):
    }
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%off: i64) kernel {
    %two = arith.constant 2 : i32
    // expected-error @+1 {{waits for parity 2; a phase's parity is 0 or 1}}
    quack.stage.wait @bulk barrier %off parity %two
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %n: i32, %off: i64) kernel {
    %c12 = arith.constant 12 : i32
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // expected-error @+1 {{a bulk copy moves a positive multiple of 16 bytes, not 12}}
      quack.copy <bulk> %s, %g, %c12, %bar : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
    }
    gpu.return
  }
}

// -----

gpu.module @k {
  gpu.func @f(%g: !llvm.ptr<1>) kernel {
    // expected-error @+1 {{copies 'vector<1152921504606846976xi64>'; a vector copy moves a power of two of bytes up to 64}}
    %v = quack.copy <vector> %g {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<1152921504606846976xi64>
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32, %x: i64, %off: i64) kernel {
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // expected-error @+1 {{operand 1 (the source) must be an !llvm.ptr in address space 1, not '!llvm.ptr<3>'}}
      quack.copy <bulk> %s, %s, %n, %bar : (!llvm.ptr<3>, !llvm.ptr<3>, i32, !llvm.ptr<3>) -> ()
    }
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32, %x: i64, %off: i64) kernel {
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // expected-error @+1 {{operand 3 (the mbarrier) must be an !llvm.ptr in address space 3, not '!llvm.ptr<1>'}}
      quack.copy <bulk> %s, %g, %n, %g : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<1>) -> ()
    }
    gpu.return
  }
}

// -----

gpu.module @k {
  llvm.mlir.global external @bulk() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
  gpu.func @f(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %map: !llvm.ptr, %n: i32, %x: i64, %off: i64) kernel {
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      // expected-error @+1 {{operand 3 (a coordinate) must be i32, not 'i64'}}
      quack.copy <tensor> %s, %map, %n, %x, %n, %bar : (!llvm.ptr<3>, !llvm.ptr, i32, i64, i32, !llvm.ptr<3>) -> ()
    }
    gpu.return
  }
}
