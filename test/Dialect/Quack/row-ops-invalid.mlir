// RUN: quack-opt %s -split-input-file -verify-diagnostics

quack.kernel @gather_row(%w: memref<8xf32>, %t: memref<?xi64>) {
  %ti = quack.load %t : memref<?xi64> -> i64
  // expected-error @+1 {{source 'memref<8xf32>' is not a matrix memref<?xNxT, strided<[?, 1]>>}}
  %v = quack.gather %w[%ti] : memref<8xf32>, i64 -> f32
  quack.return
}

// -----

quack.kernel @gather_type(%x: memref<?x8xf32>, %t: memref<?xi64>) {
  %ti = quack.load %t : memref<?xi64> -> i64
  // expected-error @+1 {{result type 'f16' must be the element type 'f32'}}
  %v = quack.gather %x[%ti] : memref<?x8xf32>, i64 -> f16
  quack.return
}

// -----

quack.kernel @lse_type(%x: memref<?x8xf16>) {
  %v = quack.load %x : memref<?x8xf16> -> vector<8xf16>
  // expected-error @+1 {{'quack.logsumexp' op operand #0 must be vector of 32-bit float values of ranks 1}}
  %l = quack.logsumexp %v : vector<8xf16> -> f32
  quack.return
}

// -----

quack.kernel @moments_type(%x: memref<?x8xf16>) {
  %v = quack.load %x : memref<?x8xf16> -> vector<8xf16>
  // expected-error @+1 {{'quack.moments' op operand #0 must be vector of 32-bit float values of ranks 1}}
  %m:2 = quack.moments %v : vector<8xf16> -> f32, f32
  quack.return
}

// -----

quack.kernel @argmax_type(%x: memref<?x8xf32>) {
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf32>
  // expected-error @+1 {{'quack.argmax' op result #0 must be 64-bit signless integer}}
  %i = quack.argmax %v : vector<8xf32> -> i32
  quack.return
}

// -----

quack.kernel @sum_rows_matrix(%x: memref<?x8xf32>, %y: memref<?x8xf32> {quack.role = "output"}) {
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf32>
  // expected-error @+1 {{destination 'memref<?x8xf32>' is not a row vector memref<NxT>}}
  quack.sum_rows %v, %y : vector<8xf32>, memref<?x8xf32>
  quack.return
}

// -----

quack.kernel @sum_rows_input(%x: memref<?x8xf32>, %w: memref<8xf32>) {
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf32>
  // expected-error @+1 {{destination 'arg1' is not an output of the kernel}}
  quack.sum_rows %v, %w : vector<8xf32>, memref<8xf32>
  quack.return
}

// -----

quack.kernel @sum_rows_int(%x: memref<?x8xf32>, %w: memref<8xi32> {quack.role = "output"}) {
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf32>
  // expected-error @+1 {{destination element type 'i32' is not a float type}}
  quack.sum_rows %v, %w : vector<8xf32>, memref<8xi32>
  quack.return
}

// -----

quack.kernel @sum_rows_twice(%x: memref<?x8xf32>, %w: memref<8xf32> {quack.role = "output"}) {
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf32>
  // expected-error @+1 {{destination 'arg1' is summed into by more than one quack.sum_rows}}
  quack.sum_rows %v, %w : vector<8xf32>, memref<8xf32>
  quack.sum_rows %v, %w : vector<8xf32>, memref<8xf32>
  quack.return
}

// -----

quack.kernel @sum_rows_f16(%x: memref<?x8xf16>, %w: memref<8xf32> {quack.role = "output"}) {
  %v = quack.load %x : memref<?x8xf16> -> vector<8xf16>
  // expected-error @+1 {{'quack.sum_rows' op operand #0 must be vector of 32-bit float values of ranks 1}}
  quack.sum_rows %v, %w : vector<8xf16>, memref<8xf32>
  quack.return
}

// -----

memref.global "private" @g : memref<8xf32> = uninitialized
quack.kernel @sum_rows_not_an_argument(%x: memref<?x8xf32>) {
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf32>
  %m = memref.get_global @g : memref<8xf32>
  // expected-error @+1 {{destination must be an argument of the enclosing quack.kernel}}
  quack.sum_rows %v, %m : vector<8xf32>, memref<8xf32>
  quack.return
}
