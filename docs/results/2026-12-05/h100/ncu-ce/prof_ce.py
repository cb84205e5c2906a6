"""Launches one implementation of the fused cross-entropy (argv: ours |
quack, N, dtype) ten times at M = 32768, for a profiler to pick one."""
import sys, torch
impl, n, dt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
dtype = {"bf16": torch.bfloat16, "f32": torch.float32}[dt]
m = 32768
x = torch.randn(m, n, device="cuda", dtype=dtype)
t = torch.randint(0, n, (m,), device="cuda")
if impl == "ours":
    from quack_mlir._launch import Launcher, float_bits
    lau = Launcher("cross_entropy_fwd_bwd", ("T", "N", "IGNORE"))
    one = float_bits(1.0)
    def run():
        loss = torch.empty(m, dtype=torch.float32, device="cuda")
        dx = torch.empty_like(x)
        lau.launch((dt, n, "true"), m, (x.data_ptr(), n, t.data_ptr(), one,
                   -100, loss.data_ptr(), dx.data_ptr(), n),
                   torch.cuda.current_stream().cuda_stream)
else:
    import importlib
    qce = importlib.import_module("quack.cross_entropy")
    def run():
        qce.cross_entropy_fwd(x, t, ignore_index=-100, return_dx=True)
for _ in range(10):
    run()
torch.cuda.synchronize()
print(impl, n, dt, "ok")
