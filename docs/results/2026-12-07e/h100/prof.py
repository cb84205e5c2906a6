# Where the time of quack_mlir's autograd fwd+bwd goes at M=1 (host vs GPU).
import os, sys, time, statistics
sys.path.insert(0, "python")
import torch, quack_mlir as qm
from torch.profiler import profile, ProfilerActivity
F = torch.nn.functional
n, dt, eps = 4096, torch.bfloat16, 1e-5
x = torch.randn(1, n, device="cuda", dtype=dt, requires_grad=True)
w = (1 + 0.1 * torch.randn(n, device="cuda", dtype=dt)).requires_grad_(True)
b = (0.1 * torch.randn(n, device="cuda", dtype=dt)).requires_grad_(True)
dy = torch.randn(1, n, device="cuda", dtype=dt)
g = torch.autograd.grad
cases = {
 "q_rms_fb": lambda: g(qm.rmsnorm(x, w, eps), (x, w), dy),
 "t_rms_fb": lambda: g(F.rms_norm(x, (n,), w, eps), (x, w), dy),
 "q_rms_f_grad": lambda: qm.rmsnorm(x, w, eps),
 "q_ln_fb": lambda: g(qm.layer_norm(x, (n,), w, b, eps), (x, w, b), dy),
 "q_rms_bwd_direct": None,
}
_, rstd = qm.rmsnorm(x.detach(), w.detach(), eps, return_rstd=True)
cases["q_rms_bwd_direct"] = lambda: qm.rmsnorm_backward(dy, x.detach(), w.detach(), rstd)
for name, fn in cases.items():
    for _ in range(200): fn()
    torch.cuda.synchronize()
    # host time: no sync inside; wall: sync per call
    ts = []
    for r in range(5):
        t0 = time.perf_counter()
        for _ in range(1000): fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        ts.append(((t1 - t0) / 1000 * 1e6, (t2 - t0) / 1000 * 1e6))
    print(f"{name:18s} enqueue {statistics.median(a for a, _ in ts):7.2f} us  with drain {statistics.median(b for _, b in ts):7.2f} us")
for name in ("q_rms_fb", "q_rms_bwd_direct", "t_rms_fb"):
    fn = cases[name]
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for _ in range(100): fn()
        torch.cuda.synchronize()
    print("=====", name)
    print(p.key_averages().table(sort_by="self_cpu_time_total", row_limit=14, max_name_column_width=50))
    for k in ("self_device_time_total", "self_cuda_time_total"):
        try:
            print(p.key_averages().table(sort_by=k, row_limit=6, max_name_column_width=50)); break
        except Exception as e:
            print("sort", k, e)
