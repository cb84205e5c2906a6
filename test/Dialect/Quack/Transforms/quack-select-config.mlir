// RUN: quack-opt %s -split-input-file --quack-select-config | FileCheck %s
// RUN: quack-opt %s -split-input-file --quack-select-config="alignment=4" | FileCheck %s --check-prefix=ALIGN4
// RUN: quack-opt %s -split-input-file --quack-select-config="threads-per-row=64 rows-per-cta=2" | FileCheck %s --check-prefix=FORCED

// bf16, N = 4096: 128-bit vectors of 8 elements, two per thread (rows of at
// most 1024 vectors; longer rows get four).
// CHECK-LABEL: quack.kernel @bf16_4096
// CHECK-SAME: quack.config = {alignment = 16 : i64, cluster_size = 1 : i64, copy = "global", min_ctas_per_sm = 0 : i64, prefetch = false, remat = false, rows_per_cta = 1 : i64, threads_per_row = 256 : i64, vector = 8 : i64, vectors_per_thread = 2 : i64}
// ALIGN4-LABEL: quack.kernel @bf16_4096
// ALIGN4-SAME: vector = 2 : i64
// FORCED-LABEL: quack.kernel @bf16_4096
// FORCED-SAME: rows_per_cta = 2 : i64, threads_per_row = 64 : i64, vector = 8 : i64, vectors_per_thread = 8 : i64
quack.kernel @bf16_4096(%x: memref<?x4096xbf16, strided<[?, 1]>>) {
  quack.return
}

// -----

// f32, N = 1024: vectors of 4, 128 threads per row.
// CHECK-LABEL: quack.kernel @f32_1024
// CHECK-SAME: rows_per_cta = 1 : i64, threads_per_row = 128 : i64, vector = 4 : i64, vectors_per_thread = 2 : i64
quack.kernel @f32_1024(%x: memref<?x1024xf32>) {
  quack.return
}

// -----

// An odd N allows only scalar accesses: 7 elements, 4 threads per row; small
// rows share a CTA of 128 threads.
// CHECK-LABEL: quack.kernel @odd
// CHECK-SAME: rows_per_cta = 32 : i64, threads_per_row = 4 : i64, vector = 1 : i64, vectors_per_thread = 2 : i64
quack.kernel @odd(%x: memref<?x7xf16, strided<[?, 1]>>) {
  quack.return
}

// -----

// Mixed element types: the widest one (f32) sets the vector width.
// CHECK-LABEL: quack.kernel @mixed
// CHECK-SAME: vector = 4 : i64
quack.kernel @mixed(%x: memref<?x256xbf16>, %w: memref<256xf32>) {
  quack.return
}
