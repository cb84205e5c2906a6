// A hand-written gpu.module, the smallest input quackc turns into a cubin:
// y[i] = a * x[i] + y[i] for i < n, one element per thread.
module attributes {gpu.container_module} {
  gpu.module @saxpy {
    gpu.func @saxpy(%n: i64, %a: f32, %x: !llvm.ptr<1>, %y: !llvm.ptr<1>) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>} {
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %bdim = gpu.block_dim x
      %base = arith.muli %bid, %bdim : index
      %gid = arith.addi %base, %tid : index
      %i = arith.index_cast %gid : index to i64
      %inside = arith.cmpi slt, %i, %n : i64
      scf.if %inside {
        %px = llvm.getelementptr %x[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
        %py = llvm.getelementptr %y[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
        %vx = llvm.load %px {alignment = 4 : i64} : !llvm.ptr<1> -> f32
        %vy = llvm.load %py {alignment = 4 : i64} : !llvm.ptr<1> -> f32
        %ax = arith.mulf %a, %vx : f32
        %r = arith.addf %ax, %vy : f32
        llvm.store %r, %py {alignment = 4 : i64} : f32, !llvm.ptr<1>
      }
      gpu.return
    }
  }
}
