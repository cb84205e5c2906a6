// RUN: quack-opt %s --quack-select-config --convert-quack-to-gpu | FileCheck %s
// RUN: quack-opt %s --quack-select-config=prefetch=1 --convert-quack-to-gpu | FileCheck %s --check-prefix=LOOP

// With prefetch forced, a kernel without sums over rows loops over row
// groups on a persistent grid (no workspace, no finishing entry point) and
// loads the next group's row before exchanging the current one; by
// default (below), one cluster per row group.
// LOOP-LABEL: gpu.func @sum_rows(
// LOOP-SAME: prefetch = true
// LOOP-SAME: quack.persistent
// LOOP: nvvm.cluster.arrive.relaxed
// LOOP: llvm.load {{.*}} -> vector<8xbf16>
// LOOP: scf.for
// LOOP: llvm.load {{.*}} -> vector<8xbf16>
// LOOP: nvvm.cluster.wait
// LOOP: st.async
// LOOP: nvvm.cluster.arrive {aligned}
// LOOP: scf.yield
// LOOP: nvvm.cluster.wait
// LOOP-NOT: _finish

// A row of 65536 bf16 split over a cluster of 4 CTAs of 512 threads. Each
// CTA reduces its 16384 columns (thread, warp butterfly, shared memory),
// then the CTAs exchange their partials through distributed shared memory.
// CHECK-LABEL: gpu.module @sum_rows
// Shared memory: one 8-byte mbarrier, 16 warp slots, 4 cluster slots.
// CHECK: llvm.mlir.global internal @__quack_smem_sum_rows() {{.*}} : !llvm.array<88 x i8>
// CHECK: gpu.func @sum_rows
// CHECK-SAME: quack.config = {alignment = 16 : i64, cluster_size = 4 : i64
// The CTA's rank selects its chunk of the row: column += rank * 16384.
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: arith.muli %{{.*}}, %c16384_i64 : i64
// The CTAs of a cluster share a row: row = ctaid.x / 4.
// CHECK: arith.divui %{{.*}}, %c4_i64{{.*}} : i64
// Thread 0 initialises the round's mbarrier and fences the init for the
// cluster; after a warp barrier (which orders the init before the arrive
// for racecheck), thread 0 arms it to expect 4 partials of 4 bytes; all
// threads arrive (relaxed) on the cluster barrier before the loads.
// CHECK: scf.if
// CHECK: nvvm.mbarrier.init %[[BAR0:.*]], %c1_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.bar.warp.sync
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16_i32{{.*}} : !llvm.ptr<3>, i32
// CHECK: nvvm.cluster.arrive.relaxed {aligned}
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: nvvm.shfl.sync  bfly
// CHECK: gpu.barrier
// The wait that matches the arrive comes after the loads, before the first
// remote store.
// CHECK: nvvm.cluster.wait {aligned}
// Thread t < 4 stores the CTA's partial into slot `rank` of CTA t, which
// completes 4 bytes on CTA t's mbarrier.
// CHECK: %[[SEND:.*]] = arith.cmpi ult, %{{.*}}, %c4_i32
// CHECK: scf.if %[[SEND]]
// CHECK: nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: nvvm.mapa %{{.*}}, %{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK: llvm.inline_asm has_side_effects "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32
// Every thread waits for phase 0 (all 16 bytes landed); lane j reads rank
// j mod 4's slot and a 4-lane butterfly combines them, in the same lanes and
// order in every CTA.
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %c0_i32{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK: arith.andi %{{.*}}, %c3_i32 : i32
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c2_i32
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c1_i32
// CHECK: gpu.return
quack.kernel @sum_rows(%x: memref<?x65536xbf16, strided<[?, 1]>> {quack.role = "input", quack.name = "x"},
                       %s: memref<?xf32> {quack.role = "output", quack.name = "s"}) {
  %row = quack.load %x : memref<?x65536xbf16, strided<[?, 1]>> -> vector<65536xbf16>
  %f = arith.extf %row : vector<65536xbf16> to vector<65536xf32>
  %sum = quack.reduce <add> %f : vector<65536xf32> -> f32
  quack.store %sum, %s : f32, memref<?xf32>
  quack.return
}
