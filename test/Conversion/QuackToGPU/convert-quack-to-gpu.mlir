// RUN: quack-opt %s --quack-select-config="threads-per-row=128" --convert-quack-to-gpu --convert-quack-copy-to-nvvm | FileCheck %s
// RUN: quack-opt %s --quack-select-config="threads-per-row=128" --convert-quack-to-gpu | FileCheck %s --check-prefix=OP

// A row of 4096 bf16 spread over 128 threads (forced), 4 vectors of 8 each.
// CHECK-LABEL: gpu.module @rmsnorm
// The exchange slot of the block-level reduction: 4 warps x 4 bytes.
// CHECK: llvm.mlir.global internal @__quack_smem_rmsnorm() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<16 x i8>
// The frozen ABI: M, then x (pointer, row stride), w, eps, y (pointer, row
// stride), rstd.
// CHECK: gpu.func @rmsnorm(%[[M:.*]]: i64, %[[X:.*]]: !llvm.ptr<1>, %[[XS:.*]]: i64, %[[W:.*]]: !llvm.ptr<1>, %[[EPS:.*]]: f32, %[[Y:.*]]: !llvm.ptr<1>, %[[YS:.*]]: i64, %[[RSTD:.*]]: !llvm.ptr<1>) kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-SAME: quack.abi = [{kind = "rows", name = "M", type = "i64"}, {dtype = "bf16", kind = "matrix", name = "x", role = "input"}, {kind = "row_stride", name = "x.row_stride", of = "x", type = "i64"}
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// Rows past M are predicated off.
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %{{.*}}, %[[M]] : i64
// Each load is a 128-bit vector that carries its alignment; 64-bit offsets
// use the runtime row stride.
// CHECK: arith.muli %{{.*}}, %[[XS]] : i64
// CHECK: scf.if %[[VALID]] -> (vector<8xbf16>)
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK-COUNT-4: vector.reduction <add>
// The row's 128 threads combine their partials in one block allreduce
// (lowered by convert-quack-allreduce-to-nvvm), its scratch the 4 warps' slots.
// CHECK: quack.allreduce block lanes 128 [add] (%{{.*}}) scratch @__quack_smem_rmsnorm[0] {groups = 1 : i64} : f32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: gpu.barrier
// CHECK: math.rsqrt
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
// The per-row output is written by the first thread of the row only.
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: gpu.return
// convert-quack-to-gpu itself emits each access as a thread-level
// quack.copy with the vector atom (OP), predicated on the row bound (and
// the N tail where N leaves one), lowered above by
// convert-quack-copy-to-nvvm.
// OP: quack.copy <vector> %{{.*}} if %{{.*}} {alignment = 16 : i64} : (!llvm.ptr<1>) -> vector<8xbf16>
// OP: quack.allreduce block
// OP: quack.copy <vector> %{{.*}}, %{{.*}} if %{{.*}} {alignment = 16 : i64} : (vector<8xbf16>, !llvm.ptr<1>) -> ()
// OP: quack.copy <vector> %{{.*}}, %{{.*}} if %{{.*}} {alignment = 4 : i64} : (f32, !llvm.ptr<1>) -> ()
quack.kernel @rmsnorm(%x: memref<?x4096xbf16, strided<[?, 1]>> {quack.name = "x", quack.role = "input"},
                      %w: memref<4096xbf16> {quack.name = "w"},
                      %eps: f32 {quack.name = "eps"},
                      %y: memref<?x4096xbf16, strided<[?, 1]>> {quack.name = "y", quack.role = "output"},
                      %rstd: memref<?xf32> {quack.name = "rstd", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x4096xbf16, strided<[?, 1]>> -> vector<4096xbf16>
  %xf = arith.extf %xr : vector<4096xbf16> to vector<4096xf32>
  %sq = arith.mulf %xf, %xf : vector<4096xf32>
  %s = quack.reduce <add> %sq : vector<4096xf32> -> f32
  %n = arith.constant 4096.0 : f32
  %mean = arith.divf %s, %n : f32
  %a = arith.addf %mean, %eps : f32
  %r = math.rsqrt %a : f32
  %wr = quack.load %w : memref<4096xbf16> -> vector<4096xbf16>
  %wf = arith.extf %wr : vector<4096xbf16> to vector<4096xf32>
  %rb = vector.broadcast %r : f32 to vector<4096xf32>
  %t = arith.mulf %xf, %rb : vector<4096xf32>
  %t2 = arith.mulf %t, %wf : vector<4096xf32>
  %yo = arith.truncf %t2 : vector<4096xf32> to vector<4096xbf16>
  quack.store %yo, %y : vector<4096xbf16>, memref<?x4096xbf16, strided<[?, 1]>>
  quack.store %r, %rstd : f32, memref<?xf32>
  quack.return
}
