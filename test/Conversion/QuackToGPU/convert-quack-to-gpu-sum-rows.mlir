// RUN: quack-opt %s --quack-select-config --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-allreduce-to-nvvm --convert-quack-copy-to-nvvm | FileCheck %s
// RUN: quack-opt %s --quack-select-config=prefetch=0 --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-allreduce-to-nvvm --convert-quack-copy-to-nvvm | FileCheck %s --check-prefix=NOPRE

// A sum over rows: the grid is persistent, each CTA loops over row groups
// from ctaid.x in steps of nctaid.x carrying one f32 partial per element it
// owns, writes the partials to the workspace [outputs, slots, N], and a
// second entry point, dw_finish, sums the slots column by column. With two
// rows per CTA, the rows first add their partials in shared memory
// (__quack_rowsums_dw, 2 x 1024 f32), so that each CTA writes one slot.
// CHECK-LABEL: gpu.module @dw
// CHECK: llvm.mlir.global internal @__quack_smem_dw_finish() {{.*}} : !llvm.array<2048 x f32>
// CHECK: llvm.mlir.global internal @__quack_rowsums_dw() {{.*}} : !llvm.array<2048 x f32>
// CHECK: gpu.func @dw(%{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1>, %[[WS:.*]]: !llvm.ptr<1>)
// CHECK-SAME: {dtype = "bf16", kind = "row", name = "dw", role = "output"}, {dtype = "f32", kind = "workspace", name = "workspace", role = "scratch"}
// CHECK-SAME: quack.finish = {columns_per_cta = 128 : i64, symbol = "dw_finish", threads = 512 : i64}
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[STEP32:.*]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK: %[[STEP:.*]] = arith.extui %[[STEP32]]
// CHECK: %[[ACC:.*]]:2 = scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step %[[STEP]] iter_args(%[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}}) -> (vector<8xf32>, vector<8xf32>)  : i64 {
// CHECK: %[[ROW0:.*]] = arith.muli %[[G]], %c2_i64
// CHECK: %[[ROW:.*]] = arith.addi %[[ROW0]]
// CHECK: %[[VALID:.*]] = arith.cmpi slt, %[[ROW]], %arg0 : i64
// CHECK: quack_smem_dw
// CHECK: gpu.barrier
// Rows past M add nothing.
// CHECK: %[[T0:.*]] = arith.select %[[VALID]], %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: %[[N0:.*]] = arith.addf %[[A0]], %[[T0]] : vector<8xf32>
// CHECK: %[[T1:.*]] = arith.select %[[VALID]], %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: %[[N1:.*]] = arith.addf %[[A1]], %[[T1]] : vector<8xf32>
// The next iteration reuses the reduction slots.
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield %[[N0]], %[[N1]]
// Each thread stores its partials in its row's part of the buffer; after a
// barrier, row 0's threads add rows 0 and 1 (in that order) and write slot
// ctaid.x of the workspace.
// CHECK: llvm.mlir.addressof @__quack_rowsums_dw
// CHECK: llvm.store %[[ACC]]#0, %{{.*}} : vector<8xf32>, !llvm.ptr<3>
// CHECK: llvm.store %[[ACC]]#1, %{{.*}} : vector<8xf32>, !llvm.ptr<3>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if
// CHECK: %[[R0:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> vector<8xf32>
// CHECK: %[[R1:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> vector<8xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[R0]], %[[R1]] : vector<8xf32>
// CHECK: llvm.getelementptr %[[WS]]
// CHECK: llvm.store %[[SUM]], %{{.*}} : vector<8xf32>, !llvm.ptr<1>
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<8xf32>
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<8xf32>
// CHECK: llvm.store %{{.*}} : vector<8xf32>, !llvm.ptr<1>
// The runtime passes row groups x rows per CTA slots: dw_finish reads one
// per row group. 16 splits, 4 loads each before adding: step 64.
// CHECK: gpu.func @dw_finish(%[[SLOTS:.*]]: i64, %[[WS2:.*]]: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 512, 1, 1>}
// CHECK: %[[GROUPS:.*]] = arith.divui %[[SLOTS]], %c2_i64 : i64
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[GROUPS]] step %c64_i64
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: gpu.barrier
// CHECK-COUNT-16: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<4xbf16>, !llvm.ptr<1>

quack.kernel @dw(%x: memref<?x1024xbf16, strided<[?, 1]>>,
                 %dw: memref<1024xbf16> {quack.role = "output", quack.name = "dw"}) {
  %row = quack.load %x : memref<?x1024xbf16, strided<[?, 1]>> -> vector<1024xbf16>
  %f = arith.extf %row : vector<1024xbf16> to vector<1024xf32>
  %s = quack.reduce <add> %f : vector<1024xf32> -> f32
  %b = vector.broadcast %s : f32 to vector<1024xf32>
  %g = arith.mulf %f, %b : vector<1024xf32>
  quack.sum_rows %g, %dw : vector<1024xf32>, memref<1024xbf16>
  quack.return
}

// On the cluster path (bf16, N = 16384: 2 CTAs) the loop carries the parity
// of the exchange's mbarrier phase and, with prefetch (chosen there), the
// next row group's inputs: the first group is loaded before the loop, each
// iteration first loads the next one and yields it. Each iteration waits on
// the parity, re-arms the mbarriers (without initialising them again), and
// ends with a CTA barrier (the warps' slots) and a cluster arrive whose wait
// comes in the next iteration just before the first st.async; the wait for
// the last arrive follows the loop. The CTA, alone on its SM, may use 128
// registers.
// CHECK-LABEL: gpu.module @dw_cluster
// CHECK: gpu.func @dw_cluster
// CHECK-SAME: nvvm.maxnreg = 128 : i32
// CHECK-SAME: prefetch = true
// CHECK: quack.cluster.barrier_init @__quack_smem_dw_cluster barriers [0] expect_tx [8]
// CHECK: quack.cluster.arrive relaxed
// CHECK-NOT: quack.cluster.wait
// CHECK: %[[FIRST0:.*]] = scf.if
// CHECK: llvm.load {{.*}} -> vector<8xbf16>
// CHECK: %[[FIRST1:.*]] = scf.if
// CHECK: llvm.load {{.*}} -> vector<8xbf16>
// CHECK: scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[FIRST0]], %{{.*}} = %[[FIRST1]], %[[PARITY:.*]] = %c0_i32{{.*}}) -> ({{.*}}, vector<8xbf16>, vector<8xbf16>, i32)
// CHECK: %[[NEXT0:.*]] = scf.if
// CHECK: llvm.load {{.*}} -> vector<8xbf16>
// CHECK: %[[NEXT1:.*]] = scf.if
// CHECK: llvm.load {{.*}} -> vector<8xbf16>
// CHECK: gpu.barrier
// CHECK-NOT: quack.cluster.exchange
// CHECK: quack.cluster.wait
// CHECK-NOT: quack.cluster.{{arrive|wait}}
// CHECK: quack.cluster.exchange {{.*}} parity %[[PARITY]]
// CHECK-NOT: quack.cluster.barrier_init
// CHECK: quack.cluster.barrier_arm @__quack_smem_dw_cluster barriers [0] expect_tx [8]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: quack.cluster.arrive{{$}}
// CHECK: %[[FLIP:.*]] = arith.xori %[[PARITY]], %c1_i32
// CHECK: scf.yield {{.*}}, %[[NEXT0]], %[[NEXT1]], %[[FLIP]] : {{.*}}, vector<8xbf16>, vector<8xbf16>, i32
// CHECK-NEXT: }
// CHECK-NEXT: quack.cluster.wait
// CHECK: gpu.func @dw_cluster_finish

// Without prefetch, the loop carries the partials and the parity only, and
// loads the row group it is on.
// NOPRE-LABEL: gpu.func @dw_cluster(
// NOPRE-SAME: prefetch = false
// NOPRE-NOT: llvm.load
// NOPRE: scf.for {{.*}} iter_args(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}} = %c0_i32{{.*}}) -> (vector<8xf32>, vector<8xf32>, i32)
// NOPRE: llvm.load {{.*}} -> vector<8xbf16>
// NOPRE: quack.cluster.wait
// NOPRE: quack.cluster.exchange
// NOPRE: quack.cluster.arrive{{$}}
// NOPRE: scf.yield {{.*}} : vector<8xf32>, vector<8xf32>, i32
// NOPRE-NEXT: }
// NOPRE-NEXT: quack.cluster.wait
quack.kernel @dw_cluster(%x: memref<?x16384xbf16, strided<[?, 1]>>,
                         %dw: memref<16384xbf16> {quack.role = "output", quack.name = "dw"}) {
  %row = quack.load %x : memref<?x16384xbf16, strided<[?, 1]>> -> vector<16384xbf16>
  %f = arith.extf %row : vector<16384xbf16> to vector<16384xf32>
  %s = quack.reduce <add> %f : vector<16384xf32> -> f32
  %b = vector.broadcast %s : f32 to vector<16384xf32>
  %g = arith.mulf %f, %b : vector<16384xf32>
  quack.sum_rows %g, %dw : vector<16384xf32>, memref<16384xbf16>
  quack.return
}
