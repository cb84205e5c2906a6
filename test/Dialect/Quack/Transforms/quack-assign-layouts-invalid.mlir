// RUN: quack-opt %s -split-input-file --quack-assign-layouts -verify-diagnostics

// A config whose thread-value layout overflows 64-bit indices (a hand-written
// one: quack-select-config never picks such a vector width).
// expected-error @+1 {{cannot build the thread-value layout: makeRowTVLayout: parameters overflow 64 bits}}
quack.kernel @huge_vector(%x: memref<?x64xf32>) attributes {quack.config = {alignment = 16, rows_per_cta = 1, threads_per_row = 4, vector = 4611686018427387904, vectors_per_thread = 1}} {
  quack.return
}
