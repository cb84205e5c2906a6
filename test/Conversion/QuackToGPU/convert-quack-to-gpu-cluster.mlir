// RUN: quack-opt %s --quack-select-config --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-allreduce-to-nvvm --convert-quack-copy-to-nvvm | FileCheck %s
// RUN: quack-opt %s --quack-select-config=prefetch=1 --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-allreduce-to-nvvm --convert-quack-copy-to-nvvm | FileCheck %s --check-prefix=LOOP

// With prefetch forced, a kernel without sums over rows loops over row
// groups on a persistent grid (no workspace, no finishing entry point) and
// loads the next group's row before exchanging the current one; by
// default (below), one cluster per row group.
// LOOP-LABEL: gpu.func @sum_rows(
// LOOP-SAME: prefetch = true
// LOOP-SAME: quack.persistent
// LOOP: quack.cluster.arrive relaxed
// LOOP: llvm.load {{.*}} -> vector<8xbf16>
// LOOP: scf.for {{.*}} iter_args({{.*}}, %[[PARITY:.*]] = %c0_i32)
// LOOP: llvm.load {{.*}} -> vector<8xbf16>
// LOOP: quack.cluster.wait
// LOOP: quack.cluster.exchange {{.*}} parity %[[PARITY]]
// LOOP: quack.cluster.barrier_arm @__quack_smem_sum_rows barriers [0] expect_tx [16]
// LOOP: quack.cluster.arrive{{$}}
// LOOP: %[[NEXT:.*]] = arith.xori %[[PARITY]], %c1_i32
// LOOP: scf.yield {{.*}}, %[[NEXT]]
// LOOP: quack.cluster.wait
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
// One mbarrier at offset 0, armed for the 4 CTAs' 4-byte partials; all
// threads arrive (relaxed) on the cluster barrier before the loads.
// CHECK: quack.cluster.barrier_init @__quack_smem_sum_rows barriers [0] expect_tx [16]
// CHECK-NEXT: quack.cluster.arrive relaxed
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: nvvm.shfl.sync  bfly
// CHECK: gpu.barrier
// The wait that matches the arrive comes after the loads and the exchange
// inside the CTA, before the exchange between CTAs.
// CHECK: quack.cluster.wait
// Lane j reads rank j mod 4's partial (slots at byte 72, after the
// mbarrier and the 16 warps' slots); a 4-lane butterfly combines them, in
// the same lanes and order in every CTA.
// CHECK: %[[SRC:.*]] = arith.andi %{{.*}}, %c3_i32 : i32
// CHECK: %[[ALL:.*]] = quack.cluster.exchange @__quack_smem_sum_rows barrier 0 slots 72 parity %{{.*}} from %[[SRC]] (%{{.*}}) {cluster_size = 4 : i64, cta_threads = 512 : i64} : f32
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %[[ALL]], %c2_i32
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c1_i32
// CHECK-NOT: quack.cluster
// CHECK: gpu.return
quack.kernel @sum_rows(%x: memref<?x65536xbf16, strided<[?, 1]>> {quack.role = "input", quack.name = "x"},
                       %s: memref<?xf32> {quack.role = "output", quack.name = "s"}) {
  %row = quack.load %x : memref<?x65536xbf16, strided<[?, 1]>> -> vector<65536xbf16>
  %f = arith.extf %row : vector<65536xbf16> to vector<65536xf32>
  %sum = quack.reduce <add> %f : vector<65536xf32> -> f32
  quack.store %sum, %s : f32, memref<?xf32>
  quack.return
}
