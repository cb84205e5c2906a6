// RUN: quack-opt %s --split-input-file --quack-select-config="sums=1 threads-per-row=128 rows-per-cta=2 vector=8 prefetch=0" --convert-quack-to-gpu --verify-diagnostics | FileCheck %s
// RUN: not quack-opt %s --split-input-file --quack-select-config="sums=-2" 2>&1 | FileCheck %s --check-prefix=BADSUMS

// BADSUMS: error: 'quack.kernel' op sums must be -1 (the table's, else registers), 0 (partial sums in registers) or the number of sums over rows whose partials go to shared memory, got -2

// sums=1 (here, with one sum over rows, sums=shared): each thread keeps its f32 partial sums in its own slots of
// dynamic shared memory (one sum x 256 threads x 8 columns x 4 bytes), in
// chunks of 4 floats whose slots are consecutive across threads. The slots
// are zeroed before the loop, which carries nothing; each row adds to them
// (load, add, store; rows past M add zeros) and, after the loop, the
// thread copies them to the workspace.
// CHECK-LABEL: gpu.module @dw
// CHECK: llvm.mlir.global external @__quack_bulk_dw() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// CHECK: gpu.func @dw(
// CHECK-SAME: shared_sums = 1 : i64
// CHECK-SAME: quack.dynamic_shared_bytes = 8192 : i64
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK: quack.copy <vector> %[[ZERO]], %{{.*}} {alignment = 16 : i64} : (vector<4xf32>, !llvm.ptr<3>) -> ()
// CHECK: quack.copy <vector> %[[ZERO]], %{{.*}} {alignment = 16 : i64} : (vector<4xf32>, !llvm.ptr<3>) -> ()
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK: %[[TERM:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: %[[LO:.*]] = vector.shuffle %[[TERM]], %[[TERM]] [0, 1, 2, 3]
// CHECK: %[[OLD0:.*]] = quack.copy <vector> %[[SLOT0:.*]] {alignment = 16 : i64} : (!llvm.ptr<3>) -> vector<4xf32>
// CHECK: %[[NEW0:.*]] = arith.addf %[[OLD0]], %[[LO]] : vector<4xf32>
// CHECK: quack.copy <vector> %[[NEW0]], %[[SLOT0]] {alignment = 16 : i64} : (vector<4xf32>, !llvm.ptr<3>) -> ()
// CHECK: %[[HI:.*]] = vector.shuffle %[[TERM]], %[[TERM]] [4, 5, 6, 7]
// CHECK: %[[OLD1:.*]] = quack.copy <vector> %[[SLOT1:.*]] {alignment = 16 : i64} : (!llvm.ptr<3>) -> vector<4xf32>
// CHECK: %[[NEW1:.*]] = arith.addf %[[OLD1]], %[[HI]] : vector<4xf32>
// CHECK: quack.copy <vector> %[[NEW1]], %[[SLOT1]] {alignment = 16 : i64} : (vector<4xf32>, !llvm.ptr<3>) -> ()
// The barrier orders the reduction's slots, not the sums.
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: {{^ +}}}{{$}}
// CHECK: %[[W0:.*]] = quack.copy <vector> %{{.*}} {alignment = 16 : i64} : (!llvm.ptr<3>) -> vector<4xf32>
// CHECK: quack.copy <vector> %[[W0]], %{{.*}} {alignment = 16 : i64} : (vector<4xf32>, !llvm.ptr<1>) -> ()
// CHECK: %[[W1:.*]] = quack.copy <vector> %{{.*}} {alignment = 16 : i64} : (!llvm.ptr<3>) -> vector<4xf32>
// CHECK: quack.copy <vector> %[[W1]], %{{.*}} {alignment = 16 : i64} : (vector<4xf32>, !llvm.ptr<1>) -> ()
// CHECK: gpu.func @dw_finish

quack.kernel @dw(%x: memref<?x1024xbf16, strided<[?, 1]>>,
                 %dw: memref<1024xbf16> {quack.role = "output", quack.name = "dw"}) {
  %row = quack.load %x : memref<?x1024xbf16, strided<[?, 1]>> -> vector<1024xbf16>
  %f = arith.extf %row : vector<1024xbf16> to vector<1024xf32>
  %s = quack.reduce <add> %f : vector<1024xf32> -> f32
  %b = vector.broadcast %s : f32 to vector<1024xf32>
  %g = arith.mulf %f, %b : vector<1024xf32>
  quack.sum_rows %g, %dw : vector<1024xf32>, memref<1024xbf16>
  quack.return
}

// -----

// sums=1 on a kernel with two sums over rows: only the last (db) goes to
// shared memory (256 threads x 8 columns x 4 bytes); the loop carries dw's
// partials in registers and stores them to the workspace after it, then
// copies db's from its slots.
// CHECK-LABEL: gpu.module @dw_db
// CHECK: gpu.func @dw_db(
// CHECK-SAME: shared_sums = 1 : i64
// CHECK-SAME: quack.dynamic_shared_bytes = 8192 : i64
// CHECK: quack.copy <vector> %[[ZERO4:.*]], %{{.*}} {alignment = 16 : i64} : (vector<4xf32>, !llvm.ptr<3>) -> ()
// CHECK: quack.copy <vector> %[[ZERO4]], %{{.*}} {alignment = 16 : i64} : (vector<4xf32>, !llvm.ptr<3>) -> ()
// CHECK-NOT: quack.copy <vector> %[[ZERO4]]
// CHECK: %[[LOOP:.*]] = scf.for %{{.*}} iter_args(%[[DW:.*]] = %{{.*}}) -> (vector<8xf32>)
// CHECK: %[[DWNEW:.*]] = arith.addf %[[DW]], %{{.*}} : vector<8xf32>
// CHECK: %[[DB0:.*]] = quack.copy <vector> %[[DBSLOT0:.*]] {alignment = 16 : i64} : (!llvm.ptr<3>) -> vector<4xf32>
// CHECK: %[[DB0NEW:.*]] = arith.addf %[[DB0]], %{{.*}} : vector<4xf32>
// CHECK: quack.copy <vector> %[[DB0NEW]], %[[DBSLOT0]]
// CHECK: %[[DB1:.*]] = quack.copy <vector> %[[DBSLOT1:.*]] {alignment = 16 : i64} : (!llvm.ptr<3>) -> vector<4xf32>
// CHECK: %[[DB1NEW:.*]] = arith.addf %[[DB1]], %{{.*}} : vector<4xf32>
// CHECK: quack.copy <vector> %[[DB1NEW]], %[[DBSLOT1]]
// CHECK: scf.yield %[[DWNEW]] : vector<8xf32>
// CHECK: quack.copy <vector> %[[LOOP]], %{{.*}} {alignment = 16 : i64} : (vector<8xf32>, !llvm.ptr<1>) -> ()
// CHECK: %[[W0:.*]] = quack.copy <vector> %{{.*}} {alignment = 16 : i64} : (!llvm.ptr<3>) -> vector<4xf32>
// CHECK: quack.copy <vector> %[[W0]], %{{.*}} {alignment = 16 : i64} : (vector<4xf32>, !llvm.ptr<1>) -> ()
// CHECK: gpu.func @dw_db_finish

quack.kernel @dw_db(%x: memref<?x1024xbf16, strided<[?, 1]>>,
                    %dw: memref<1024xbf16> {quack.role = "output", quack.name = "dw"},
                    %db: memref<1024xbf16> {quack.role = "output", quack.name = "db"}) {
  %row = quack.load %x : memref<?x1024xbf16, strided<[?, 1]>> -> vector<1024xbf16>
  %f = arith.extf %row : vector<1024xbf16> to vector<1024xf32>
  %s = quack.reduce <add> %f : vector<1024xf32> -> f32
  %b = vector.broadcast %s : f32 to vector<1024xf32>
  %g = arith.mulf %f, %b : vector<1024xf32>
  quack.sum_rows %g, %dw : vector<1024xf32>, memref<1024xbf16>
  quack.sum_rows %f, %db : vector<1024xf32>, memref<1024xbf16>
  quack.return
}

// -----

// A kernel without sums over rows has no partial sums to place.
// expected-error @+1 {{sums=shared needs a kernel with sums over rows (sum_rows)}}
quack.kernel @copy(%x: memref<?x1024xbf16, strided<[?, 1]>>,
                   %y: memref<?x1024xbf16, strided<[?, 1]>> {quack.role = "output"}) {
  %row = quack.load %x : memref<?x1024xbf16, strided<[?, 1]>> -> vector<1024xbf16>
  quack.store %row, %y : vector<1024xbf16>, memref<?x1024xbf16, strided<[?, 1]>>
  quack.return
}
