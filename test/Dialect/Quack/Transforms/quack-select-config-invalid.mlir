// RUN: quack-opt %s -split-input-file --quack-select-config="vector=3" -verify-diagnostics
// RUN: not quack-opt %s --quack-select-config="threads-per-row=48" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not quack-opt %s --quack-select-config="arch=gfx90a" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not quack-opt %s --quack-select-config="alignment=12" 2>&1 | FileCheck %s --check-prefix=ALIGN
// RUN: not quack-opt %s --quack-select-config="threads-per-row=1024 rows-per-cta=2" 2>&1 | FileCheck %s --check-prefix=CTA
// RUN: not quack-opt %s --quack-select-config="prefetch=2" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not quack-opt %s --quack-select-config="remat=-1" 2>&1 | FileCheck %s --check-prefix=REMAT
// RUN: not quack-opt %s --quack-select-config="sink=2" 2>&1 | FileCheck %s --check-prefix=SINK

// THREADS: threads-per-row must be a power of two up to 1024, got 48
// ARCH: unknown architecture 'gfx90a'; expected sm_90, sm_90a, sm_100, ...
// ALIGN: alignment must be a power of two, got 12
// CTA: threads_per_row * rows_per_cta = 2048 exceeds 1024
// PREFETCH: prefetch must be 0 or 1, got 2
// REMAT: remat must be 0 or 1, got -1
// SINK: sink must be 0 or 1, got 2

// expected-error @+1 {{cannot use vector = 3: it must be a power of two dividing N = 96 with vector * 2 bytes within the alignment of 16}}
quack.kernel @bad_vector(%x: memref<?x96xbf16>) {
  quack.return
}

