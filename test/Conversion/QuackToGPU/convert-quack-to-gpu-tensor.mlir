// RUN: quack-opt %s --split-input-file --quack-select-config=copy=2 --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-copy-to-nvvm | FileCheck %s
// RUN: quack-opt %s --split-input-file --quack-select-config=copy=2 --convert-quack-to-gpu | FileCheck %s --check-prefix=OP

// copy=tensor on the CTA-level path (bf16, N = 1024: two rows of 64 threads
// per CTA, a slice of 1024 columns). The staging is bulk copies' (one
// mbarrier, one buffer of 4096 bytes after it), but x arrives through a
// tensor map: a generic-pointer parameter after those the caller passes,
// listed in quack.tensor_map_args, with its recipe in quack.tensor_maps. The
// map sees x as [M, 1024 / 256, 256], so that one box of 256 x 4 x 2
// elements covers the CTA's two rows. Thread 0 expects its 4096 bytes when
// the row group starts inside M (the copy engine fills rows past M with
// zeros and counts them) and issues one cp.async.bulk.tensor at coordinates
// (0, 0, the group's first row) into the buffer at byte 128. Rows land one
// after the other, so a thread reads column c of row r at r * 1024 + c.
// The box is one quack.copy with the tensor atom (OP), its map the
// kernel's parameter, lowered by convert-quack-copy-to-nvvm.
// OP-LABEL: gpu.module @scale
// OP: quack.copy <tensor> %{{.*}}, %arg{{[0-9]+}}, %c0_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (!llvm.ptr<3>, !llvm.ptr, i32, i32, i32, !llvm.ptr<3>) -> ()
// CHECK-LABEL: gpu.module @scale
// CHECK: gpu.func @scale(%{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %[[MAP:.*]]: !llvm.ptr) kernel
// CHECK-SAME: copy = "tensor"
// CHECK-SAME: quack.dynamic_shared_bytes = 4224 : i64
// CHECK-SAME: quack.tensor_map_args = array<i64: 5>
// CHECK-SAME: quack.tensor_maps = [{box = array<i64: 256, 4, 2>, columns = 1024 : i64, dtype = "bf16", of = "arg0"}]
// CHECK: nvvm.mbarrier.init
// CHECK: %[[FIRST:.*]] = arith.muli %{{.*}}, %c2_i64{{.*}} : i64
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %[[FIRST]], %arg0 : i64
// CHECK: %[[BYTES:.*]] = arith.muli %c1_i64{{.*}}, %c4096_i64{{.*}} : i64
// CHECK: %[[SUM:.*]] = arith.addi %{{.*}}, %[[BYTES]] : i64
// CHECK: %[[ALL:.*]] = arith.select %[[VALID]], %[[SUM]], %{{.*}} : i64
// CHECK: %[[ROW32:.*]] = arith.trunci %[[FIRST]] : i64 to i32
// CHECK: %[[TX:.*]] = arith.trunci %[[ALL]] : i64 to i32
// CHECK: llvm.inline_asm has_side_effects "fence.proxy.async.shared::cta;"
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %[[TX]] : !llvm.ptr<3>, i32
// CHECK: scf.if %[[VALID]] {
// CHECK: %[[GROUP:.*]] = arith.divui %{{.*}}, %c256_i64 : i64
// CHECK: %[[GROUP32:.*]] = arith.trunci %[[GROUP]] : i64 to i32
// CHECK: %c128_i64
// CHECK: %[[M0:.*]] = llvm.ptrtoint %[[MAP]] : !llvm.ptr to i64
// CHECK: llvm.inline_asm has_side_effects "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];", "r,l,r,r,r,r,~{memory}" %{{.*}}, %[[M0]], %c0_i32{{.*}}, %[[GROUP32]], %[[ROW32]], %{{.*}}
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %c0_i32{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK: arith.muli %{{.*}}, %c2048_i64{{.*}} : i64
// CHECK-NOT: arith.divui %{{.*}}, %c1024_i64
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK-NOT: !llvm.ptr<1> -> vector<8xbf16>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<1>
quack.kernel @scale(%x: memref<?x1024xbf16, strided<[?, 1]>>,
                    %y: memref<?x1024xbf16, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) {
  %row = quack.load %x : memref<?x1024xbf16, strided<[?, 1]>> -> vector<1024xbf16>
  %f = arith.extf %row : vector<1024xbf16> to vector<1024xf32>
  %s = quack.reduce <add> %f : vector<1024xf32> -> f32
  %b = vector.broadcast %s : f32 to vector<1024xf32>
  %g = arith.mulf %f, %b : vector<1024xf32>
  %t = arith.truncf %g : vector<1024xf32> to vector<1024xbf16>
  quack.store %t, %y : vector<1024xbf16>, memref<?x1024xbf16, strided<[?, 1]>>
  quack.return
}

// -----

// On the cluster path (f32, N = 20000 over a cluster of 4 CTAs of 6144
// columns: 512 threads x 3 vectors of 4; rank 3's slice holds 1568 columns
// of the row). The map sees x as [M, 625, 32]: one box of 32 x 192 x 1
// elements covers a CTA's slice, at coordinates (0, rank * 6144 / 32, row),
// issued (and its 24576 bytes expected) where the slice starts inside N.
// CHECK-LABEL: gpu.module @sum
// CHECK: quack.tensor_maps = [{box = array<i64: 32, 192, 1>, columns = 20000 : i64, dtype = "f32", of = "arg0"}]
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank
// CHECK: nvvm.mbarrier.init
// CHECK: %[[RANK64:.*]] = arith.extui %[[RANK]] : i32 to i64
// CHECK: %[[START:.*]] = arith.muli %[[RANK64]], %c6144_i64{{.*}} : i64
// CHECK: arith.cmpi slt, %{{.*}}, %arg0 : i64
// CHECK: %[[LEFT:.*]] = arith.subi %c20000_i64{{.*}}, %[[START]] : i64
// CHECK: %[[POS:.*]] = arith.maxsi %[[LEFT]], %c0_i64{{.*}} : i64
// CHECK: %[[UP:.*]] = arith.addi %[[POS]], %c6143_i64{{.*}} : i64
// CHECK: %[[CEIL:.*]] = arith.divui %[[UP]], %c6144_i64{{.*}} : i64
// CHECK: %[[COUNT:.*]] = arith.minsi %[[CEIL]], %c1_i64{{.*}} : i64
// CHECK: arith.muli %[[COUNT]], %c24576_i64{{.*}} : i64
// CHECK: llvm.inline_asm has_side_effects "fence.proxy.async.shared::cta;"
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: %[[ANY:.*]] = arith.cmpi sgt, %[[COUNT]], %c0_i64{{.*}} : i64
// CHECK: scf.if %[[ANY]] {
// CHECK: arith.addi %[[START]], %{{.*}} : i64
// CHECK: arith.divui %{{.*}}, %c32_i64{{.*}} : i64
// CHECK: cp.async.bulk.tensor.3d
quack.kernel @sum(%x: memref<?x20000xf32, strided<[?, 1]>>,
                  %y: memref<?x20000xf32, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) {
  %row = quack.load %x : memref<?x20000xf32, strided<[?, 1]>> -> vector<20000xf32>
  %s = quack.reduce <add> %row : vector<20000xf32> -> f32
  %b = vector.broadcast %s : f32 to vector<20000xf32>
  %g = arith.mulf %row, %b : vector<20000xf32>
  quack.store %g, %y : vector<20000xf32>, memref<?x20000xf32, strided<[?, 1]>>
  quack.return
}
