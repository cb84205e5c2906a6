// RUN: quack-opt %s | quack-opt | FileCheck %s

// Layout attributes print in CuTe notation, with the strides spelled out.

// CHECK-LABEL: func.func @layouts
// CHECK-SAME: quack.col = #quack.layout<(2,(3,4)):(1,(2,6))>
// CHECK-SAME: quack.compact = #quack.layout<(4,8):(1,4)>
// CHECK-SAME: quack.leaf = #quack.layout<8:1>
// CHECK-SAME: quack.negative = #quack.layout<(4,2):(-1,4)>
// CHECK-SAME: quack.quoted = #quack.layout<(4,8):(8,1)>
// CHECK-SAME: quack.spaced = #quack.layout<(2,4):(4,1)>
func.func @layouts() attributes {
  quack.col = #quack.layout<(2,(3,4)):(1,(2,6))>,
  quack.compact = #quack.layout<(4,8)>,
  quack.leaf = #quack.layout<8:1>,
  quack.negative = #quack.layout<(4,2):(-1,4)>,
  quack.quoted = #quack.layout<"(4,8):(8,1)">,
  quack.spaced = #quack.layout< ( 2 , 4 ) : ( 4 , 1 ) >
} {
  return
}

// Two threads split the columns of a row-major 2x4 tile.

// CHECK-LABEL: func.func @tv_layouts
// CHECK-SAME: quack.rows = #quack.tv_layout<(2,(2,2)):(2,(1,4)), tile = (2,4):(4,1)>
// CHECK-SAME: quack.vector = #quack.tv_layout<(4,1):(1,0), tile = 8:1>
func.func @tv_layouts() attributes {
  quack.rows = #quack.tv_layout<(2,(2,2)):(2,(1,4)), tile = (2,4):(4,1)>,
  quack.vector = #quack.tv_layout<(4,1):(1,0), tile = 8>
} {
  return
}

// CHECK-LABEL: func.func @ops
func.func @ops(%i: index, %j: index) -> (index, index, index, index) {
  // CHECK: quack.layout.size #quack.layout<(2,(3,4)):(1,(2,6))>
  %0 = quack.layout.size #quack.layout<(2,(3,4)):(1,(2,6))>
  // CHECK: quack.layout.cosize #quack.layout<(4,2):(2,16)>
  %1 = quack.layout.cosize #quack.layout<(4,2):(2,16)>
  // CHECK: quack.layout.apply #quack.layout<(4,8):(8,1)> [%{{.*}}, %{{.*}}]
  %2 = quack.layout.apply #quack.layout<(4,8):(8,1)> [%i, %j]
  // CHECK: quack.layout.apply #quack.layout<(4,8):(8,1)> [%{{.*}}]
  %3 = quack.layout.apply #quack.layout<(4,8):(8,1)> [%i]
  return %0, %1, %2, %3 : index, index, index, index
}
