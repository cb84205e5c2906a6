// RUN: quack-opt %s -split-input-file --convert-quack-to-gpu -verify-diagnostics

// expected-error @+1 {{has no 'quack.config'; run quack-select-config first}}
quack.kernel @unconfigured(%x: memref<?x8xf32>) {
  quack.return
}

// -----

// expected-error @+1 {{'quack.config' needs a boolean 'prefetch'}}
quack.kernel @int_prefetch(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, prefetch = 1, rows_per_cta = 1, threads_per_row = 2, vector = 4, vectors_per_thread = 1}} {
  quack.return
}

// -----

// expected-error @+1 {{'quack.config' needs a boolean 'remat'}}
quack.kernel @int_remat(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, remat = 1, rows_per_cta = 1, threads_per_row = 2, vector = 4, vectors_per_thread = 1}} {
  quack.return
}

// -----

// expected-error @+1 {{'quack.config' needs a boolean 'sink'}}
quack.kernel @int_sink(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, rows_per_cta = 1, sink = 1, threads_per_row = 2, vector = 4, vectors_per_thread = 1}} {
  quack.return
}

// -----

// expected-error @+1 {{'quack.config' needs a positive integer 'shared_sums'}}
quack.kernel @bad_sums(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, rows_per_cta = 1, shared_sums = -1, threads_per_row = 2, vector = 4, vectors_per_thread = 1}} {
  quack.return
}

// -----

// expected-error @+1 {{'quack.config' needs a positive integer 'vector'}}
quack.kernel @no_vector(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 2, vectors_per_thread = 1}} {
  quack.return
}

// -----

// expected-error @+1 {{'quack.config' needs power-of-two 'threads_per_row' and 'vector'}}
quack.kernel @odd_threads(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 3, vector = 4, vectors_per_thread = 1}} {
  quack.return
}

// -----

// expected-error @+1 {{'quack.config' asks for 2048 threads per CTA; at most 1024}}
quack.kernel @huge_cta(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, rows_per_cta = 2, threads_per_row = 1024, vector = 4, vectors_per_thread = 1}} {
  quack.return
}

// -----

// expected-error @+1 {{vector width 16 does not divide N = 8}}
quack.kernel @wide_vector(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 1, vector = 16, vectors_per_thread = 1}} {
  quack.return
}

// -----

// expected-error @+1 {{config covers 8 elements of a row of 64}}
quack.kernel @short_config(%x: memref<?x64xf32>) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 2, vector = 4, vectors_per_thread = 1}} {
  quack.return
}

// -----

quack.kernel @not_splat(%x: memref<?x4xf32>, %y: memref<?x4xf32> {quack.role = "output"}) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 1, vector = 4, vectors_per_thread = 1}} {
  // expected-error @+1 {{row constants must be splats}}
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
  quack.store %c, %y : vector<4xf32>, memref<?x4xf32>
  quack.return
}

// -----

quack.kernel @not_elementwise(%x: memref<?x4xf32>, %y: memref<?x4xf32> {quack.role = "output"}) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 1, vector = 4, vectors_per_thread = 1}} {
  %r = quack.load %x : memref<?x4xf32> -> vector<4xf32>
  // expected-error @+1 {{cannot be distributed over a row: it is not an elementwise operation}}
  %s = vector.shuffle %r, %r [3, 2, 1, 0] : vector<4xf32>, vector<4xf32>
  quack.store %s, %y : vector<4xf32>, memref<?x4xf32>
  quack.return
}

// -----

quack.kernel @f64_reduce(%x: memref<?x4xf64>, %y: memref<?xf64> {quack.role = "output"}) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 1, vector = 2, vectors_per_thread = 2}} {
  %r = quack.load %x : memref<?x4xf64> -> vector<4xf64>
  // expected-error @+1 {{reduces 'f64'; the lowering supports f32 and i32 reductions}}
  %s = quack.reduce <add> %r : vector<4xf64> -> f64
  quack.store %s, %y : f64, memref<?xf64>
  quack.return
}

// -----

quack.kernel @regions(%x: memref<?x4xf32>, %c: i1, %y: memref<?xf32> {quack.role = "output"}) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 1, vector = 4, vectors_per_thread = 1}} {
  // expected-error @+1 {{has regions, which row kernels do not support yet}}
  %v = scf.if %c -> (f32) {
    %one = arith.constant 1.0 : f32
    scf.yield %one : f32
  } else {
    %two = arith.constant 2.0 : f32
    scf.yield %two : f32
  }
  quack.store %v, %y : f32, memref<?xf32>
  quack.return
}

// -----

// A gather after a row store whose index is only computed after the store
// cannot move before it.
quack.kernel @late_index(%x: memref<?x4xf32>, %t: memref<?xi64>, %y: memref<?x4xf32> {quack.role = "output"}, %v: memref<?xf32> {quack.role = "output"}) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 1, vector = 4, vectors_per_thread = 1}} {
  %r = quack.load %x : memref<?x4xf32> -> vector<4xf32>
  quack.store %r, %y : vector<4xf32>, memref<?x4xf32>
  %ti = quack.load %t : memref<?xi64> -> i64
  // expected-error @+1 {{reads an input after a row has been written, at an index that is computed after that write; compute the index earlier}}
  %g = quack.gather %x[%ti] : memref<?x4xf32>, i64 -> f32
  quack.store %g, %v : f32, memref<?xf32>
  quack.return
}

// -----

// expected-error @+1 {{'quack.config' needs 'copy' = "global", "bulk" or "tensor"}}
quack.kernel @bad_copy(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, copy = "tma", rows_per_cta = 1, threads_per_row = 2, vector = 4, vectors_per_thread = 1}} {
  quack.return
}

// -----

// expected-error @+1 {{'quack.config' needs 'stages' in [2, 8]}}
quack.kernel @bad_stages(%x: memref<?x8xf32>) attributes {quack.config = {alignment = 16, copy = "bulk", prefetch = true, rows_per_cta = 1, stages = 1, threads_per_row = 2, vector = 4, vectors_per_thread = 1}} {
  quack.return
}

// -----

// Bulk copies lay out a CTA's slice as the config's vectors; more vectors
// per thread than N needs would not match the thread-value layout.
// expected-error @+1 {{copy=bulk: the config gives each CTA 16 columns, its thread-value layout 8 (vectors_per_thread must be the fewest that cover N)}}
quack.kernel @bulk_extra_vectors(%x: memref<?x8xf32, strided<[?, 1]>>,
                                 %y: memref<?x8xf32, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) attributes {quack.config = {alignment = 16, copy = "bulk", rows_per_cta = 1, threads_per_row = 2, vector = 4, vectors_per_thread = 2}} {
  %row = quack.load %x : memref<?x8xf32, strided<[?, 1]>> -> vector<8xf32>
  quack.store %row, %y : vector<8xf32>, memref<?x8xf32, strided<[?, 1]>>
  quack.return
}

// -----

// The lowering implements the row partition of the config; a kernel whose
// layout (from quack-assign-layouts or written by hand) differs is refused:
// here a column-major tile, each thread holding a strided column.
// expected-error @+1 {{has the thread-value layout #quack.tv_layout<(2,4):(1,2), tile = (1,8):(8,1)>; convert-quack-to-gpu lowers the tiles of this kernel only by the row partition of its config, #quack.tv_layout<((2,1,1),(4,1)):((4,0,0),(1,0)), tile = (1,8):(8,1)>}}
quack.kernel @strided_layout(%x: memref<?x8xf32, strided<[?, 1]>>,
                             %y: memref<?x8xf32, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 2, vector = 4, vectors_per_thread = 1}, quack.tv_layout = #quack.tv_layout<(2,4):(1,2), tile = (1,8):(8,1)>} {
  %row = quack.load %x : memref<?x8xf32, strided<[?, 1]>> -> vector<8xf32>
  quack.store %row, %y : vector<8xf32>, memref<?x8xf32, strided<[?, 1]>>
  quack.return
}

// -----

// The same on one tile: every tile of a kernel has the kernel's layout.
quack.kernel @tile_layout(%x: memref<?x8xf32, strided<[?, 1]>>,
                          %y: memref<?x8xf32, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 2, vector = 4, vectors_per_thread = 1}} {
  // expected-error @+1 {{'quack.load' op has the thread-value layout #quack.tv_layout<(2,4):(1,2), tile = (1,8):(8,1)>}}
  %row = quack.load %x {quack.tv_layout = #quack.tv_layout<(2,4):(1,2), tile = (1,8):(8,1)>} : memref<?x8xf32, strided<[?, 1]>> -> vector<8xf32>
  quack.store %row, %y : vector<8xf32>, memref<?x8xf32, strided<[?, 1]>>
  quack.return
}

// -----

// Tensor copies need a box whose innermost dimension, a power of two
// dividing N and the slice, spans 16 bytes; of N = 6 f32 only 2 columns (8
// bytes) divide. (Config selection never gives such a config: its vectors
// of 16 bytes divide N.)
// expected-error @+1 {{copy=tensor: no box for a slice of 6 columns of 1 row(s) of 4-byte elements}}
quack.kernel @tensor_no_box(%x: memref<?x6xf32, strided<[?, 1]>>,
                            %y: memref<?x6xf32, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) attributes {quack.config = {alignment = 16, copy = "tensor", rows_per_cta = 1, threads_per_row = 1, vector = 2, vectors_per_thread = 3}} {
  %row = quack.load %x : memref<?x6xf32, strided<[?, 1]>> -> vector<6xf32>
  quack.store %row, %y : vector<6xf32>, memref<?x6xf32, strided<[?, 1]>>
  quack.return
}
