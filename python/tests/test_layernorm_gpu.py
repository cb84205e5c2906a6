"""GPU tests of quack_mlir.layer_norm against a float64 reference.

Needs torch with CUDA and kernel bundles ($QUACK_MLIR_BUNDLE) holding
layernorm_fwd for T in {bf16, f16, f32} and N in {1, 7, 1000, 4096};
without either the whole module is skipped with the reason shown
(pytest -rs).
"""

import pytest

from gpu_common import (DTYPES, dtype_id, finite, max_row_err, poison,
                        rel_err, seed_for, torch)

import quack_mlir  # noqa: E402

# ||y - ref|| / ||ref||: whole tensor and worst row, by dtype.
Y_TOL = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 1e-5}
Y_ROW_TOL = {torch.bfloat16: 2e-2, torch.float16: 4e-3, torch.float32: 2e-5}
# rstd: relative; mean: relative to the row's root mean square.
RSTD_TOL = 5e-5
MEAN_TOL = 1e-5
EPS = 1e-5


def reference(x, w, b, eps=EPS):
    n = x.shape[-1]
    xd = x.double().reshape(-1, n)
    mean = xd.mean(-1)
    d = xd - mean.unsqueeze(-1)
    rstd = torch.rsqrt(d.pow(2).mean(-1) + eps)
    y = d * rstd.unsqueeze(-1) * w.double() + b.double()
    rms = xd.pow(2).mean(-1).sqrt()
    return y.reshape(x.shape), mean, rstd, rms


def check(x, w, b, eps=EPS):
    m = x.numel() // x.shape[-1]
    poison((x.shape, x.dtype), ((m,), torch.float32), ((m,), torch.float32))
    y, mean, rstd = quack_mlir.layer_norm(x, (x.shape[-1],), w, b, eps=eps,
                                          return_stats=True)
    torch.cuda.synchronize()
    assert y.shape == x.shape and y.dtype == x.dtype and y.is_contiguous()
    assert mean.shape == (m,) and mean.dtype == torch.float32
    assert rstd.shape == (m,) and rstd.dtype == torch.float32
    y_ref, mean_ref, rstd_ref, rms = reference(x, w, b, eps)
    err = rel_err(y, y_ref)
    assert err < Y_TOL[x.dtype], f"y relative error {err:.3g}"
    rerr = max_row_err(y, y_ref)
    assert rerr < Y_ROW_TOL[x.dtype], f"worst row relative error {rerr:.3g}"
    if m:
        rstd_err = ((finite(rstd) - rstd_ref).abs() / rstd_ref).max().item()
        assert rstd_err < RSTD_TOL, f"rstd relative error {rstd_err:.3g}"
        mean_err = ((finite(mean) - mean_ref).abs() /
                    rms.clamp_min(1e-30)).max().item()
        assert mean_err < MEAN_TOL, f"mean error {mean_err:.3g} of the rms"
    return y, mean, rstd


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(seed_for(request.node.name))


def inputs(m, n, dtype, offset=3.0):
    # A nonzero mean, so that centring matters.
    x = (torch.randn(m, n, device="cuda") * 2 + offset).to(dtype)
    w = torch.randn(n, device="cuda").to(dtype)
    b = torch.randn(n, device="cuda").to(dtype)
    return x, w, b


# 256 and 512: the tables' short-row entries (as in test_rmsnorm_gpu.py).
@pytest.mark.parametrize("m", [1, 3, 4099])
@pytest.mark.parametrize("n", [1, 7, 256, 512, 1000, 4096])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_layer_norm(dtype, n, m):
    x, w, b = inputs(m, n, dtype)
    y, mean, rstd = check(x, w, b)
    if n == 1:
        # One element per row: mean = x, var = 0 (y = b, checked above).
        assert torch.equal(mean, x.float().reshape(-1))


@pytest.mark.parametrize("pad", [64, 3])
@pytest.mark.parametrize("n", [7, 256, 512, 1000, 4096])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_strided_view(dtype, n, pad):
    big, w, b = inputs(257, n + pad, dtype)
    w, b = w[:n].contiguous(), b[:n].contiguous()
    x = big[:, :n]
    assert x.stride(0) == n + pad
    before = big.clone()
    check(x, w, b)
    assert torch.equal(big, before), "the input was modified"


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_misaligned_pointers(dtype):
    n = 1000
    x, w, b = inputs(65 * n + 1, 1, dtype)
    x = x.reshape(-1)[1:].view(65, n)
    wb = torch.randn(2 * n + 1, device="cuda").to(dtype)
    check(x, wb[1:n + 1], wb[n + 1:])  # weight and bias off by one element


def test_matches_torch_layer_norm_and_leading_dims():
    x = (torch.randn(4, 5, 6, 1000, device="cuda") + 1).bfloat16()
    w = torch.randn(1000, device="cuda").bfloat16()
    b = torch.randn(1000, device="cuda").bfloat16()
    check(x, w, b, eps=1e-2)
    y = quack_mlir.layer_norm(x, (1000,), w, b, 1e-5)
    ref = torch.nn.functional.layer_norm(x.float(), (1000,), w.float(),
                                         b.float(), 1e-5)
    assert rel_err(y, ref.double()) < Y_TOL[torch.bfloat16]
    big = (torch.randn(4, 5, 1024, device="cuda") - 2).bfloat16()
    check(big[1:3, :, :1000], w, b)


def test_constant_rows():
    x = torch.full((4, 4096), 2.5, device="cuda")
    x[1] = 0
    w = torch.randn(4096, device="cuda")
    b = torch.randn(4096, device="cuda")
    y, mean, rstd = quack_mlir.layer_norm(x, 4096, w, b, return_stats=True)
    torch.cuda.synchronize()
    # var = 0: y = b, rstd = 1/sqrt(eps).
    assert torch.allclose(y, b.expand_as(y), rtol=1e-6, atol=1e-6)
    assert torch.allclose(mean.cpu(), torch.tensor([2.5, 0, 2.5, 2.5]))
    assert torch.allclose(rstd.double(), torch.full_like(
        rstd, 1e-5 ** -0.5, dtype=torch.float64), rtol=1e-5)


def test_none_weight_is_refused():
    x, w, b = inputs(4, 1000, torch.float32)
    with pytest.raises(ValueError, match="weight is None"):
        quack_mlir.layer_norm(x, (1000,))
    with pytest.raises(ValueError, match="bias is None"):
        quack_mlir.layer_norm(x, (1000,), w)


def test_zero_rows():
    x = torch.empty(0, 4096, dtype=torch.bfloat16, device="cuda")
    w = torch.ones(4096, dtype=torch.bfloat16, device="cuda")
    y, mean, rstd = quack_mlir.layer_norm(x, (4096,), w, w,
                                          return_stats=True)
    assert y.shape == (0, 4096) and mean.shape == (0,) and rstd.shape == (0,)


def test_device_mismatch():
    x, w, b = inputs(2, 4096, torch.float32)
    with pytest.raises(ValueError, match="bias is on cpu but x is on cuda"):
        quack_mlir.layer_norm(x, 4096, w, b.cpu())


def test_missing_variant_is_named():
    x, w, b = inputs(2, 12345, torch.bfloat16)
    with pytest.raises(quack_mlir.KernelNotFoundError,
                       match=r"layernorm_fwd \(.*N=12345.*T=bf16"):
        quack_mlir.layer_norm(x, 12345, w, b)


def test_side_stream_and_graph_capture():
    x, w, b = inputs(64, 4096, torch.bfloat16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = quack_mlir.layer_norm(x, 4096, w, b)  # loads the module
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    assert rel_err(y, reference(x, w, b)[0]) < Y_TOL[x.dtype]
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        yg = quack_mlir.layer_norm(x, 4096, w, b)
    x.copy_(inputs(64, 4096, torch.bfloat16)[0])
    g.replay()
    torch.cuda.synchronize()
    assert rel_err(yg, reference(x, w, b)[0]) < Y_TOL[x.dtype]


def test_torch_compile():
    def f(x, w, b):
        y, mean, rstd = quack_mlir.layer_norm(x, (x.shape[-1],), w, b,
                                              return_stats=True)
        return y * 2, rstd

    x, w, b = inputs(128, 4096, torch.bfloat16)
    y, rstd = torch.compile(f, fullgraph=True)(x, w, b)
    y_ref, _, rstd_ref, _ = reference(x, w, b)
    assert rel_err(y, y_ref * 2) < Y_TOL[x.dtype]
    assert rel_err(rstd, rstd_ref) < RSTD_TOL
