// RUN: quack-opt %s -split-input-file --quack-select-config -verify-diagnostics

// Rows longer than a cluster of 16 CTAs can hold.
// expected-error @+1 {{N = 524288 is longer than the 262144 elements a cluster of 16 CTAs holds in registers (16384 per CTA)}}
quack.kernel @too_long(%x: memref<?x524288xbf16>) {
  quack.return
}

// -----

// N = 262142 is not a multiple of 4: 2-element vectors of bf16 leave each
// of 512 threads of 16 CTAs 16 vectors; N = 262141 is odd, so 1-element
// accesses need 32, more than a thread holds.
// expected-error @+1 {{N = 262141 needs 32 vectors of 1 elements per thread with 512 threads per row and a cluster of 16; a thread holds at most 16 (N <= 131072 with 2-byte accesses)}}
quack.kernel @odd_and_long(%x: memref<?x262141xbf16>) {
  quack.return
}
