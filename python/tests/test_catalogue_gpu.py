"""GPU tests of the catalogue kernels that have no torch op yet:
cross-entropy (forward, backward, fused, ignore_index), softmax backward,
RMSNorm with a residual, LayerNorm without bias. Each launches the compiled
kernel through the generic launcher and compares with a float64 reference.

Needs a bundle root built with scripts/build-catalogue.sh (the GPU check
script passes it in QUACK_MLIR_BUNDLE).
"""

import math

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA device")

from gpu_common import masked_rel_err as rel  # noqa: E402
from quack_mlir._launch import Launcher, float_bits  # noqa: E402

DT = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
TOL = {"bf16": 1e-2, "f16": 2e-3, "f32": 2e-5}


def stream():
    return torch.cuda.current_stream().cuda_stream


def ce_launcher(kernel):
    return Launcher(kernel, ("T", "N", "IGNORE"))


CE_FWD = ce_launcher("cross_entropy_fwd")
CE_BWD = ce_launcher("cross_entropy_bwd")
CE_FWD_BWD = ce_launcher("cross_entropy_fwd_bwd")
SOFTMAX_BWD = Launcher("softmax_bwd", ("T", "N"))
RMSNORM = Launcher("rmsnorm_fwd", ("T", "TW", "N", "RESIDUAL"),
                   fixed={"BIAS": "false", "OFFSET": "false"})
LAYERNORM = Launcher("layernorm_fwd", ("T", "TW", "N", "BIAS"))

IGNORE_INDEX = -100


def ce_inputs(t, m, n, ignore):
    x = torch.randn(m, n, device="cuda").mul_(3).to(DT[t])
    target = torch.randint(0, n, (m,), device="cuda")
    if ignore and m > 2:
        target[1] = IGNORE_INDEX
    return x, target


def ce_reference(x, target, ignore):
    xd = x.double()
    lse = torch.logsumexp(xd, -1)
    safe = target.clamp(0, x.shape[1] - 1)
    loss = lse - xd.gather(1, safe[:, None])[:, 0]
    skip = target == IGNORE_INDEX if ignore else torch.zeros_like(target,
                                                                  dtype=bool)
    loss = torch.where(skip, torch.zeros_like(loss), loss)
    return loss, lse, skip


@pytest.mark.parametrize("t", ["bf16", "f32"])
@pytest.mark.parametrize("n", [7, 256, 512, 1000, 4096])
@pytest.mark.parametrize("m", [3, 1025])
@pytest.mark.parametrize("ignore", [False, True])
def test_cross_entropy_fwd(t, n, m, ignore):
    x, target = ce_inputs(t, m, n, ignore)
    loss = torch.full((m,), float("nan"), device="cuda")
    lse = torch.full((m,), float("nan"), device="cuda")
    args = [x.data_ptr(), n, target.data_ptr()]
    if ignore:
        args.append(IGNORE_INDEX)
    args += [loss.data_ptr(), lse.data_ptr()]
    CE_FWD.launch((t, n, "true" if ignore else "false"), m, tuple(args),
                  stream())
    torch.cuda.synchronize()
    ref_loss, ref_lse, _ = ce_reference(x, target, ignore)
    assert rel(lse, ref_lse) < 1e-5
    assert rel(loss, ref_loss) < 1e-4


def test_cross_entropy_out_of_range_target_is_nan():
    # A target outside [0, N) that is not ignored reads nothing: NaN loss.
    m, n = 4, 1000
    x, target = ce_inputs("f32", m, n, False)
    target[2] = n + 5
    target[3] = -1
    loss = torch.zeros(m, device="cuda")
    lse = torch.zeros(m, device="cuda")
    CE_FWD.launch(("f32", n, "false"), m, (x.data_ptr(), n, target.data_ptr(),
                                           loss.data_ptr(), lse.data_ptr()),
                  stream())
    torch.cuda.synchronize()
    assert torch.isnan(loss[2:]).all()
    assert torch.isfinite(loss[:2]).all()


def test_logsumexp_of_an_all_negative_infinity_row():
    m, n = 2, 1000
    x = torch.randn(m, n, device="cuda")
    x[1] = float("-inf")
    target = torch.zeros(m, dtype=torch.int64, device="cuda")
    loss = torch.zeros(m, device="cuda")
    lse = torch.zeros(m, device="cuda")
    CE_FWD.launch(("f32", n, "false"), m, (x.data_ptr(), n, target.data_ptr(),
                                           loss.data_ptr(), lse.data_ptr()),
                  stream())
    torch.cuda.synchronize()
    ref = torch.logsumexp(x.double(), -1)
    assert lse[1].item() == -math.inf == ref[1].item()
    assert abs(lse[0].item() - ref[0].item()) < 1e-5


@pytest.mark.parametrize("t", ["bf16", "f32"])
@pytest.mark.parametrize("n", [7, 256, 512, 1000, 4096])
@pytest.mark.parametrize("ignore", [False, True])
def test_cross_entropy_bwd(t, n, ignore):
    m = 1025
    x, target = ce_inputs(t, m, n, ignore)
    _, ref_lse, skip = ce_reference(x, target, ignore)
    lse = ref_lse.float()
    dloss = torch.rand(m, device="cuda")
    dx = torch.full_like(x, float("nan"))
    args = [x.data_ptr(), n, target.data_ptr(), lse.data_ptr(),
            dloss.data_ptr()]
    if ignore:
        args.append(IGNORE_INDEX)
    args += [dx.data_ptr(), n]
    CE_BWD.launch((t, n, "true" if ignore else "false"), m, tuple(args),
                  stream())
    torch.cuda.synchronize()
    p = torch.softmax(x.double(), -1)
    hot = torch.nn.functional.one_hot(target.clamp(0, n - 1), n).double()
    ref = (p - hot) * dloss.double()[:, None]
    ref[skip] = 0
    assert rel(dx, ref) < TOL[t]


@pytest.mark.parametrize("t", ["bf16", "f32"])
@pytest.mark.parametrize("n", [256, 1000, 4096])
@pytest.mark.parametrize("in_place", [False, True])
def test_cross_entropy_fwd_bwd(t, n, in_place):
    m = 1025
    x, target = ce_inputs(t, m, n, True)
    ref_loss, _, skip = ce_reference(x, target, True)
    p = torch.softmax(x.double(), -1)
    scale = 1.0 / max(1, int((~skip).sum()))
    hot = torch.nn.functional.one_hot(target.clamp(0, n - 1), n).double()
    ref_dx = (p - hot) * scale
    ref_dx[skip] = 0
    loss = torch.full((m,), float("nan"), device="cuda")
    dx = x if in_place else torch.full_like(x, float("nan"))
    CE_FWD_BWD.launch((t, n, "true"), m,
                      (x.data_ptr(), n, target.data_ptr(), float_bits(scale),
                       IGNORE_INDEX, loss.data_ptr(), dx.data_ptr(), n),
                      stream())
    torch.cuda.synchronize()
    assert rel(loss, ref_loss) < 1e-4
    assert rel(dx, ref_dx) < TOL[t]


@pytest.mark.parametrize("t", ["bf16", "f16", "f32"])
@pytest.mark.parametrize("n", [7, 256, 512, 1000, 4096])
@pytest.mark.parametrize("m", [1, 1025])
def test_softmax_bwd(t, n, m):
    y = torch.softmax(torch.randn(m, n, device="cuda"), -1).to(DT[t])
    dy = torch.randn(m, n, device="cuda").to(DT[t])
    dx = torch.full_like(y, float("nan"))
    SOFTMAX_BWD.launch((t, n), m, (dy.data_ptr(), n, y.data_ptr(), n,
                                   dx.data_ptr(), n), stream())
    torch.cuda.synchronize()
    yd, dyd = y.double(), dy.double()
    ref = yd * (dyd - (dyd * yd).sum(-1, keepdim=True))
    assert rel(dx, ref) < TOL[t]


@pytest.mark.parametrize("t", ["bf16", "f32"])
@pytest.mark.parametrize("n", [7, 256, 512, 1000, 4096])
def test_rmsnorm_with_residual(t, n):
    m = 1025
    x = torch.randn(m, n, device="cuda").to(DT[t])
    res = torch.randn(m, n, device="cuda").to(DT[t])
    w = torch.randn(n, device="cuda").to(DT[t])
    y = torch.full_like(x, float("nan"))
    h = torch.full_like(x, float("nan"))
    rstd = torch.full((m,), float("nan"), device="cuda")
    eps = 1e-6
    RMSNORM.launch((t, t, n, "true"), m,
                   (x.data_ptr(), n, res.data_ptr(), n, w.data_ptr(),
                    float_bits(eps), y.data_ptr(), n, rstd.data_ptr(),
                    h.data_ptr(), n), stream())
    torch.cuda.synchronize()
    hd = x.double() + res.double()
    r = torch.rsqrt(hd.pow(2).mean(-1) + eps)
    assert rel(h, hd) < TOL[t]
    assert rel(rstd, r) < 1e-4 if t != "f32" else rel(rstd, r) < 1e-5
    assert rel(y, hd * r[:, None] * w.double()) < TOL[t]


@pytest.mark.parametrize("t", ["bf16", "f32"])
@pytest.mark.parametrize("n", [7, 256, 512, 4096])
def test_layernorm_without_bias(t, n):
    m = 1025
    x = torch.randn(m, n, device="cuda").to(DT[t])
    w = torch.randn(n, device="cuda").to(DT[t])
    y = torch.full_like(x, float("nan"))
    mean = torch.full((m,), float("nan"), device="cuda")
    rstd = torch.full((m,), float("nan"), device="cuda")
    eps = 1e-5
    LAYERNORM.launch((t, t, n, "false"), m,
                     (x.data_ptr(), n, w.data_ptr(), float_bits(eps),
                      y.data_ptr(), n, mean.data_ptr(), rstd.data_ptr()),
                     stream())
    torch.cuda.synchronize()
    ref = torch.nn.functional.layer_norm(x.double(), (n,), w.double(), None,
                                         eps)
    assert rel(y, ref) < TOL[t]
    assert rel(mean, x.double().mean(-1)) < 1e-5


@pytest.mark.parametrize("t", ["bf16", "f32"])
@pytest.mark.parametrize("n", [7, 256, 512, 1000, 4096])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_op_with_autograd(t, n, reduction):
    import quack_mlir
    m = 1025
    x, target = ce_inputs(t, m, n, True)
    x1 = x.clone().requires_grad_(True)
    x2 = x.double().clone().requires_grad_(True)
    loss = quack_mlir.cross_entropy(x1, target, reduction=reduction)
    ref = torch.nn.functional.cross_entropy(x2, target, reduction=reduction,
                                            ignore_index=IGNORE_INDEX)
    assert rel(loss.detach(), ref.detach()) < 1e-4
    g = torch.randn_like(ref)
    loss.backward(g.to(loss.dtype))
    ref.backward(g)
    assert x1.grad.dtype == x.dtype
    assert rel(x1.grad, x2.grad) < TOL[t]


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cross_entropy_op_under_torch_compile(reduction):
    """Under torch.compile (fullgraph) cross_entropy is the torch.library
    ops quack_mlir::cross_entropy_fwd/_bwd: loss and gradient as in eager
    mode (the compiled reduction may sum in another order: within one
    rounding)."""
    import quack_mlir
    x, target = ce_inputs("bf16", 1025, 4096, True)

    def f(x):
        loss = quack_mlir.cross_entropy(x, target, reduction=reduction,
                                        ignore_index=IGNORE_INDEX)
        return loss if reduction == "mean" else loss.sum()

    results = []
    for fn in (f, torch.compile(f, fullgraph=True)):
        x1 = x.clone().requires_grad_(True)
        loss = fn(x1)
        loss.backward()
        results.append((loss.detach(), x1.grad))
    torch.testing.assert_close(results[1][0], results[0][0], rtol=1e-5,
                               atol=0)
    torch.testing.assert_close(results[1][1], results[0][1])


def test_cross_entropy_op_all_ignored_mean_is_nan():
    import quack_mlir
    x = torch.randn(4, 1000, device="cuda")
    target = torch.full((4,), IGNORE_INDEX, device="cuda")
    assert torch.isnan(quack_mlir.cross_entropy(x, target)).item()
