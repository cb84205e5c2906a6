// RUN: quack-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{argument #0 has type 'memref<4x8xf32>', which is not a matrix memref<?xNxT, strided<[?, 1]>>, a row vector memref<NxT>, a per-row vector memref<?xT> or a scalar}}
quack.kernel @static_rows(%x: memref<4x8xf32>) {
  quack.return
}

// -----

// expected-error @+1 {{argument #1 has row length 16 but an earlier argument has 8}}
quack.kernel @mismatch(%x: memref<?x8xf32>, %w: memref<16xf32>) {
  quack.return
}

// -----

// expected-error @+1 {{argument #0 has role "both"; expected "input" or "output"}}
quack.kernel @role(%x: memref<?x8xf32> {quack.role = "both"}) {
  quack.return
}

// -----

// expected-error @+1 {{argument #0 is a scalar and cannot be an output}}
quack.kernel @scalar_out(%s: f32 {quack.role = "output"}) {
  quack.return
}

// -----

// expected-error @+1 {{argument #0 has a non-string quack.name}}
quack.kernel @bad_name(%x: memref<?x8xf32> {quack.name = 3 : i32}) {
  quack.return
}

// -----

// expected-error @+1 {{argument #0 has type 'memref<?x8xf32, strided<[?, 2]>>'}}
quack.kernel @inner_stride(%x: memref<?x8xf32, strided<[?, 2]>>) {
  quack.return
}

// -----

quack.kernel @load_type(%x: memref<?x8xf32>) {
  // expected-error @+1 {{result type 'vector<8xf16>' does not match the source; expected 'vector<8xf32>'}}
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf16>
  quack.return
}

// -----

quack.kernel @per_row_load(%t: memref<?xi64>) {
  // expected-error @+1 {{result type 'vector<8xi64>' does not match the source; expected 'i64'}}
  %v = quack.load %t : memref<?xi64> -> vector<8xi64>
  quack.return
}

// -----

quack.kernel @store_row_vector(%w: memref<8xf32>, %x: memref<?x8xf32>) {
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf32>
  // expected-error @+1 {{cannot store to row vector 'memref<8xf32>', which every row shares}}
  quack.store %v, %w : vector<8xf32>, memref<8xf32>
  quack.return
}

// -----

quack.kernel @store_type(%x: memref<?x8xf32>, %y: memref<?x8xbf16>) {
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf32>
  // expected-error @+1 {{value type 'vector<8xf32>' does not match the destination; expected 'vector<8xbf16>'}}
  quack.store %v, %y : vector<8xf32>, memref<?x8xbf16>
  quack.return
}

// -----

quack.kernel @reduce_type(%x: memref<?x8xf32>) {
  %v = quack.load %x : memref<?x8xf32> -> vector<8xf32>
  // expected-error @+1 {{result type 'f16' must be the element type 'f32'}}
  %s = quack.reduce <add> %v : vector<8xf32> -> f16
  quack.return
}

// -----

// expected-error @+1 {{'quack.kernel' op must not return values}}
quack.kernel @results(%x: memref<?x8xf32>) -> f32 {
  quack.return
}
