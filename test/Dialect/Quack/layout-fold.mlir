// RUN: quack-opt %s -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @size_cosize
// CHECK-DAG: %[[C24:.*]] = arith.constant 24 : index
// CHECK-DAG: %[[C23:.*]] = arith.constant 23 : index
// CHECK: return %[[C24]], %[[C23]]
func.func @size_cosize() -> (index, index) {
  %0 = quack.layout.size #quack.layout<(2,(3,4)):(1,(2,6))>
  %1 = quack.layout.cosize #quack.layout<(4,2):(2,16)>
  return %0, %1 : index, index
}

// Coordinate (3, 5) of the row-major 4x8 layout is 8 * 3 + 5 = 29; linear
// index 13 is coordinate (1, 3) (column-major enumeration), offset 8 + 3 = 11;
// linear index 17 of (2,(3,4)):(12,(1,3)) is (1,(2,2)), offset 12 + 2 + 6.
// CHECK-LABEL: func.func @apply_constant
// CHECK-DAG: %[[C29:.*]] = arith.constant 29 : index
// CHECK-DAG: %[[C11:.*]] = arith.constant 11 : index
// CHECK-DAG: %[[C20:.*]] = arith.constant 20 : index
// CHECK: return %[[C29]], %[[C11]], %[[C20]]
func.func @apply_constant() -> (index, index, index) {
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c13 = arith.constant 13 : index
  %c17 = arith.constant 17 : index
  %0 = quack.layout.apply #quack.layout<(4,8):(8,1)> [%c3, %c5]
  %1 = quack.layout.apply #quack.layout<(4,8):(8,1)> [%c13]
  %2 = quack.layout.apply #quack.layout<(2,(3,4)):(12,(1,3))> [%c17]
  return %0, %1, %2 : index, index, index
}

// A hierarchical mode takes an integer coordinate within the whole mode:
// mode 1 of (2,(3,4)):(1,(2,6)) at 7 is (1,2), offset 2 + 12; with mode 0 at
// 1, the offset is 15.
// CHECK-LABEL: func.func @apply_hierarchical
// CHECK: %[[C15:.*]] = arith.constant 15 : index
// CHECK: return %[[C15]]
func.func @apply_hierarchical() -> index {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %0 = quack.layout.apply #quack.layout<(2,(3,4)):(1,(2,6))> [%c1, %c7]
  return %0 : index
}

// Identity and zero-stride layouts fold for any index.
// CHECK-LABEL: func.func @apply_trivial
// CHECK-SAME: (%[[I:.*]]: index)
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: return %[[I]], %[[C0]]
func.func @apply_trivial(%i: index) -> (index, index) {
  %0 = quack.layout.apply #quack.layout<16:1> [%i]
  %1 = quack.layout.apply #quack.layout<(4,(2,2)):(0,(0,0))> [%i]
  return %0, %1 : index, index
}

// Out-of-range constants and non-constant coordinates stay.
// CHECK-LABEL: func.func @apply_kept
// CHECK: quack.layout.apply #quack.layout<(4,8):(8,1)> [%{{.*}}, %{{.*}}]
// CHECK: quack.layout.apply #quack.layout<(4,8):(8,1)> [%{{.*}}]
func.func @apply_kept(%i: index) -> (index, index) {
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  %0 = quack.layout.apply #quack.layout<(4,8):(8,1)> [%c4, %i]
  %1 = quack.layout.apply #quack.layout<(4,8):(8,1)> [%c32]
  return %0, %1 : index, index
}
