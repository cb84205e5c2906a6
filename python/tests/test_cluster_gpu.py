"""GPU tests of rows split over a thread-block cluster (N > 16384): every
catalogue kernel against a float64 reference at N from 16390 to 262144, odd
and even, M in {1, 3, 8192} (M * N capped so the float64 reference stays
small), the torch ops on the same sizes, batch invariance and all -inf rows.

A bug in the cluster protocol (a wrong expected-byte count, a missing
barrier) hangs a kernel instead of failing it: run these under a per-test
timeout (scripts/gpu-check.sh does).

Needs a bundle root that holds these sizes:
    scripts/build-catalogue.sh build/bin/quackc DIR 16390,32768,65536,131072,262144
"""

import math

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA device")

from gpu_common import masked_rel_err as rel, max_row_rel  # noqa: E402
from quack_mlir._launch import Launcher, float_bits  # noqa: E402

DT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
TOL = {"bf16": 1e-2, "f16": 2e-3, "f32": 2e-5}
IGNORE_INDEX = -100
# Largest M * N tested (the float64 reference is 8 bytes an element).
MAX_ELEMENTS = 1 << 28

CE_FWD = Launcher("cross_entropy_fwd", ("T", "N", "IGNORE"))
CE_BWD = Launcher("cross_entropy_bwd", ("T", "N", "IGNORE"))
CE_FWD_BWD = Launcher("cross_entropy_fwd_bwd", ("T", "N", "IGNORE"))
SOFTMAX_FWD = Launcher("softmax_fwd", ("T", "N"))
SOFTMAX_BWD = Launcher("softmax_bwd", ("T", "N"))
RMSNORM = Launcher("rmsnorm_fwd", ("T", "TW", "N", "RESIDUAL"),
                   fixed={"BIAS": "false", "OFFSET": "false"})
LAYERNORM = Launcher("layernorm_fwd", ("T", "TW", "N", "BIAS"))

# (dtype, N): every size the cluster path serves, including N that is not a
# multiple of 8 (narrower vectors, a partial last CTA).
SIZES = [("bf16", 16390), ("bf16", 32768), ("f16", 65536), ("bf16", 131072),
         ("bf16", 262144), ("f16", 262144), ("f32", 32768), ("f32", 131072),
         ("f32", 262144)]
MS = [1, 3, 8192]


def cases():
    for t, n in SIZES:
        for m in MS:
            if m * n <= MAX_ELEMENTS or m < 8:
                yield pytest.param(t, n, m, id=f"{t}-N{n}-M{m}")


def close(out, ref, t):
    """out is within the element type's tolerance of the float64 reference,
    or within twice the error of the reference itself rounded to that type
    (f16 softmax outputs of 262144 columns are around 4e-6, subnormal)."""
    err = max_row_rel(out, ref)
    rounding = max_row_rel(ref.to(DT[t]), ref)
    return err < max(TOL[t], 2 * rounding)


def stream():
    return torch.cuda.current_stream().cuda_stream


def nan_like(x):
    return torch.full_like(x, float("nan"))


@pytest.mark.parametrize("t,n,m", list(cases()))
def test_softmax_fwd(t, n, m):
    x = (torch.randn(m, n, device="cuda") * 4).to(DT[t])
    y = nan_like(x)
    SOFTMAX_FWD.launch((t, n), m, (x.data_ptr(), n, y.data_ptr(), n),
                       stream())
    torch.cuda.synchronize()
    assert close(y, torch.softmax(x.double(), -1), t)


@pytest.mark.parametrize("t,n,m", list(cases()))
def test_softmax_bwd(t, n, m):
    y = torch.softmax(torch.randn(m, n, device="cuda"), -1).to(DT[t])
    dy = torch.randn(m, n, device="cuda").to(DT[t])
    dx = nan_like(y)
    SOFTMAX_BWD.launch((t, n), m, (dy.data_ptr(), n, y.data_ptr(), n,
                                   dx.data_ptr(), n), stream())
    torch.cuda.synchronize()
    yd, dyd = y.double(), dy.double()
    ref = yd * (dyd - (dyd * yd).sum(-1, keepdim=True))
    assert close(dx, ref, t)


@pytest.mark.parametrize("t,n,m", list(cases()))
@pytest.mark.parametrize("residual", [False, True])
def test_rmsnorm_fwd(t, n, m, residual):
    x = torch.randn(m, n, device="cuda").to(DT[t])
    res = torch.randn(m, n, device="cuda").to(DT[t])
    w = torch.randn(n, device="cuda").to(DT[t])
    y, h = nan_like(x), nan_like(x)
    rstd = torch.full((m,), float("nan"), device="cuda")
    eps = 1e-6
    args = [x.data_ptr(), n]
    if residual:
        args += [res.data_ptr(), n]
    args += [w.data_ptr(), float_bits(eps), y.data_ptr(), n, rstd.data_ptr()]
    if residual:
        args += [h.data_ptr(), n]
    RMSNORM.launch((t, t, n, "true" if residual else "false"), m,
                   tuple(args), stream())
    torch.cuda.synchronize()
    hd = x.double() + (res.double() if residual else 0)
    r = torch.rsqrt(hd.pow(2).mean(-1) + eps)
    assert rel(rstd, r) < 1e-5
    assert close(y, hd * r[:, None] * w.double(), t)
    if residual:
        assert close(h, hd, t)


class LayerNormCase:
    """Inputs, NaN-filled outputs and launch arguments of layernorm_fwd on
    m rows of N; check() compares the outputs with float64."""

    eps = 1e-5

    def __init__(self, t, n, m, bias):
        self.t, self.bias = t, bias
        self.key = (t, t, n, "true" if bias else "false")
        self.x = (torch.randn(m, n, device="cuda") + 3).to(DT[t])
        self.w = torch.randn(n, device="cuda").to(DT[t])
        self.b = torch.randn(n, device="cuda").to(DT[t])
        self.y = nan_like(self.x)
        self.mean = torch.full((m,), float("nan"), device="cuda")
        self.rstd = torch.full((m,), float("nan"), device="cuda")
        args = [self.x.data_ptr(), n, self.w.data_ptr()]
        if bias:
            args.append(self.b.data_ptr())
        args += [float_bits(self.eps), self.y.data_ptr(), n,
                 self.mean.data_ptr(), self.rstd.data_ptr()]
        self.args = tuple(args)

    def check(self):
        xd = self.x.double()
        n = xd.shape[-1]
        ref = torch.nn.functional.layer_norm(
            xd, (n,), self.w.double(),
            self.b.double() if self.bias else None, self.eps)
        assert close(self.y, ref, self.t)
        assert rel(self.mean, xd.mean(-1)) < 1e-5
        assert rel(self.rstd,
                   torch.rsqrt(xd.var(-1, unbiased=False) + self.eps)) < 1e-4


@pytest.mark.parametrize("t,n,m", list(cases()))
@pytest.mark.parametrize("bias", [False, True])
def test_layernorm_fwd(t, n, m, bias):
    c = LayerNormCase(t, n, m, bias)
    LAYERNORM.launch(c.key, m, c.args, stream())
    torch.cuda.synchronize()
    c.check()


def ce_inputs(t, m, n):
    x = (torch.randn(m, n, device="cuda") * 3).to(DT[t])
    target = torch.randint(0, n, (m,), device="cuda")
    # Targets in the first and the last CTA of the cluster, and ignored.
    target[0] = n - 1
    if m > 2:
        target[1] = IGNORE_INDEX
        target[2] = 0
    return x, target


def ce_reference(x, target):
    xd = x.double()
    lse = torch.logsumexp(xd, -1)
    safe = target.clamp(0, x.shape[1] - 1)
    loss = lse - xd.gather(1, safe[:, None])[:, 0]
    skip = target == IGNORE_INDEX
    loss = torch.where(skip, torch.zeros_like(loss), loss)
    return loss, lse, skip


@pytest.mark.parametrize("t,n,m", list(cases()))
def test_cross_entropy_fwd(t, n, m):
    x, target = ce_inputs(t, m, n)
    loss = torch.full((m,), float("nan"), device="cuda")
    lse = torch.full((m,), float("nan"), device="cuda")
    CE_FWD.launch((t, n, "true"), m,
                  (x.data_ptr(), n, target.data_ptr(), IGNORE_INDEX,
                   loss.data_ptr(), lse.data_ptr()), stream())
    torch.cuda.synchronize()
    ref_loss, ref_lse, _ = ce_reference(x, target)
    assert rel(lse, ref_lse) < 1e-5
    assert rel(loss, ref_loss) < 1e-4


@pytest.mark.parametrize("t,n,m", list(cases()))
def test_cross_entropy_bwd(t, n, m):
    x, target = ce_inputs(t, m, n)
    _, ref_lse, skip = ce_reference(x, target)
    dloss = torch.rand(m, device="cuda")
    dx = nan_like(x)
    CE_BWD.launch((t, n, "true"), m,
                  (x.data_ptr(), n, target.data_ptr(),
                   ref_lse.float().data_ptr(), dloss.data_ptr(),
                   IGNORE_INDEX, dx.data_ptr(), n), stream())
    torch.cuda.synchronize()
    p = torch.softmax(x.double(), -1)
    p.scatter_add_(1, target.clamp(0, n - 1)[:, None],
                   -torch.ones(m, 1, dtype=p.dtype, device="cuda"))
    ref = p * dloss.double()[:, None]
    ref[skip] = 0
    assert close(dx, ref, t)


@pytest.mark.parametrize("t,n,m", list(cases()))
@pytest.mark.parametrize("in_place", [False, True])
def test_cross_entropy_fwd_bwd(t, n, m, in_place):
    # In place, every CTA of the cluster must read x[target] before the CTA
    # that owns that column overwrites it with the gradient.
    x, target = ce_inputs(t, m, n)
    ref_loss, _, skip = ce_reference(x, target)
    p = torch.softmax(x.double(), -1)
    p.scatter_add_(1, target.clamp(0, n - 1)[:, None],
                   -torch.ones(m, 1, dtype=p.dtype, device="cuda"))
    scale = 1.0 / max(1, int((~skip).sum()))
    ref_dx = p * scale
    ref_dx[skip] = 0
    loss = torch.full((m,), float("nan"), device="cuda")
    dx = x if in_place else nan_like(x)
    CE_FWD_BWD.launch((t, n, "true"), m,
                      (x.data_ptr(), n, target.data_ptr(), float_bits(scale),
                       IGNORE_INDEX, loss.data_ptr(), dx.data_ptr(), n),
                      stream())
    torch.cuda.synchronize()
    assert rel(loss, ref_loss) < 1e-4
    assert close(dx, ref_dx, t)


@pytest.mark.parametrize("t,n", [("bf16", 262144), ("f32", 131072)])
def test_all_negative_infinity_row(t, n):
    m = 3
    x = torch.randn(m, n, device="cuda").to(DT[t])
    x[1] = float("-inf")
    target = torch.zeros(m, dtype=torch.int64, device="cuda")
    loss = torch.zeros(m, device="cuda")
    lse = torch.zeros(m, device="cuda")
    CE_FWD.launch((t, n, "false"), m, (x.data_ptr(), n, target.data_ptr(),
                                       loss.data_ptr(), lse.data_ptr()),
                  stream())
    torch.cuda.synchronize()
    assert lse[1].item() == -math.inf
    ref = torch.logsumexp(x.double(), -1)
    assert abs(lse[0].item() - ref[0].item()) < 1e-4


@pytest.mark.parametrize("t,n", [("bf16", 262144), ("f32", 32768)])
def test_batch_invariance(t, n):
    # A row's result depends on N and the config only, never on M.
    x = torch.randn(64, n, device="cuda").to(DT[t])
    outs = []
    for m in (1, 64):
        y = nan_like(x[:m])
        SOFTMAX_FWD.launch((t, n), m, (x.data_ptr(), n, y.data_ptr(), n),
                           stream())
        torch.cuda.synchronize()
        outs.append(y[0].clone())
    assert torch.equal(outs[0], outs[1])


def check_cross_entropy_op(x, t):
    """quack_mlir.cross_entropy on the rows of x (mean loss over random
    targets) and its gradient, against float64 autograd."""
    import quack_mlir
    m, n = x.shape
    target = torch.randint(0, n, (m,), device="cuda")
    x1 = x.detach().clone().requires_grad_(True)
    x2 = x.detach().double().requires_grad_(True)
    loss = quack_mlir.cross_entropy(x1, target)
    ref = torch.nn.functional.cross_entropy(x2, target)
    assert rel(loss.detach(), ref.detach()) < 1e-4
    loss.backward()
    ref.backward()
    assert close(x1.grad, x2.grad, t)


@pytest.mark.parametrize("t,n", [("bf16", 262144), ("f32", 131072),
                                 ("bf16", 16390)])
def test_torch_ops(t, n):
    import quack_mlir
    m = 5
    x = torch.randn(m, n, device="cuda").to(DT[t])
    w = torch.randn(n, device="cuda").to(DT[t])
    b = torch.randn(n, device="cuda").to(DT[t])
    xd = x.double()
    y = quack_mlir.rmsnorm(x, w, eps=1e-6)
    ref = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double()
    assert close(y, ref, t)
    assert close(quack_mlir.softmax(x), torch.softmax(xd, -1), t)
    z = quack_mlir.layer_norm(x, (n,), w, b)
    ref = torch.nn.functional.layer_norm(xd, (n,), w.double(), b.double())
    assert close(z, ref, t)
    check_cross_entropy_op(x, t)


# Cluster fallbacks: a bundle variant on a cluster carries the same kernel
# on halved clusters, which the runtime loads where the device cannot
# co-schedule the cluster. QUACK_RT_MAX_CLUSTER_SIZE rules clusters out
# the same way, so these tests exercise the fallback on any Hopper GPU.

def forget_kernels():
    """Drops every loaded kernel, so that the next launch loads (and picks
    a variant) again."""
    from quack_mlir import _kernels
    _kernels.set_bundle(_kernels._bundle_spec)


@pytest.fixture
def cluster_cap(monkeypatch):
    def set_cap(value):
        monkeypatch.setenv("QUACK_RT_MAX_CLUSTER_SIZE", str(value))
        forget_kernels()
    yield set_cap
    monkeypatch.delenv("QUACK_RT_MAX_CLUSTER_SIZE", raising=False)
    forget_kernels()


@pytest.mark.parametrize("t,n,cap", [("bf16", 131072, 4), ("bf16", 131072, 1),
                                     ("f32", 262144, 8), ("bf16", 32768, 1)])
def test_cluster_fallback_softmax(cluster_cap, t, n, cap):
    cluster_cap(cap)
    m = 3
    x = (torch.randn(m, n, device="cuda") * 4).to(DT[t])
    y = nan_like(x)
    args = (x.data_ptr(), n, y.data_ptr(), n)
    kernel = SOFTMAX_FWD.select((t, n), args)
    assert kernel.num_cluster_fallbacks >= 1
    size, note = kernel.cluster_in_use()
    assert size <= cap
    assert f"QUACK_RT_MAX_CLUSTER_SIZE={cap} rules out a cluster of" in note
    assert f"using the fallback on a cluster of {size}" in note
    SOFTMAX_FWD.launch((t, n), m, args, stream())
    torch.cuda.synchronize()
    assert close(y, torch.softmax(x.double(), -1), t)


@pytest.mark.parametrize("t,n", [("bf16", 262144), ("f32", 131072)])
def test_cluster_fallback_torch_ops(cluster_cap, t, n):
    # Forward and backward through autograd (the backward kernels run on a
    # persistent grid sized from the fallback's cluster) with clusters of
    # at most 8 CTAs.
    import quack_mlir
    cluster_cap(8)
    m = 3
    x = torch.randn(m, n, device="cuda").to(DT[t]).requires_grad_(True)
    w = torch.randn(n, device="cuda").to(DT[t]).requires_grad_(True)
    dy = torch.randn(m, n, device="cuda").to(DT[t])
    xd = x.detach().double().requires_grad_(True)
    wd = w.detach().double().requires_grad_(True)
    y = quack_mlir.rmsnorm(x, w, eps=1e-6)
    ref = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * wd
    assert close(y, ref, t)
    y.backward(dy)
    ref.backward(dy.double())
    assert close(x.grad, xd.grad, t)
    assert close(w.grad[None], wd.grad[None], t)
    check_cross_entropy_op(x, t)


@pytest.mark.parametrize("t", ["bf16", "f16"])
def test_cluster_fallback_other_grid(cluster_cap, t):
    # layernorm_fwd at 65536 in 16-bit types loops over rows on 4 CTAs (the
    # table's loop over two bulk-copy buffers); its fallback on 2 has a
    # grid over rows, which the runtime sizes from the fallback's metadata.
    cluster_cap(2)
    m = 333
    c = LayerNormCase(t, 65536, m, bias=True)
    size, note = LAYERNORM.select(c.key, c.args).cluster_in_use()
    assert size <= 2 and "rules out a cluster of" in note
    LAYERNORM.launch(c.key, m, c.args, stream())
    torch.cuda.synchronize()
    c.check()


def test_cluster_fallback_exhausted(cluster_cap):
    # softmax_fwd at bf16 262144 runs on 16 CTAs, with fallbacks down to 4
    # (on 2, a thread would hold more vectors than it can).
    from quack_mlir._runtime import KernelError
    cluster_cap(2)
    t, n, m = "bf16", 262144, 1
    x = torch.randn(m, n, device="cuda").to(DT[t])
    y = nan_like(x)
    with pytest.raises(KernelError, match="QUACK_RT_MAX_CLUSTER_SIZE=2 rules "
                       "out a cluster of 16 CTAs.*no cluster fallback of the "
                       "kernel can run either"):
        SOFTMAX_FWD.launch((t, n), m, (x.data_ptr(), n, y.data_ptr(), n),
                           stream())


def test_cluster_cap_must_be_a_number(cluster_cap):
    from quack_mlir._runtime import KernelError
    cluster_cap("eight")
    t, n, m = "bf16", 131072, 1
    x = torch.randn(m, n, device="cuda").to(DT[t])
    y = nan_like(x)
    with pytest.raises(KernelError, match="QUACK_RT_MAX_CLUSTER_SIZE must be "
                       "a positive number of CTAs, got \"eight\""):
        SOFTMAX_FWD.launch((t, n), m, (x.data_ptr(), n, y.data_ptr(), n),
                           stream())
