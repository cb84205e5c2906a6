// RUN: quack-opt %s --quack-select-config="cluster-size=3" -verify-diagnostics
// RUN: not quack-opt %s --quack-select-config="cluster-size=32" 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: not quack-opt %s --quack-select-config="cluster-size=2 rows-per-cta=2" 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not quack-opt %s --quack-select-config="cluster-size=2 arch=sm_80" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not quack-opt %s --quack-select-config="cluster-size=16 threads-per-row=8" 2>&1 | FileCheck %s --check-prefix=FEW
// FEW: a cluster of 16 needs CTAs of at least as many threads, got 8

// expected-error @+1 {{cluster size must be a power of two up to 16, got 3}}
quack.kernel @k(%x: memref<?x4096xbf16>) {
  quack.return
}
// BIG: cluster size must be a power of two up to 16, got 32
// ROWS: rows_per_cta = 2 cannot be combined with a cluster of 2: a cluster splits one row
// ARCH: N = 4096 needs a cluster of 2 CTAs, which needs sm_90 or later (target sm_80)
