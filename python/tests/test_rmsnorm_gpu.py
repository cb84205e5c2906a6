"""GPU tests of quack_mlir.rmsnorm against a float64 reference.

Needs torch with CUDA and a kernel bundle ($QUACK_MLIR_BUNDLE); without
either the whole module is skipped with the reason shown (pytest -rs).
"""

import os

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

if not torch.cuda.is_available():
    pytest.skip("no CUDA device available", allow_module_level=True)
if not os.environ.get("QUACK_MLIR_BUNDLE"):
    pytest.skip("QUACK_MLIR_BUNDLE is not set (a directory written by "
                "quackc --bundle, or a directory of such directories)",
                allow_module_level=True)

import quack_mlir  # noqa: E402
from gpu_common import rel_err, seed_for  # noqa: E402

DTYPES = [torch.bfloat16, torch.float16, torch.float32]
# Relative error norm ||out - ref|| / ||ref|| allowed for y, by dtype.
Y_TOL = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 1e-5}
RSTD_TOL = 5e-5
EPS = 1e-6


def reference(x, w, eps=EPS):
    xd = x.double()
    rstd = torch.rsqrt(xd.pow(2).mean(-1) + eps)
    return xd * rstd.unsqueeze(-1) * w.double(), rstd.reshape(-1)


def poisoned_run(x, w, eps=EPS):
    """Runs rmsnorm with outputs pre-filled with NaN, to catch unwritten
    elements: the allocator hands back the poisoned blocks."""
    m = x.numel() // x.shape[-1]
    y_poison = torch.full(x.shape, float("nan"), dtype=x.dtype,
                          device=x.device)
    r_poison = torch.full((m,), float("nan"), dtype=torch.float32,
                          device=x.device)
    del y_poison, r_poison
    return quack_mlir.rmsnorm(x, w, eps=eps, return_rstd=True)


def check(x, w, eps=EPS):
    y, rstd = poisoned_run(x, w, eps)
    torch.cuda.synchronize()
    assert y.shape == x.shape and y.dtype == x.dtype
    assert rstd.dtype == torch.float32
    assert rstd.shape == (x.numel() // x.shape[-1],)
    y_ref, rstd_ref = reference(x, w, eps)
    err = rel_err(y, y_ref)
    assert err < Y_TOL[x.dtype], f"y relative error {err:.3g}"
    rerr = rel_err(rstd, rstd_ref)
    assert rerr < RSTD_TOL, f"rstd relative error {rerr:.3g}"


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(seed_for(request.node.name))


# 256 and 512: the short rows where the tuning tables hold most entries
# (loops over rows with the next rows' loads in flight, one row per CTA
# through bulk copies), which tune.py and the benchmark check only at
# M = 32768 with 16-byte alignment.
@pytest.mark.parametrize("m", [1, 3, 32768])
@pytest.mark.parametrize("n", [1, 7, 256, 512, 1000, 4096, 8192, 16384])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
def test_rmsnorm(dtype, n, m):
    x = torch.randn(m, n, dtype=dtype, device="cuda")
    w = torch.randn(n, dtype=dtype, device="cuda")
    check(x, w)


# A 16-byte aligned row stride and an odd one (served by a narrower variant).
@pytest.mark.parametrize("pad", [64, 3])
@pytest.mark.parametrize("n", [7, 256, 512, 1000, 4096])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
def test_strided_view(dtype, n, pad):
    big = torch.randn(257, n + pad, dtype=dtype, device="cuda")
    x = big[:, :n]
    assert x.stride(0) == n + pad
    w = torch.randn(n, dtype=dtype, device="cuda")
    before = big.clone()
    check(x, w)
    assert torch.equal(big, before), "the input was modified"


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
def test_misaligned_pointer(dtype):
    n = 1000
    flat = torch.randn(65 * n + 1, dtype=dtype, device="cuda")
    x = flat[1:].view(65, n)  # offset by one element
    w = torch.randn(n, dtype=dtype, device="cuda")
    check(x, w)


def test_leading_dims_and_eps():
    x = torch.randn(4, 5, 6, 1000, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(1000, dtype=torch.bfloat16, device="cuda")
    check(x, w, eps=1e-2)
    # Leading dims that still form evenly spaced rows: a slice of dim 0 of a
    # view with wider rows.
    big = torch.randn(4, 5, 1024, dtype=torch.bfloat16, device="cuda")
    check(big[1:3, :, :1000], w)


def test_non_viewable_leading_dims_are_refused():
    x = torch.randn(4, 5, 6, 1000, device="cuda")[:, 1:4]
    w = torch.randn(1000, device="cuda")
    with pytest.raises(ValueError, match="cannot be viewed as rows"):
        quack_mlir.rmsnorm(x, w)
    x = torch.randn(6, 4, 1000, device="cuda").transpose(0, 1)
    with pytest.raises(ValueError, match="cannot be viewed as rows"):
        quack_mlir.rmsnorm(x, w)


def test_zero_rows():
    x = torch.empty(0, 4096, dtype=torch.bfloat16, device="cuda")
    w = torch.ones(4096, dtype=torch.bfloat16, device="cuda")
    y, rstd = quack_mlir.rmsnorm(x, w, return_rstd=True)
    assert y.shape == (0, 4096) and rstd.shape == (0,)


def test_special_values():
    x = torch.randn(4, 4096, device="cuda")
    x[0].zero_()  # rstd = 1/sqrt(eps), y = 0
    x[1, 5] = float("inf")
    x[2, 9] = float("nan")
    w = torch.randn(4096, device="cuda")
    y, rstd = quack_mlir.rmsnorm(x, w, return_rstd=True)
    torch.cuda.synchronize()
    assert torch.equal(y[0], torch.zeros_like(y[0]))
    assert torch.isclose(rstd[0].double(), torch.tensor(1e3,
                         dtype=torch.float64, device="cuda"), rtol=1e-5)
    assert rstd[1].item() == 0.0
    assert torch.isnan(y[2]).all()
    ref, _ = reference(x[3:], w)
    assert rel_err(y[3:], ref) < Y_TOL[torch.float32]


def test_missing_variant_is_named():
    x = torch.randn(2, 12345, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(12345, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(quack_mlir.KernelNotFoundError,
                       match=r"rmsnorm_fwd \(.*N=12345.*T=bf16"):
        quack_mlir.rmsnorm(x, w)


def test_device_mismatch():
    x = torch.randn(2, 4096, device="cuda")
    with pytest.raises(ValueError, match="weight is on cpu but x is on cuda"):
        quack_mlir.rmsnorm(x, torch.randn(4096))


def test_side_stream_and_graph_capture():
    x = torch.randn(64, 4096, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
    ref, _ = reference(x, w)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = quack_mlir.rmsnorm(x, w)  # also loads the module: not captured
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    assert rel_err(y, ref) < Y_TOL[x.dtype]
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        yg = quack_mlir.rmsnorm(x, w)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    ref, _ = reference(x, w)
    assert rel_err(yg, ref) < Y_TOL[x.dtype]


def test_torch_compile():
    def f(x, w):
        return quack_mlir.rmsnorm(x, w) * 2

    x = torch.randn(128, 4096, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
    y = torch.compile(f, fullgraph=True)(x, w)
    ref, _ = reference(x, w)
    assert rel_err(y, ref * 2) < Y_TOL[x.dtype]
