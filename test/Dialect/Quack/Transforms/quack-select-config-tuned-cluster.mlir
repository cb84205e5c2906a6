// RUN: quack-opt %s --quack-select-config | FileCheck %s
// RUN: quack-opt %s --quack-select-config="tuned=false" | FileCheck %s --check-prefix=MODEL
// RUN: quack-opt %s --quack-select-config="alignment=2" | FileCheck %s --check-prefix=NARROW
// RUN: quack-opt %s --quack-select-config="threads-per-row=128" | FileCheck %s --check-prefix=FORCED

// On the cluster path, an entry of kernels/tuning/sm_90.tsv with a cluster
// size (cross_entropy_fwd, 2-byte elements, N = 65536: 16 vectors per
// thread over a cluster of 2) sets the cluster too.
// CHECK: quack.kernel @cross_entropy_fwd
// CHECK-SAME: cluster_size = 2 : i64
// CHECK-SAME: threads_per_row = 256 : i64, vector = 8 : i64, vectors_per_thread = 16 : i64
// CHECK-SAME: cluster=2 (tuned); threads_per_row=256 (~16 of 4096 vectors per thread; tuned: kernels/tuning/sm_90.tsv:{{[0-9]+}})
// Without the table, the model splits the row over 4 CTAs of 512 threads.
// MODEL: quack.kernel @cross_entropy_fwd
// MODEL-SAME: cluster_size = 4 : i64
// MODEL-SAME: threads_per_row = 512 : i64, vector = 8 : i64, vectors_per_thread = 4 : i64
// MODEL-NOT: tuned
// An unaligned view (2-byte accesses: 65536 vectors per row) would need
// 2048 threads per CTA for the entry's 16 vectors per thread: the entry is
// ignored and the model decides.
// NARROW: quack.kernel @cross_entropy_fwd
// NARROW-SAME: cluster_size = 8 : i64
// NARROW-NOT: tuned
// A forced knob wins over the table.
// FORCED: quack.kernel @cross_entropy_fwd
// FORCED-SAME: threads_per_row = 128 : i64
// FORCED-NOT: tuned
quack.kernel @cross_entropy_fwd(%x: memref<?x65536xbf16> {quack.name = "x"},
                                %out: memref<?xf32> {quack.name = "out", quack.role = "output"}) {
  %row = quack.load %x : memref<?x65536xbf16> -> vector<65536xbf16>
  %f = arith.extf %row : vector<65536xbf16> to vector<65536xf32>
  %l = quack.logsumexp %f : vector<65536xf32> -> f32
  quack.store %l, %out : f32, memref<?xf32>
  quack.return
}
