#!/usr/bin/env python3
"""rmsnorm_bwd with a residual input (RESIDUAL=true), 16-byte aligned, timed
from two bundle roots: CUDA events, median of 30 launches after 5, fresh
inputs per root, dx checked against float64 on the first rows first.

    python3 residual_bwd.py OLD_ROOT NEW_ROOT
"""
import statistics
import sys

import torch

import quack_mlir
from quack_mlir._launch import Launcher

K = Launcher("rmsnorm_bwd", ("T", "TW", "N", "RESIDUAL"),
             fixed={"OFFSET": "false"})
DT = {"bf16": torch.bfloat16, "f32": torch.float32}


def run(root, t, n, m):
    quack_mlir.set_bundle(root)
    dt = DT[t]
    x = torch.randn(m, n, device="cuda").to(dt)
    dy = torch.randn(m, n, device="cuda").to(dt)
    dres = torch.randn(m, n, device="cuda").to(dt)
    w = torch.randn(n, device="cuda").to(dt)
    rstd = torch.rsqrt(x.float().pow(2).mean(-1) + 1e-6)
    dx = torch.empty_like(x)
    dw = torch.empty(n, device="cuda", dtype=dt)
    key = (t, t, n, "true")
    args = [x.data_ptr(), n, w.data_ptr(), dy.data_ptr(), n, rstd.data_ptr(),
            dres.data_ptr(), n, dx.data_ptr(), n, dw.data_ptr(), 0]
    ws = K.workspace_bytes(key, m, tuple(args), torch.cuda.current_device())
    buf = torch.empty(max(ws, 16) // 4 + 4, device="cuda")
    args[-1] = buf.data_ptr()
    args = tuple(args)
    s = torch.cuda.current_stream().cuda_stream
    K.launch(key, m, args, s)
    torch.cuda.synchronize()
    r = 16
    xd, dyd, wd = x[:r].double(), dy[:r].double(), w.double()
    rs = rstd[:r].double().unsqueeze(-1)
    xh = xd * rs
    g = dyd * wd
    ref = (g - xh * (xh * g).mean(-1, keepdim=True)) * rs + dres[:r].double()
    err = ((dx[:r].double() - ref).norm() / ref.norm()).item()
    times = []
    for i in range(35):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record()
        K.launch(key, m, args, s)
        b.record()
        b.synchronize()
        if i >= 5:
            times.append(a.elapsed_time(b) * 1e-3)
    t_med = statistics.median(times)
    nbytes = 4 * m * n * x.element_size() + 2 * n * w.element_size() + 4 * m
    cfg = K.select(key, args).path.rsplit("/", 1)[-1]
    return nbytes / t_med / 1e12, err, cfg


for t in ("bf16",):
    for n in (32768, 65536, 131072):
        m = 32768 if n < 131072 else 16384
        for root in sys.argv[1:3]:
            tb, err, cfg = run(root, t, n, m)
            print(f"{t} N={n} M={m} {root.rstrip('/').rsplit('/', 1)[-1]:12s}"
                  f" {tb:.3f} TB/s  dx rel err {err:.1e}  {cfg}")
