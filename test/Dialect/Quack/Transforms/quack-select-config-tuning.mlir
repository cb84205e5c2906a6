// RUN: quack-opt %s --split-input-file --quack-select-config="tuning=h100" | FileCheck %s
// RUN: quack-opt %s --split-input-file --quack-select-config | FileCheck %s --check-prefix=ARCH
// RUN: not quack-opt %s --split-input-file --quack-select-config="tuning=h200" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not quack-opt %s --split-input-file --quack-select-config="arch=sm_80 tuning=h100" 2>&1 | FileCheck %s --check-prefix=NONE

// The tuning target h100: kernels/tuning/sm_90-h100.tsv's entry for
// cross_entropy_fwd with 2-byte elements at N = 1024 (2 vectors per thread,
// one row per CTA) takes precedence over sm_90.tsv's (8 vectors, 8 rows),
// and the kernel's mark names the table that chose its config.
// CHECK: quack.kernel @cross_entropy_fwd(%{{.*}}: memref<?x1024xbf16>
// CHECK-SAME: quack.config = {{{.*}}rows_per_cta = 1 : i64, threads_per_row = 64 : i64, vector = 8 : i64, vectors_per_thread = 2 : i64}
// CHECK-SAME: tuned: kernels/tuning/sm_90-h100.tsv:{{[0-9]+}}
// CHECK-SAME: quack.config_tuned = "sm_90-h100.tsv"
// ARCH: quack.kernel @cross_entropy_fwd(%{{.*}}: memref<?x1024xbf16>
// ARCH-SAME: rows_per_cta = 8 : i64, threads_per_row = 16 : i64, vector = 8 : i64, vectors_per_thread = 8 : i64
// ARCH-SAME: quack.config_tuned = "sm_90.tsv"
quack.kernel @cross_entropy_fwd(%x: memref<?x1024xbf16> {quack.name = "x"},
                      %out: memref<?xf32> {quack.name = "out", quack.role = "output"}) {
  %row = quack.load %x : memref<?x1024xbf16> -> vector<1024xbf16>
  %f = arith.extf %row : vector<1024xbf16> to vector<1024xf32>
  %l = quack.logsumexp %f : vector<1024xf32> -> f32
  quack.store %l, %out : f32, memref<?xf32>
  quack.return
}

// -----

// Where the target's table has no entry (N = 4096), the architecture's
// applies.
// CHECK: quack.kernel @cross_entropy_fwd(%{{.*}}: memref<?x4096xbf16>
// CHECK-SAME: quack.config_tuned = "sm_90.tsv"
// ARCH: quack.kernel @cross_entropy_fwd(%{{.*}}: memref<?x4096xbf16>
// ARCH-SAME: quack.config_tuned = "sm_90.tsv"
quack.kernel @cross_entropy_fwd(%x: memref<?x4096xbf16> {quack.name = "x"},
                      %out: memref<?xf32> {quack.name = "out", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xbf16> -> vector<4096xbf16>
  %f = arith.extf %row : vector<4096xbf16> to vector<4096xf32>
  %l = quack.logsumexp %f : vector<4096xf32> -> f32
  quack.store %l, %out : f32, memref<?xf32>
  quack.return
}

// UNKNOWN: error: unknown tuning target 'h200' for sm_90; known: h100
// NONE: error: unknown tuning target 'h100' for sm_80 (it has none)
