// RUN: quack-opt %s --quack-select-config -verify-diagnostics

// Rows longer than one CTA can hold need the cluster path.
// expected-error @+1 {{N = 32768 is longer than the 16384 elements a CTA holds in registers; longer rows need the cluster path, which is not built yet}}
quack.kernel @too_long(%x: memref<?x32768xbf16>) {
  quack.return
}
