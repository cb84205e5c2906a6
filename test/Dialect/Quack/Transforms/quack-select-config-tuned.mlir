// RUN: quack-opt %s --quack-select-config | FileCheck %s
// RUN: quack-opt %s --quack-select-config="arch=sm_90a" | FileCheck %s
// RUN: quack-opt %s --quack-select-config="tuned=false" | FileCheck %s --check-prefix=MODEL
// RUN: quack-opt %s --quack-select-config="arch=sm_80" | FileCheck %s --check-prefix=MODEL
// RUN: quack-opt %s --quack-select-config="threads-per-row=128" | FileCheck %s --check-prefix=FORCED

// kernels/tuning/sm_90.tsv has an entry for cross_entropy_fwd with 2-byte
// elements at N = 4096: 8 vectors per thread, 4 rows per CTA.
// CHECK: quack.kernel @cross_entropy_fwd
// CHECK-SAME: quack.config = {{{.*}}rows_per_cta = 4 : i64, threads_per_row = 64 : i64, vector = 8 : i64, vectors_per_thread = 8 : i64}
// CHECK-SAME: quack.config_reason = "{{.*}}tuned: kernels/tuning/sm_90.tsv:{{[0-9]+}}); rows_per_cta=4 (tuned)"
// The kernel is marked, for quackc's spill checks on the table's configs.
// CHECK-SAME: quack.config_tuned
// The model's choice, without the table (or on an arch without one).
// MODEL: quack.kernel @cross_entropy_fwd
// MODEL-SAME: rows_per_cta = 1 : i64, threads_per_row = 256 : i64, vector = 8 : i64, vectors_per_thread = 2 : i64
// MODEL-NOT: tuned
// MODEL-NOT: quack.config_tuned
// A forced knob wins over the table.
// FORCED: quack.kernel @cross_entropy_fwd
// FORCED-SAME: threads_per_row = 128 : i64
// FORCED-NOT: tuned:
// FORCED-NOT: quack.config_tuned
quack.kernel @cross_entropy_fwd(%x: memref<?x4096xbf16> {quack.name = "x"},
                                %out: memref<?xf32> {quack.name = "out", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xbf16> -> vector<4096xbf16>
  %f = arith.extf %row : vector<4096xbf16> to vector<4096xf32>
  %l = quack.logsumexp %f : vector<4096xf32> -> f32
  quack.store %l, %out : f32, memref<?xf32>
  quack.return
}
