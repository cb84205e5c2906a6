// RUN: quack-opt %s --quack-select-config -verify-diagnostics

// Rows longer than one CTA can hold need the cluster path.
// expected-error @+1 {{N = 262144 needs 32 vectors per thread with 1024 threads per row; the CTA-level path holds at most 16 (N <= 131072 for this element width)}}
quack.kernel @too_long(%x: memref<?x262144xbf16>) {
  quack.return
}
