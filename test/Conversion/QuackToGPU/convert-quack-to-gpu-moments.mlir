// RUN: quack-opt %s -split-input-file --quack-select-config --convert-quack-to-gpu | FileCheck %s
// RUN: quack-opt %s -split-input-file --quack-select-config --convert-quack-to-gpu --quack-verify-cluster-protocol --convert-quack-allreduce-to-nvvm | FileCheck %s --check-prefix=NVVM

// quack.moments is one exchange of (count, sum, squared deviations): a row
// of 4000 f32 over 512 threads, two vectors of 4 each; the second vector
// of the last threads lies past the row's end.
// CHECK-LABEL: gpu.module @stats
// Shared memory: 16 warps x 3 values x 4 bytes.
// CHECK: !llvm.array<192 x i8>
// The thread's count: 4 or 0 for the second vector, plus 4 for the first.
// CHECK: %[[C2:.*]] = arith.select %{{.*}}, %cst{{.*}}, %cst{{.*}} : f32
// CHECK: %[[COUNT:.*]] = arith.addf %[[C2]], %cst{{.*}} : f32
// Its sum, then its own mean (0 for a thread with no element)...
// CHECK: vector.reduction <add>
// CHECK: vector.reduction <add>
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: %[[SOME:.*]] = arith.cmpf ogt, %[[COUNT]]
// CHECK: %[[Q:.*]] = arith.divf %[[SUM]], %[[COUNT]] : f32
// CHECK: %[[MEAN:.*]] = arith.select %[[SOME]], %[[Q]]
// ...and the squares of its deviations from it, past the end counting 0.
// CHECK: %[[B:.*]] = vector.broadcast %[[MEAN]] : f32 to vector<4xf32>
// CHECK: %[[D:.*]] = arith.subf %{{.*}}, %[[B]] : vector<4xf32>
// CHECK: arith.mulf %[[D]], %[[D]] : vector<4xf32>
// CHECK: %[[M2:.*]] = arith.addf
// One block allreduce for the triple; sum and m2 are its second and
// third values.
// CHECK: %[[ALL:.*]]:3 = quack.allreduce block lanes 512 [moments] (%[[COUNT]], %[[SUM]], %[[M2]]) scratch @__quack_smem_stats[0] {groups = 1 : i64} : f32, f32, f32
// CHECK: arith.divf %[[ALL]]#1
// CHECK: arith.divf %[[ALL]]#2
// CHECK-NOT: quack.allreduce
// NVVM-LABEL: gpu.module @stats
// NVVM: gpu.barrier
// NVVM-NOT: gpu.barrier
// NVVM: gpu.return
quack.kernel @stats(%x: memref<?x4000xf32> {quack.name = "x"},
                    %mean: memref<?xf32> {quack.name = "mean", quack.role = "output"},
                    %var: memref<?xf32> {quack.name = "var", quack.role = "output"}) {
  %row = quack.load %x : memref<?x4000xf32> -> vector<4000xf32>
  %s, %m2 = quack.moments %row : vector<4000xf32> -> f32, f32
  %n = arith.constant 4000.0 : f32
  %mu = arith.divf %s, %n : f32
  %v = arith.divf %m2, %n : f32
  quack.store %mu, %mean : f32, memref<?xf32>
  quack.store %v, %var : f32, memref<?xf32>
  quack.return
}

// -----

// Over a cluster (65536 f32: 8 CTAs of 8192): one cluster round carries
// the CTA's triple (12 bytes from each of 8 peers), then an 8-lane warp
// allreduce of the ranks' triples. No thread's vectors reach past the row,
// so every count is a constant: 16 per thread, 8192 per CTA (the
// allreduces' lowering then shuffles no count).
// CHECK-LABEL: gpu.module @cluster_stats
// CHECK: %[[C16:.*]] = arith.constant 1.600000e+01 : f32
// CHECK: %[[B:.*]]:3 = quack.allreduce block lanes 512 [moments] (%[[C16]], %{{.*}}, %{{.*}})
// CHECK: %[[CTA:.*]] = arith.constant 8.192000e+03 : f32
// CHECK: %[[X:.*]]:3 = quack.cluster.exchange {{.*}} (%[[CTA]], %[[B]]#1, %[[B]]#2) {cluster_size = 8 : i64, cta_threads = 512 : i64} : f32, f32, f32
// CHECK: %[[PEER:.*]] = arith.constant 8.192000e+03 : f32
// CHECK: quack.allreduce warp lanes 8 [moments] (%[[PEER]], %[[X]]#1, %[[X]]#2) : f32, f32, f32
// CHECK-NOT: quack.cluster.exchange
// NVVM-LABEL: gpu.module @cluster_stats
// NVVM: quack.cluster.barrier_init {{.*}} expect_tx [96]
// NVVM-COUNT-1: quack.cluster.exchange
// NVVM-NOT: quack.cluster.exchange
quack.kernel @cluster_stats(%x: memref<?x65536xf32> {quack.name = "x"},
                            %var: memref<?xf32> {quack.name = "var", quack.role = "output"}) {
  %row = quack.load %x : memref<?x65536xf32> -> vector<65536xf32>
  %s, %m2 = quack.moments %row : vector<65536xf32> -> f32, f32
  %n = arith.constant 65536.0 : f32
  %v = arith.divf %m2, %n : f32
  quack.store %v, %var : f32, memref<?xf32>
  quack.return
}
