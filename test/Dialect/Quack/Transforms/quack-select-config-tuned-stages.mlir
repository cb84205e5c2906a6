// RUN: quack-opt %s --quack-select-config | FileCheck %s
// RUN: quack-opt %s --quack-select-config="tuned=false" | FileCheck %s --check-prefix=MODEL
// RUN: quack-opt %s --quack-select-config="prefetch=0" | FileCheck %s --check-prefix=NOPREFETCH

// A kernel with a sum over rows at N = 16384: the model splits its rows
// over a cluster (it gives a CTA half the row it gives other kernels), but
// the entry of kernels/tuning/sm_90.tsv (rmsnorm_bwd, 2-byte elements,
// N = 16384: 2 vectors per thread, one CTA per row, bulk copies, 3 stages)
// is for one CTA of 1024 threads, which may hold the row: it applies, and
// its stage count makes the kernel a loop over three shared-memory buffers.
// CHECK: quack.kernel @rmsnorm_bwd
// CHECK-SAME: cluster_size = 1 : i64, copy = "bulk"
// CHECK-SAME: prefetch = true
// CHECK-SAME: stages = 3 : i64, threads_per_row = 1024 : i64
// CHECK-SAME: vectors_per_thread = 2 : i64
// CHECK-SAME: copy=bulk (tuned); prefetch=1 stages=3 (tuned)
// MODEL: quack.kernel @rmsnorm_bwd
// MODEL-SAME: cluster_size = 2 : i64
// MODEL-NOT: tuned
// A forced prefetch=0 keeps the entry's split and copy path, not its stages.
// NOPREFETCH: quack.kernel @rmsnorm_bwd
// NOPREFETCH-SAME: cluster_size = 1 : i64, copy = "bulk"
// NOPREFETCH-SAME: prefetch = false
// NOPREFETCH-NOT: stages=3 (tuned)
quack.kernel @rmsnorm_bwd(%x: memref<?x16384xbf16> {quack.name = "x"},
                          %dy: memref<?x16384xbf16> {quack.name = "dy"},
                          %dx: memref<?x16384xbf16> {quack.name = "dx", quack.role = "output"},
                          %dw: memref<16384xbf16> {quack.name = "dw", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x16384xbf16> -> vector<16384xbf16>
  %xf = arith.extf %xr : vector<16384xbf16> to vector<16384xf32>
  %dyr = quack.load %dy : memref<?x16384xbf16> -> vector<16384xbf16>
  %dyf = arith.extf %dyr : vector<16384xbf16> to vector<16384xf32>
  %p = arith.mulf %xf, %dyf : vector<16384xf32>
  %s = quack.reduce <add> %p : vector<16384xf32> -> f32
  %sb = vector.broadcast %s : f32 to vector<16384xf32>
  %o = arith.subf %dyf, %sb : vector<16384xf32>
  %ot = arith.truncf %o : vector<16384xf32> to vector<16384xbf16>
  quack.store %ot, %dx : vector<16384xbf16>, memref<?x16384xbf16>
  quack.sum_rows %p, %dw : vector<16384xf32>, memref<16384xbf16>
  quack.return
}
