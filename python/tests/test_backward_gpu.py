"""GPU tests of quack_mlir.rmsnorm_backward and layer_norm_backward against
float64 references: dx per row, and the weight (and bias) gradients summed
over all rows by the persistent grid and its finishing kernel.

Needs torch with CUDA and kernel bundles ($QUACK_MLIR_BUNDLE) holding
rmsnorm_bwd and layernorm_bwd; N values missing from the bundle are
skipped.
"""

import pytest

from gpu_common import DTYPES, dtype_id, rel_err, torch, seed_for

import quack_mlir  # noqa: E402
from quack_mlir import _ops
from quack_mlir._launch import Launcher
from quack_mlir.bundle import KernelNotFoundError

# ||out - ref|| / ||ref|| by dtype: dx, and the sums over rows (rounded once).
DX_TOL = {torch.bfloat16: 1.5e-2, torch.float16: 3e-3, torch.float32: 1e-5}
DW_TOL = {torch.bfloat16: 8e-3, torch.float16: 1e-3, torch.float32: 1e-5}
EPS = 1e-5

# 6000, 8192 and 12000: inside the table's buckets (N/2, N] of 8192 and 16384,
# whose entries loop over several bulk-copy buffers (N short of the bucket:
# threads past the end of the row).
# 256 and 512: the tables' short-row entries (many rows per CTA).
NS = [1, 7, 256, 512, 1000, 4096, 6000, 8192, 12000, 16384, 32768, 65536]
MS = [1, 3, 4099]
# The longest rows (clusters of 8-16 CTAs; where two row groups do not fit
# in the loop's registers, bulk copies into shared memory): M = 67 rows is
# more than the clusters a device keeps resident, so that each loops over
# several row groups and reuses its buffers and mbarriers.
LONG_NS = [131072, 262144]
LONG_MS = [1, 3, 67]
CASES = [(n, m) for n in NS for m in MS] + \
    [(n, m) for n in LONG_NS for m in LONG_MS]


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(seed_for(request.node.name))


def _run(fn, *args):
    try:
        return fn(*args)
    except KernelNotFoundError as e:
        pytest.skip(f"not in the bundle: {e}")


def rms_reference(dy, x, w, rstd):
    xd, dyd, wd = x.double(), dy.double(), w.double()
    r = rstd.double().unsqueeze(-1)
    xhat = xd * r
    g = dyd * wd
    c = (xhat * g).mean(-1, keepdim=True)
    dx = (g - xhat * c) * r
    return dx, (dyd * xhat).sum(0)


def sum_scale(terms):
    """The size of a sum over rows for its error measure: the sum of its
    terms' magnitudes. A few terms can cancel to a sum far smaller than
    each, leaving the rounding of the terms (of their size) as its error."""
    return terms.abs().sum(0)


def ln_reference(dy, x, w, mean, rstd):
    xd, dyd, wd = x.double(), dy.double(), w.double()
    r = rstd.double().unsqueeze(-1)
    xhat = (xd - mean.double().unsqueeze(-1)) * r
    g = dyd * wd
    dx = (g - g.mean(-1, keepdim=True) -
          xhat * (xhat * g).mean(-1, keepdim=True)) * r
    return dx, (dyd * xhat).sum(0), dyd.sum(0)


def _check(out, ref, tol, what, scale=None):
    """||out - ref|| / ||scale|| < tol, where scale (default ref) is the
    size of the terms: dx is a difference of terms that cancel exactly when
    N = 1, and rounding leaves noise of the terms' size."""
    scale = ref if scale is None else scale
    norm = scale.double().norm().item()
    if ref.numel() and norm > 0:
        err = ((out.double() - ref.double()).norm() / norm).item()
        assert err < tol, f"{what} relative error {err:.3g}"
    else:
        assert torch.all(out == 0), f"{what} must be zeros"


def dx_scale(dy, w, rstd):
    return dy.double() * w.double() * rstd.double().unsqueeze(-1)


def check_rmsnorm_backward(dy, x, w):
    """rmsnorm_backward from x's exact rstd against the float64 reference
    (skips when the bundle lacks the kernel); returns (dx, dw)."""
    dtype = x.dtype
    rstd = torch.rsqrt(x.double().pow(2).mean(-1) + EPS).float()
    dx, dw = _run(quack_mlir.rmsnorm_backward, dy, x, w, rstd)
    torch.cuda.synchronize()
    dx_ref, dw_ref = rms_reference(dy, x, w, rstd)
    _check(dx, dx_ref, DX_TOL[dtype], "dx", dx_scale(dy, w, rstd))
    xhat = x.double() * rstd.double().unsqueeze(-1)
    _check(dw, dw_ref, DW_TOL[dtype], "dw", sum_scale(dy.double() * xhat))
    return dx, dw


def check_layer_norm_backward(dy, x, w):
    """layer_norm_backward from x's exact mean and rstd against the float64
    reference (skips when the bundle lacks the kernel)."""
    dtype = x.dtype
    xd = x.double()
    mean = xd.mean(-1)
    rstd = torch.rsqrt((xd - mean.unsqueeze(-1)).pow(2).mean(-1) + EPS)
    mean, rstd = mean.float(), rstd.float()
    dx, dw, db = _run(quack_mlir.layer_norm_backward, dy, x, w, mean, rstd)
    torch.cuda.synchronize()
    dx_ref, dw_ref, db_ref = ln_reference(dy, x, w, mean, rstd)
    _check(dx, dx_ref, DX_TOL[dtype], "dx", dx_scale(dy, w, rstd))
    xhat = (xd - mean.double().unsqueeze(-1)) * rstd.double().unsqueeze(-1)
    _check(dw, dw_ref, DW_TOL[dtype], "dw", sum_scale(dy.double() * xhat))
    _check(db, db_ref, DW_TOL[dtype], "db", sum_scale(dy.double()))


@pytest.mark.parametrize("n,m", CASES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_rmsnorm_backward(dtype, n, m):
    x = torch.randn(m, n, device="cuda").to(dtype)
    dy = torch.randn(m, n, device="cuda").to(dtype)
    w = torch.randn(n, device="cuda").to(dtype)
    dx, dw = check_rmsnorm_backward(dy, x, w)
    assert dx.shape == x.shape and dx.dtype == dtype
    assert dw.shape == (n,) and dw.dtype == dtype


@pytest.mark.parametrize("n,m", CASES)
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_layer_norm_backward(dtype, n, m):
    x = (torch.randn(m, n, device="cuda") * 2 + 3).to(dtype)
    dy = torch.randn(m, n, device="cuda").to(dtype)
    w = torch.randn(n, device="cuda").to(dtype)
    check_layer_norm_backward(dy, x, w)


def test_matches_torch_autograd():
    """Against torch's own gradients of layer_norm and of RMSNorm."""
    n = 4096
    x = torch.randn(8193, n, device="cuda", requires_grad=True)
    w = torch.randn(n, device="cuda", requires_grad=True)
    b = torch.randn(n, device="cuda", requires_grad=True)
    dy = torch.randn(8193, n, device="cuda")
    torch.nn.functional.layer_norm(x, (n,), w, b, EPS).backward(dy)
    xd = x.detach()
    mean = xd.mean(-1)
    rstd = torch.rsqrt(xd.var(-1, unbiased=False) + EPS)
    dx, dw, db = _run(quack_mlir.layer_norm_backward, dy, xd, w.detach(),
                      mean, rstd)
    assert rel_err(dx, x.grad.double()) < 1e-4
    assert rel_err(dw, w.grad.double()) < 1e-4
    assert rel_err(db, b.grad.double()) < 1e-4
    x.grad = w.grad = None
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w
    y.backward(dy)
    rstd = torch.rsqrt(xd.pow(2).mean(-1) + EPS)
    dx, dw = _run(quack_mlir.rmsnorm_backward, dy, xd, w.detach(), rstd)
    assert rel_err(dx, x.grad.double()) < 1e-4
    assert rel_err(dw, w.grad.double()) < 1e-4


def test_empty_rows_give_zero_sums():
    w = torch.randn(1000, device="cuda")
    x = torch.empty(0, 1000, device="cuda")
    r = torch.empty(0, device="cuda")
    dx, dw = _run(quack_mlir.rmsnorm_backward, x, x, w, r)
    torch.cuda.synchronize()
    assert dx.shape == (0, 1000) and torch.all(dw == 0)
    dx, dw, db = _run(quack_mlir.layer_norm_backward, x, x, w, r, r)
    torch.cuda.synchronize()
    assert torch.all(dw == 0) and torch.all(db == 0)


def test_deterministic_and_strided():
    n = 4096
    big = torch.randn(20000, n + 64, device="cuda").bfloat16()
    x = big[:, :n]
    dy = torch.randn(20000, n, device="cuda").bfloat16()
    w = torch.randn(n, device="cuda").bfloat16()
    rstd = torch.rsqrt(x.double().pow(2).mean(-1) + EPS).float()
    dx1, dw1 = _run(quack_mlir.rmsnorm_backward, dy, x, w, rstd)
    dx2, dw2 = _run(quack_mlir.rmsnorm_backward, dy, x, w, rstd)
    assert torch.equal(dx1, dx2) and torch.equal(dw1, dw2)
    dx_ref, dw_ref = rms_reference(dy, x, w, rstd)
    _check(dx1, dx_ref, DX_TOL[torch.bfloat16], "dx")
    _check(dw1, dw_ref, DW_TOL[torch.bfloat16], "dw")


@pytest.mark.parametrize("offset", [4, 2], ids=["a8", "a4"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16],
                         ids=dtype_id)
def test_misaligned_rows_at_262144(dtype, offset):
    # Rows that start `offset` 16-bit elements into a 16-byte line run the
    # 8- and 4-byte variants: 128-bit loads are out, and at N = 262144 the
    # partial sums stay in shared memory beside rows held in registers.
    n, m = 262144, 3
    def rows(scale=1.0, shift=0.0):
        buf = torch.randn(m, n + 8, device="cuda") * scale + shift
        return buf.to(dtype)[:, offset:offset + n]
    x, dy = rows(2.0, 3.0), rows()
    w = torch.randn(n, device="cuda").to(dtype)
    check_rmsnorm_backward(dy, x, w)
    check_layer_norm_backward(dy, x, w)


# rmsnorm_bwd with a residual input (dresidual, the gradient reaching the
# forward's h, added to dx), which the Python ops do not use: launched
# directly. The 8-byte alignment class at 262144 brings its three rows
# through registers (in f32, quackc accumulates dw before the exchange
# there to hold them without spilling).
_RMS_BWD_RESIDUAL = Launcher(
    "rmsnorm_bwd", ("T", "TW", "N"),
    fixed={"RESIDUAL": "true", "OFFSET": "false"})


@pytest.mark.parametrize("n,offset", [(4096, 0), (32768, 0), (262144, 0),
                                      (262144, 8)],
                         ids=["N4096", "N32768", "N262144", "N262144-a8"])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_rmsnorm_bwd_with_residual(dtype, n, offset):
    m = 5
    size = torch.empty((), dtype=dtype).element_size()
    shift = offset // size  # elements into a 16-byte line

    def rows(scale=1.0, bias=0.0):
        buf = torch.randn(m, n + 16 // size, device="cuda") * scale + bias
        return buf.to(dtype)[:, shift:shift + n]
    x, dy, dres = rows(2.0, 1.0), rows(), rows()
    w = torch.randn(n, device="cuda").to(dtype)
    rstd = torch.rsqrt(x.double().pow(2).mean(-1) + EPS).float()
    dx = torch.full((m, n), float("nan"), device="cuda").to(dtype)
    dw = torch.full((n,), float("nan"), device="cuda").to(dtype)
    t = {torch.bfloat16: "bf16", torch.float16: "f16",
         torch.float32: "f32"}[dtype]
    stride = x.stride(0)
    try:
        _ops.launch_with_workspace(_RMS_BWD_RESIDUAL, (t, t, n),
                                   torch.cuda.current_device(), m, (
            x.data_ptr(), stride, w.data_ptr(), dy.data_ptr(), stride,
            rstd.data_ptr(), dres.data_ptr(), stride, dx.data_ptr(), n,
            dw.data_ptr(), 0))
    except KernelNotFoundError as e:
        pytest.skip(f"not in the bundle: {e}")
    torch.cuda.synchronize()
    dx_ref, dw_ref = rms_reference(dy, x, w, rstd)
    _check(dx, dx_ref + dres.double(), DX_TOL[dtype], "dx",
           dx_scale(dy, w, rstd) + dres.double())
    xhat = x.double() * rstd.double().unsqueeze(-1)
    _check(dw, dw_ref, DW_TOL[dtype], "dw", sum_scale(dy.double() * xhat))


def test_bad_inputs():
    w = torch.randn(64, device="cuda")
    x = torch.randn(8, 64, device="cuda")
    r = torch.randn(8, device="cuda")
    with pytest.raises(ValueError, match="dy must have x's shape"):
        quack_mlir.rmsnorm_backward(x[:4], x, w, r)
    with pytest.raises(TypeError, match="rstd must have dtype torch.float32"):
        quack_mlir.rmsnorm_backward(x, x, w, r.double())
    with pytest.raises(ValueError, match=r"rstd must have shape \[M\]"):
        quack_mlir.rmsnorm_backward(x, x, w, r[:3])
    with pytest.raises(TypeError, match="dy has dtype"):
        quack_mlir.layer_norm_backward(x.half(), x, w, r, r)
    with pytest.raises(ValueError, match="mean is on cpu"):
        quack_mlir.layer_norm_backward(x, x, w, r.cpu(), r)
    # dy of x's shape and dtype on another device.
    with pytest.raises(ValueError, match="dy is on cpu but x is on cuda"):
        quack_mlir.rmsnorm_backward(x.cpu(), x, w, r)
    with pytest.raises(ValueError, match="dy is on cpu but x is on cuda"):
        quack_mlir.layer_norm_backward(x.cpu(), x, w, r, r)


@pytest.mark.parametrize("n", [1000, 4096, 32768])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_autograd_through_the_ops(dtype, n):
    """rmsnorm and layer_norm backpropagate through rmsnorm_bwd and
    layernorm_bwd: gradients against torch autograd in float64."""
    shape = (3, 683, n)
    x0 = torch.randn(shape, device="cuda").to(dtype)
    w0 = torch.randn(n, device="cuda").to(dtype)
    b0 = torch.randn(n, device="cuda").to(dtype)
    dy = torch.randn(shape, device="cuda").to(dtype)
    tol = {torch.bfloat16: 2e-2, torch.float16: 4e-3, torch.float32: 1e-4}[dtype]

    x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
    try:
        quack_mlir.rmsnorm(x, w, eps=EPS).backward(dy)
    except KernelNotFoundError as e:
        pytest.skip(f"not in the bundle: {e}")
    xd = x0.double().requires_grad_()
    wd = w0.double().requires_grad_()
    (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + EPS) * wd).backward(
        dy.double())
    assert x.grad.dtype == dtype and w.grad.dtype == dtype
    assert rel_err(x.grad, xd.grad) < tol
    assert rel_err(w.grad, wd.grad) < tol

    x, w = x0.clone().requires_grad_(), w0.clone().requires_grad_()
    b = b0.clone().requires_grad_()
    quack_mlir.layer_norm(x, (n,), w, b, EPS).backward(dy)
    xd = x0.double().requires_grad_()
    wd = w0.double().requires_grad_()
    bd = b0.double().requires_grad_()
    torch.nn.functional.layer_norm(xd, (n,), wd, bd, EPS).backward(dy.double())
    assert rel_err(x.grad, xd.grad) < tol
    assert rel_err(w.grad, wd.grad) < tol
    assert rel_err(b.grad, bd.grad) < tol


def test_torch_compile_captures_the_backward():
    """Under torch.compile the forward and backward are torch.library ops
    with autograd; the gradients match eager mode."""
    n = 4096
    x0 = torch.randn(1024, n, device="cuda").bfloat16()
    w0 = torch.randn(n, device="cuda").bfloat16()
    b0 = torch.randn(n, device="cuda").bfloat16()
    dy = torch.randn(1024, n, device="cuda").bfloat16()

    def step(fn, *params):
        ps = [p.clone().requires_grad_() for p in params]
        fn(*ps).backward(dy)
        return [p.grad for p in ps]

    def rms(x, w):
        return quack_mlir.rmsnorm(x, w, eps=EPS) * 2

    def ln(x, w, b):
        return quack_mlir.layer_norm(x, (n,), w, b, EPS) * 2

    for fn, params in ((rms, (x0, w0)), (ln, (x0, w0, b0))):
        eager = step(fn, *params)
        compiled = step(torch.compile(fn, fullgraph=True), *params)
        for e, c in zip(eager, compiled):
            assert torch.equal(e, c)
