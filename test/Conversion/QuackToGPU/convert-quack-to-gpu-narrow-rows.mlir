// RUN: quack-opt %s -split-input-file --quack-select-config=remat=1 --convert-quack-to-gpu | FileCheck %s

// A bf16 row widened to f32 stays packed across the exchanges: each phase
// (before the first exchange, between the two, after the second) widens it
// again where it is used, and recomputes the cheap centred row d = x - mu
// instead of keeping its f32 values live. A later phase's conversion is a
// byte permutation with a selector of its own, so that no pass merges two
// phases' conversions.
// CHECK-LABEL: gpu.module @center
// Phase 0: the sum of x, from the plain conversion.
// CHECK: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK-NOT: llvm.inline_asm
// CHECK: vector.reduction <add>
// CHECK: quack.allreduce block
// Phase 1: x again (selectors 0x1046 / 0x3246), d = x - mu, the sum of d * d.
// CHECK: llvm.inline_asm "prmt.b32 $0, $1, $2, 0x1046;", "=r,r,r"
// CHECK: llvm.inline_asm "prmt.b32 $0, $1, $2, 0x3246;", "=r,r,r"
// CHECK-NOT: arith.extf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: vector.reduction <add>
// CHECK: quack.allreduce block
// Phase 2: x (0x1047 / 0x3247) and d once more, then y = d * r.
// CHECK: llvm.inline_asm "prmt.b32 $0, $1, $2, 0x1047;", "=r,r,r"
// CHECK: llvm.inline_asm "prmt.b32 $0, $1, $2, 0x3247;", "=r,r,r"
// CHECK-NOT: arith.extf
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: arith.truncf
// CHECK: gpu.return
quack.kernel @center(%x: memref<?x4096xbf16> {quack.name = "x"},
                     %y: memref<?x4096xbf16> {quack.name = "y", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xbf16> -> vector<4096xbf16>
  %xf = arith.extf %row : vector<4096xbf16> to vector<4096xf32>
  %s = quack.reduce <add> %xf : vector<4096xf32> -> f32
  %sb = vector.broadcast %s : f32 to vector<4096xf32>
  %d = arith.subf %xf, %sb : vector<4096xf32>
  %dd = arith.mulf %d, %d : vector<4096xf32>
  %v = quack.reduce <add> %dd : vector<4096xf32> -> f32
  %vb = vector.broadcast %v : f32 to vector<4096xf32>
  %o = arith.mulf %d, %vb : vector<4096xf32>
  %ot = arith.truncf %o : vector<4096xf32> to vector<4096xbf16>
  quack.store %ot, %y : vector<4096xbf16>, memref<?x4096xbf16>
  quack.return
}

// -----

// An exp is not recomputed: its f32 values are kept. f16 rows are widened
// again through a `mov` of each packed word that LLVM must keep (the f32
// output makes the accesses 4 elements wide).
// CHECK-LABEL: gpu.module @keep_exp
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK: math.exp
// CHECK: vector.reduction <add>
// CHECK: quack.allreduce block
// CHECK-NOT: math.exp
// CHECK: llvm.inline_asm has_side_effects "mov.b32 $0, $1;", "=r,r"
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK-NOT: math.exp
// CHECK: gpu.return
quack.kernel @keep_exp(%x: memref<?x4096xf16> {quack.name = "x"},
                       %y: memref<?x4096xf32> {quack.name = "y", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xf16> -> vector<4096xf16>
  %xf = arith.extf %row : vector<4096xf16> to vector<4096xf32>
  %e = math.exp %xf : vector<4096xf32>
  %s = quack.reduce <add> %e : vector<4096xf32> -> f32
  %sb = vector.broadcast %s : f32 to vector<4096xf32>
  %o = arith.mulf %e, %sb : vector<4096xf32>
  %o2 = arith.addf %o, %xf : vector<4096xf32>
  quack.store %o2, %y : vector<4096xf32>, memref<?x4096xf32>
  quack.return
}

// -----

// Without remat (the default of the pass; quackc turns it on where it fits
// more CTAs per SM), the row is widened once and its f32 values kept.
// RUN: quack-opt %s -split-input-file --quack-select-config --convert-quack-to-gpu | FileCheck %s --check-prefix=OFF
// OFF-LABEL: gpu.module @center
// OFF-NOT: llvm.inline_asm
// OFF: gpu.return
