// RUN: quack-opt %s -split-input-file --quack-select-config --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-allreduce-to-nvvm | FileCheck %s
// RUN: quack-opt %s -split-input-file --quack-select-config --convert-quack-to-gpu | FileCheck %s --check-prefix=OP
// RUN: quack-opt %s -split-input-file --quack-select-config="threads-per-row=128" --convert-quack-to-gpu | FileCheck %s --check-prefix=AGAIN

// A logsumexp is one exchange of the online pair (max, sum of exp(x - max)):
// a row of 4096 f32 over 512 threads, 16 warps.
// CHECK-LABEL: gpu.module @lse
// Shared memory: 16 warps x 2 values x 4 bytes.
// CHECK: !llvm.array<128 x i8>
// Each thread: its maximum, a shift of 0 where that is -inf, its sum of
// exp(x - shift).
// CHECK: vector.reduction <maximumf>
// CHECK: arith.cmpf oeq
// CHECK: arith.select
// CHECK: math.exp %{{.*}} : vector<4xf32>
// CHECK: vector.reduction <add>
// The warp's maxima first (no exp between the shuffles)...
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c16_i32
// CHECK-NOT: math.exp
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c1_i32
// ...then the lane's sum rescaled by exp(own max - warp max), one exp, and
// the sums' butterfly.
// CHECK: math.exp %{{.*}} : f32
// CHECK-NEXT: arith.mulf
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c16_i32
// CHECK-NOT: math.exp
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c1_i32
// Lane 0 publishes both values; one barrier for the whole logsumexp.
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// Lane j reads warp j mod 16's pair, a 16-lane butterfly combines them.
// CHECK: arith.andi %{{.*}}, %c15_i32 : i32
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c8_i32
// CHECK: math.exp %{{.*}} : f32
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c8_i32
// lse = shift + log(sum).
// CHECK: math.log
// CHECK: arith.addf
// CHECK: gpu.return
// convert-quack-to-gpu itself emits the pair's exchange as one block
// allreduce (OP), lowered above by convert-quack-allreduce-to-nvvm.
// OP-LABEL: gpu.module @lse
// OP: quack.allreduce block lanes 512 [logsumexp] (%{{.*}}, %{{.*}}) scratch @__quack_smem_lse[0] {groups = 1 : i64} : f32, f32
quack.kernel @lse(%x: memref<?x4096xf32> {quack.name = "x"},
                  %out: memref<?xf32> {quack.name = "out", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xf32> -> vector<4096xf32>
  %l = quack.logsumexp %row : vector<4096xf32> -> f32
  quack.store %l, %out : f32, memref<?xf32>
  quack.return
}

// -----

// On the cluster path the pair is one round: each CTA sends 2 values of 4
// bytes to each of 4 peers, so the round's mbarrier expects 4 x 8 bytes.
// CHECK-LABEL: gpu.module @lse_cluster
// CHECK: quack.cluster.barrier_init @__quack_smem_lse_cluster barriers [0] expect_tx [32]
// CHECK: quack.cluster.wait
// CHECK: %[[SRC:.*]] = arith.andi %{{.*}}, %c3_i32 : i32
// CHECK: quack.cluster.exchange {{.*}} from %[[SRC]] (%{{.*}}, %{{.*}}) {cluster_size = 4 : i64, cta_threads = 512 : i64} : f32, f32
// CHECK-NOT: quack.cluster.exchange
// CHECK: math.log
// CHECK: gpu.return
// OP-LABEL: gpu.module @lse_cluster
// OP: %[[CTA:.*]]:2 = quack.allreduce block lanes 512 [logsumexp] (%{{.*}}, %{{.*}}) scratch @__quack_smem_lse_cluster[8] {groups = 1 : i64} : f32, f32
// OP: %[[ALL:.*]]:2 = quack.cluster.exchange {{.*}} (%[[CTA]]#0, %[[CTA]]#1)
// OP: quack.allreduce warp lanes 4 [logsumexp] (%[[ALL]]#0, %[[ALL]]#1) : f32, f32
quack.kernel @lse_cluster(%x: memref<?x65536xbf16> {quack.name = "x"},
                          %out: memref<?xf32> {quack.name = "out", quack.role = "output"}) {
  %row = quack.load %x : memref<?x65536xbf16> -> vector<65536xbf16>
  %f = arith.extf %row : vector<65536xbf16> to vector<65536xf32>
  %l = quack.logsumexp %f : vector<65536xf32> -> f32
  quack.store %l, %out : f32, memref<?xf32>
  quack.return
}

// -----

// Adjacent reductions share one exchange: a sum and a logsumexp are three
// values per warp (16 warps x 3 x 4 bytes), one barrier, and their
// butterflies interleave.
// CHECK-LABEL: gpu.module @grouped
// CHECK: !llvm.array<192 x i8>
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c16_i32
// CHECK-NEXT: arith.addf
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.shfl.sync  bfly %{{.*}}, %{{.*}}, %c16_i32
// CHECK-NEXT: arith.maximumf
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: math.log
// CHECK: gpu.return
// OP-LABEL: gpu.module @grouped
// OP: quack.allreduce block lanes 512 [add, logsumexp] (%{{.*}}, %{{.*}}, %{{.*}}) scratch @__quack_smem_grouped[0] {groups = 1 : i64} : f32, f32, f32
// OP-NOT: quack.allreduce
quack.kernel @grouped(%x: memref<?x4096xf32> {quack.name = "x"},
                      %out: memref<?xf32> {quack.name = "out", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xf32> -> vector<4096xf32>
  %s = quack.reduce <add> %row : vector<4096xf32> -> f32
  %l = quack.logsumexp %row : vector<4096xf32> -> f32
  %r = arith.addf %s, %l : f32
  quack.store %r, %out : f32, memref<?xf32>
  quack.return
}

// -----

// exp(x - logsumexp(x)) (a softmax) reuses the logsumexp's exponentials:
// each thread multiplies its exp(x - m) by exp(m - lse), one exponential per
// thread instead of one per element. A row widened from bf16 takes
// exp(x - m) as exp2(fma(x, log2 e, -m log2 e)).
// OP-LABEL: gpu.module @softmax_reuse
// OP: %[[NEG:.*]] = arith.negf %{{.*}} : f32
// OP: %[[NEGV:.*]] = vector.broadcast %[[NEG]] : f32 to vector<8xf32>
// OP: %[[A0:.*]] = math.fma %{{.*}}, %{{.*}}, %[[NEGV]] : vector<8xf32>
// OP: %[[E0:.*]] = math.exp2 %[[A0]] : vector<8xf32>
// OP: %[[A1:.*]] = math.fma %{{.*}}, %{{.*}}, %[[NEGV]] : vector<8xf32>
// OP: %[[E1:.*]] = math.exp2 %[[A1]] : vector<8xf32>
// OP: quack.allreduce
// OP: %[[D:.*]] = arith.subf %{{.*}}, %{{.*}} : f32
// OP: %[[F:.*]] = math.exp %[[D]] : f32
// OP: %[[FV:.*]] = vector.broadcast %[[F]] : f32 to vector<8xf32>
// OP: arith.mulf %[[E0]], %[[FV]] : vector<8xf32>
// OP: arith.mulf %[[E1]], %[[FV]] : vector<8xf32>
// OP-NOT: math.exp
// OP: gpu.return
quack.kernel @softmax_reuse(%x: memref<?x4096xbf16> {quack.name = "x"},
                            %y: memref<?x4096xbf16> {quack.name = "y", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xbf16> -> vector<4096xbf16>
  %xf = arith.extf %row : vector<4096xbf16> to vector<4096xf32>
  %l = quack.logsumexp %xf : vector<4096xf32> -> f32
  %lb = vector.broadcast %l : f32 to vector<4096xf32>
  %d = arith.subf %xf, %lb : vector<4096xf32>
  %e = math.exp %d : vector<4096xf32>
  %t = arith.truncf %e : vector<4096xf32> to vector<4096xbf16>
  quack.store %t, %y : vector<4096xbf16>, memref<?x4096xbf16>
  quack.return
}

// -----

// With more than 64 elements per thread (128 threads over 16384: 16
// vectors of 8) the exponentials are not kept: the second pass computes
// exp(x - lse) again.
// AGAIN-LABEL: gpu.module @softmax_again
// AGAIN: quack.allreduce
// AGAIN-COUNT-16: math.exp2 %{{.*}} : vector<8xf32>
// AGAIN: gpu.return
quack.kernel @softmax_again(%x: memref<?x16384xbf16> {quack.name = "x"},
                            %y: memref<?x16384xbf16> {quack.name = "y", quack.role = "output"}) {
  %row = quack.load %x : memref<?x16384xbf16> -> vector<16384xbf16>
  %xf = arith.extf %row : vector<16384xbf16> to vector<16384xf32>
  %l = quack.logsumexp %xf : vector<16384xf32> -> f32
  %lb = vector.broadcast %l : f32 to vector<16384xf32>
  %d = arith.subf %xf, %lb : vector<16384xf32>
  %e = math.exp %d : vector<16384xf32>
  %t = arith.truncf %e : vector<16384xf32> to vector<16384xbf16>
  quack.store %t, %y : vector<16384xbf16>, memref<?x16384xbf16>
  quack.return
}

// -----

// An f32 row keeps exp(x - m) unfused (the fma's argument would be off by
// up to 2^-24 |x| log2 e, 1e-5 relative at |x| = 200).
// OP-LABEL: gpu.module @softmax_f32
// OP: arith.subf %{{.*}}, %{{.*}} : vector<4xf32>
// OP-NEXT: math.exp %{{.*}} : vector<4xf32>
// OP-NOT: math.fma
// OP: gpu.return
quack.kernel @softmax_f32(%x: memref<?x4096xf32> {quack.name = "x"},
                          %y: memref<?x4096xf32> {quack.name = "y", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xf32> -> vector<4096xf32>
  %l = quack.logsumexp %row : vector<4096xf32> -> f32
  %lb = vector.broadcast %l : f32 to vector<4096xf32>
  %d = arith.subf %row, %lb : vector<4096xf32>
  %e = math.exp %d : vector<4096xf32>
  quack.store %e, %y : vector<4096xf32>, memref<?x4096xf32>
  quack.return
}

// -----

// exp(x - lse) from a saved per-row lse (a cross-entropy gradient): no
// exponentials were kept, and a row widened from bf16 takes one fma and
// one exp2 per fragment.
// OP-LABEL: gpu.module @saved_lse_bf16
// OP: %[[NEG:.*]] = arith.negf %{{.*}} : f32
// OP: %[[NEGV:.*]] = vector.broadcast %[[NEG]] : f32 to vector<8xf32>
// OP: math.fma %{{.*}}, %{{.*}}, %[[NEGV]] : vector<8xf32>
// OP-NEXT: math.exp2 %{{.*}} : vector<8xf32>
// OP-NOT: math.exp %
// OP: gpu.return
quack.kernel @saved_lse_bf16(%x: memref<?x4096xbf16> {quack.name = "x"},
                             %lse: memref<?xf32> {quack.name = "lse"},
                             %y: memref<?x4096xbf16> {quack.name = "y", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xbf16> -> vector<4096xbf16>
  %l = quack.load %lse : memref<?xf32> -> f32
  %xf = arith.extf %row : vector<4096xbf16> to vector<4096xf32>
  %lb = vector.broadcast %l : f32 to vector<4096xf32>
  %d = arith.subf %xf, %lb : vector<4096xf32>
  %e = math.exp %d : vector<4096xf32>
  %t = arith.truncf %e : vector<4096xf32> to vector<4096xbf16>
  quack.store %t, %y : vector<4096xbf16>, memref<?x4096xbf16>
  quack.return
}

// -----

// The same over an f32 row keeps the subtraction and exp.
// OP-LABEL: gpu.module @saved_lse_f32
// OP: arith.subf %{{.*}}, %{{.*}} : vector<4xf32>
// OP: math.exp %{{.*}} : vector<4xf32>
// OP-NOT: math.fma
// OP: gpu.return
quack.kernel @saved_lse_f32(%x: memref<?x4096xf32> {quack.name = "x"},
                            %lse: memref<?xf32> {quack.name = "lse"},
                            %y: memref<?x4096xf32> {quack.name = "y", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4096xf32> -> vector<4096xf32>
  %l = quack.load %lse : memref<?xf32> -> f32
  %lb = vector.broadcast %l : f32 to vector<4096xf32>
  %d = arith.subf %row, %lb : vector<4096xf32>
  %e = math.exp %d : vector<4096xf32>
  quack.store %e, %y : vector<4096xf32>, memref<?x4096xf32>
  quack.return
}
