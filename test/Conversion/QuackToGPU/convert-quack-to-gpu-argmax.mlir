// RUN: quack-opt %s -split-input-file --quack-select-config --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-allreduce-to-nvvm --convert-quack-copy-to-nvvm | FileCheck %s
// RUN: quack-opt %s -split-input-file --quack-select-config --convert-quack-to-gpu | FileCheck %s --check-prefix=OP

// An argmax is one exchange of the (value, column) pair. A row of 4096 f32
// over 512 threads: each thread takes the NaN-propagating maximum of its 2
// vectors of 4, then the first column holding it (or a NaN), scanning from
// its last element back from INT32_MAX; the pair goes through a warp
// butterfly (both halves shuffled, the better pair kept), the warps' slots,
// and a butterfly over the 16 warps; the column is widened to i64 and
// stored.
// CHECK-LABEL: gpu.func @am(
// CHECK: vector.reduction <maximumf>, %{{.*}} : vector<4xf32> into f32
// CHECK: vector.reduction <maximumf>, %{{.*}} : vector<4xf32> into f32
// CHECK: %[[MAX:.*]] = arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: %[[V7:.*]] = vector.extract %[[SECOND:.*]][3] : f32 from vector<4xf32>
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[V7]], %[[V7]] : f32
// CHECK: %[[EQ:.*]] = arith.cmpf oeq, %[[V7]], %[[MAX]] : f32
// CHECK: %[[HIT:.*]] = arith.ori %[[EQ]], %[[NAN]] : i1
// CHECK: arith.select %[[HIT]], %{{.*}}, %c2147483647_i32 : i32
// CHECK: vector.extract %[[SECOND]][2]
// CHECK: vector.extract %[[SECOND]][0]
// CHECK: vector.extract %[[FIRST:.*]][3]
// CHECK: vector.extract %[[FIRST]][0]
// A NaN beats a number, and an earlier NaN; numbers compare by value, then
// by column.
// CHECK: %[[W:.*]] = nvvm.shfl.sync  bfly %{{.*}}, %[[MAX]], %c16_i32, %{{.*}} : f32 -> f32
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c16_i32{{.*}}, %{{.*}} : i32 -> i32
// CHECK: arith.cmpf uno, %[[W]], %[[W]] : f32
// CHECK: arith.select %{{.*}}, %[[W]], %[[MAX]] : f32
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c1_i32{{.*}} : i32 -> i32
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c8_i32{{.*}} : i32 -> i32
// CHECK: %[[IDX:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: llvm.store %[[IDX]], %{{.*}} : i64, !llvm.ptr<1>
// convert-quack-to-gpu itself emits one block allreduce of the pair (OP).
// OP-LABEL: gpu.module @am
// OP: quack.allreduce block lanes 512 [argmax] (%{{.*}}, %{{.*}}) scratch @__quack_smem_am[0] {groups = 1 : i64} : f32, i32
quack.kernel @am(%x: memref<?x4096xf32> {quack.name = "x"},
                 %i: memref<?xi64> {quack.name = "i", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x4096xf32> -> vector<4096xf32>
  %a = quack.argmax %xr : vector<4096xf32> -> i64
  quack.store %a, %i : i64, memref<?xi64>
  quack.return
}

// -----

// On the cluster path the pair crosses the CTAs in one exchange of an f32
// and an i32: 4 CTAs x 8 bytes land in each. A CTA's columns start at its
// rank's chunk, so the columns it sends are the row's.
// CHECK-LABEL: gpu.func @am_cluster(
// CHECK: quack.cluster.barrier_init @__quack_smem_am_cluster barriers [0] expect_tx [32]
// CHECK: quack.cluster.exchange {{.*}} ({{.*}}, {{.*}}) {cluster_size = 4 : i64, cta_threads = 512 : i64} : f32, i32
// CHECK: arith.extui %{{.*}} : i32 to i64
// OP-LABEL: gpu.module @am_cluster
// OP: quack.cluster.exchange
// OP: quack.allreduce warp lanes 4 [argmax] (%{{.*}}, %{{.*}}) : f32, i32
quack.kernel @am_cluster(%x: memref<?x65536xbf16> {quack.name = "x"},
                         %i: memref<?xi64> {quack.name = "i", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x65536xbf16> -> vector<65536xbf16>
  %f = arith.extf %xr : vector<65536xbf16> to vector<65536xf32>
  %a = quack.argmax %f : vector<65536xf32> -> i64
  quack.store %a, %i : i64, memref<?xi64>
  quack.return
}
