// A row-level quack kernel: every row of x scaled by the reciprocal of its
// sum. quack-embed-cxx lowers it to the LLVM and NVVM dialects.
quack.kernel @row_normalize(
    %x: memref<?x1024xf32> {quack.name = "x"},
    %y: memref<?x1024xf32> {quack.name = "y", quack.role = "output"}) {
  %xr = quack.load %x : memref<?x1024xf32> -> vector<1024xf32>
  %s = quack.reduce <add> %xr : vector<1024xf32> -> f32
  %sb = vector.broadcast %s : f32 to vector<1024xf32>
  %yr = arith.divf %xr, %sb : vector<1024xf32>
  quack.store %yr, %y : vector<1024xf32>, memref<?x1024xf32>
  quack.return
}
