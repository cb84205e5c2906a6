// RUN: quack-opt %s -split-input-file --quack-select-config | FileCheck %s
// RUN: quack-opt %s -split-input-file --quack-select-config="cluster-size=8" | FileCheck %s --check-prefix=FORCED
// RUN: quack-opt %s -split-input-file --quack-select-config="copy=0" | FileCheck %s --check-prefix=GLOBAL

// Rows longer than 16384 elements are split over the CTAs of a cluster:
// 32 KB of the row per CTA, at most 512 threads per CTA (so that each may
// have 128 registers), one row per cluster.

// bf16, N = 65536: 4 CTAs of 16384 elements, 512 threads of four 8-element
// vectors each.
// CHECK-LABEL: quack.kernel @bf16_65536
// CHECK-SAME: cluster_size = 4 : i64, copy = "global", min_ctas_per_sm = 0 : i64, prefetch = false, remat = false, rows_per_cta = 1 : i64, threads_per_row = 512 : i64, vector = 8 : i64, vectors_per_thread = 4 : i64
// FORCED-LABEL: quack.kernel @bf16_65536
// FORCED-SAME: cluster_size = 8 : i64, copy = "global", min_ctas_per_sm = 0 : i64, prefetch = false, remat = false, rows_per_cta = 1 : i64, threads_per_row = 512 : i64, vector = 8 : i64, vectors_per_thread = 2 : i64
quack.kernel @bf16_65536(%x: memref<?x65536xbf16, strided<[?, 1]>>) {
  quack.return
}

// -----

// f32, N = 131072: 16 CTAs of 8192 elements.
// CHECK-LABEL: quack.kernel @f32_131072
// CHECK-SAME: cluster_size = 16 : i64, copy = "global", min_ctas_per_sm = 0 : i64, prefetch = false, remat = false, rows_per_cta = 1 : i64, threads_per_row = 512 : i64, vector = 4 : i64, vectors_per_thread = 4 : i64
quack.kernel @f32_131072(%x: memref<?x131072xf32, strided<[?, 1]>>) {
  quack.return
}

// -----

// bf16, N = 262144: the largest cluster, 16 CTAs.
// CHECK-LABEL: quack.kernel @bf16_262144
// CHECK-SAME: cluster_size = 16 : i64, copy = "global", min_ctas_per_sm = 0 : i64, prefetch = false, remat = false, rows_per_cta = 1 : i64, threads_per_row = 512 : i64, vector = 8 : i64, vectors_per_thread = 4 : i64
quack.kernel @bf16_262144(%x: memref<?x262144xbf16, strided<[?, 1]>>) {
  quack.return
}

// -----

// N = 16384 still fits one CTA: no cluster.
// CHECK-LABEL: quack.kernel @bf16_16384
// CHECK-SAME: cluster_size = 1 : i64
quack.kernel @bf16_16384(%x: memref<?x16384xbf16, strided<[?, 1]>>) {
  quack.return
}

// -----

// A sum over rows keeps an f32 partial sum per element beside the row, so a
// CTA takes half as much: bf16, N = 16384 (one CTA without the sum) splits
// over a cluster of 2 CTAs of 8192 elements. The persistent loop of such a
// CTA, alone on its SM, loads the next row group ahead (prefetch): it then
// carries 16 partials and twice 8 registers of bf16 inputs.
// CHECK-LABEL: quack.kernel @sum_rows_16384
// CHECK-SAME: cluster_size = 2 : i64, copy = "global", min_ctas_per_sm = 0 : i64, prefetch = true, remat = false, rows_per_cta = 1 : i64, threads_per_row = 512 : i64
// CHECK-SAME: quack.config_reason = "{{.*}}prefetch=1 (one CTA per SM loops over rows; the loop carries 32 registers)"
quack.kernel @sum_rows_16384(%x: memref<?x16384xbf16, strided<[?, 1]>>,
                             %dw: memref<16384xbf16> {quack.role = "output"}) {
  %v = quack.load %x : memref<?x16384xbf16, strided<[?, 1]>> -> vector<16384xbf16>
  %f = arith.extf %v : vector<16384xbf16> to vector<16384xf32>
  quack.sum_rows %f, %dw : vector<16384xf32>, memref<16384xbf16>
  quack.return
}

// -----

// Two sums over rows, two bf16 inputs and a per-row scalar (layernorm_bwd
// with db): the loop would carry 2 x 16 partials and twice 2 x 8 + 1
// registers of inputs, more than the 64 worth trying. Bulk copies then
// prefetch the next row group into a second shared-memory buffer, and the
// loop carries only the partials and the per-row scalar. With copy=0 (no
// bulk copies), no prefetch.
// CHECK-LABEL: quack.kernel @two_sums_16384
// CHECK-SAME: cluster_size = 2 : i64, copy = "bulk", min_ctas_per_sm = 0 : i64, prefetch = true
// CHECK-SAME: copy=bulk (two row groups would take 66 registers of the loop: the next is copied into shared memory); prefetch=1 (one CTA per SM loops over rows; the loop carries 34 registers)
// GLOBAL-LABEL: quack.kernel @two_sums_16384
// GLOBAL-SAME: cluster_size = 2 : i64, copy = "global", min_ctas_per_sm = 0 : i64, prefetch = false
quack.kernel @two_sums_16384(%x: memref<?x16384xbf16, strided<[?, 1]>>,
                             %y: memref<?x16384xbf16, strided<[?, 1]>>,
                             %rstd: memref<?xf32>,
                             %dw: memref<16384xbf16> {quack.role = "output"},
                             %db: memref<16384xbf16> {quack.role = "output"}) {
  %v = quack.load %x : memref<?x16384xbf16, strided<[?, 1]>> -> vector<16384xbf16>
  %u = quack.load %y : memref<?x16384xbf16, strided<[?, 1]>> -> vector<16384xbf16>
  %r = quack.load %rstd : memref<?xf32> -> f32
  %f = arith.extf %v : vector<16384xbf16> to vector<16384xf32>
  %e = arith.extf %u : vector<16384xbf16> to vector<16384xf32>
  %b = vector.broadcast %r : f32 to vector<16384xf32>
  %g = arith.mulf %e, %b : vector<16384xf32>
  quack.sum_rows %f, %dw : vector<16384xf32>, memref<16384xbf16>
  quack.sum_rows %g, %db : vector<16384xf32>, memref<16384xbf16>
  quack.return
}

// -----

// Without the sum, the same row stays in one CTA.
// CHECK-LABEL: quack.kernel @no_sum_16384
// CHECK-SAME: cluster_size = 1 : i64
quack.kernel @no_sum_16384(%x: memref<?x16384xbf16, strided<[?, 1]>>) {
  quack.return
}
