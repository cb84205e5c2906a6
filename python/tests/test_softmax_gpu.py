"""GPU tests of quack_mlir.softmax and softmax_backward (and autograd
through them) against float64 references.

Needs torch with CUDA and kernel bundles ($QUACK_MLIR_BUNDLE) holding
softmax_fwd and softmax_bwd for T in {bf16, f16, f32} and the N the tests
use (scripts/build-catalogue.sh's list); without
either the whole module is skipped with the reason shown (pytest -rs).
"""

import pytest

from gpu_common import (DTYPES, dtype_id, finite, max_row_err, poison,
                        rel_err, seed_for, torch)

import quack_mlir  # noqa: E402

# ||out - ref|| / ||ref||: whole tensor and worst row, by dtype.
TOL = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 1e-5}
ROW_TOL = {torch.bfloat16: 2e-2, torch.float16: 4e-3, torch.float32: 2e-5}


def reference(x):
    return torch.softmax(x.double(), dim=-1)


def check(x, dim=-1):
    poison((x.shape, x.dtype))
    y = quack_mlir.softmax(x, dim=dim)
    torch.cuda.synchronize()
    assert y.shape == x.shape and y.dtype == x.dtype
    assert y.is_contiguous()
    ref = reference(x)
    err = rel_err(y, ref)
    assert err < TOL[x.dtype], f"y relative error {err:.3g}"
    rerr = max_row_err(y, ref)
    assert rerr < ROW_TOL[x.dtype], f"worst row relative error {rerr:.3g}"
    return y


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(seed_for(request.node.name))


def randn(*shape, dtype, scale=4.0):
    # A spread wide enough that exp() matters, small enough for f16.
    return (torch.randn(*shape, device="cuda") * scale).to(dtype)


# 256 and 512: short rows, many per CTA (as in test_rmsnorm_gpu.py).
@pytest.mark.parametrize("m", [1, 3, 4099])
@pytest.mark.parametrize("n", [1, 7, 256, 512, 1000, 4096])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_softmax(dtype, n, m):
    y = check(randn(m, n, dtype=dtype))
    if n == 1:
        assert (y.float() - 1).abs().max().item() <= 1e-6


# A 16-byte aligned row stride and an odd one (served by a narrower variant).
@pytest.mark.parametrize("pad", [64, 3])
@pytest.mark.parametrize("n", [7, 256, 512, 1000, 4096])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_strided_view(dtype, n, pad):
    big = randn(257, n + pad, dtype=dtype)
    x = big[:, :n]
    assert x.stride(0) == n + pad
    before = big.clone()
    check(x)
    assert torch.equal(big, before), "the input was modified"


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_misaligned_pointer(dtype):
    n = 1000
    flat = randn(65 * n + 1, dtype=dtype)
    check(flat[1:].view(65, n))  # offset by one element


def test_leading_dims_and_dim_argument():
    x = randn(4, 5, 6, 1000, dtype=torch.bfloat16)
    check(x)
    check(x, dim=3)
    big = randn(4, 5, 1024, dtype=torch.bfloat16)
    check(big[1:3, :, :1000])


def test_large_values_do_not_overflow():
    # exp(x) alone would overflow f32; exp(x - max) does not.
    x = randn(8, 4096, dtype=torch.float32, scale=1.0) + 200.0
    check(x)
    x = randn(8, 4096, dtype=torch.float16, scale=1.0) * 1000.0
    check(x)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_minus_inf_blocks_with_small_values(dtype):
    # Blocks of -inf between values near -100: some threads hold only -inf
    # (their exponentials, kept for the output, are 0 and must stay 0, not
    # 0 * exp(-inf - lse) = NaN or 0 * inf), and lse is far below 0.
    x = randn(8, 4096, dtype=dtype, scale=1.0) - 100.0
    x[:, (torch.arange(4096, device="cuda") % 2048) < 1024] = float("-inf")
    y = check(x)
    assert not torch.isnan(y).any()
    assert (y[:, :1024] == 0).all()


def test_not_last_dim_is_refused():
    x = randn(4, 1000, dtype=torch.float32)
    with pytest.raises(ValueError, match="only the last dimension"):
        quack_mlir.softmax(x, dim=0)


def test_zero_rows():
    x = torch.empty(0, 4096, dtype=torch.bfloat16, device="cuda")
    assert quack_mlir.softmax(x).shape == (0, 4096)


def test_missing_variant_is_named():
    x = randn(2, 12345, dtype=torch.bfloat16)
    with pytest.raises(quack_mlir.KernelNotFoundError,
                       match=r"softmax_fwd \(N=12345, T=bf16"):
        quack_mlir.softmax(x)


def test_side_stream_and_graph_capture():
    x = randn(64, 4096, dtype=torch.bfloat16)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y = quack_mlir.softmax(x)  # also loads the module: not captured
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    assert rel_err(y, reference(x)) < TOL[x.dtype]
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        yg = quack_mlir.softmax(x)
    x.copy_(randn(64, 4096, dtype=torch.bfloat16))
    g.replay()
    torch.cuda.synchronize()
    assert rel_err(yg, reference(x)) < TOL[x.dtype]


def test_torch_compile():
    def f(x):
        return quack_mlir.softmax(x) * 2

    x = randn(128, 4096, dtype=torch.bfloat16)
    y = torch.compile(f, fullgraph=True)(x)
    assert rel_err(y, reference(x) * 2) < TOL[x.dtype]


# --- Backward: dx = y * (dy - sum(dy * y)), from the forward's output ---

DX_TOL = {torch.bfloat16: 2e-2, torch.float16: 4e-3, torch.float32: 1e-5}


def backward_reference(dy, y):
    yd, dyd = y.double(), dy.double()
    return yd * (dyd - (dyd * yd).sum(-1, keepdim=True))


def dx_scale(dy, y):
    """The size of dx's terms: y * dy and y * sum(dy * y) cancel where a
    row is one-hot, leaving rounding of their size."""
    yd, dyd = y.double(), dy.double()
    return (yd * dyd).abs() + yd * (dyd * yd).abs().sum(-1, keepdim=True)


def check_backward(dy, y):
    dx = quack_mlir.softmax_backward(dy, y)
    torch.cuda.synchronize()
    assert dx.shape == y.shape and dx.dtype == y.dtype and dx.is_contiguous()
    ref = backward_reference(dy, y)
    finite(dx)
    err = ((dx.double() - ref).norm() /
           dx_scale(dy, y).norm().clamp_min(1e-30)).item()
    assert err < DX_TOL[y.dtype], f"dx relative error {err:.3g}"
    return dx


@pytest.mark.parametrize("m", [1, 3, 4099])
@pytest.mark.parametrize("n", [1, 7, 256, 512, 1000, 4096, 16384, 65536])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_softmax_backward(dtype, n, m):
    if m * n > 1 << 26:
        m = (1 << 26) // n
    y = torch.softmax(randn(m, n, dtype=torch.float32), -1).to(dtype)
    dy = randn(m, n, dtype=dtype, scale=1.0)
    check_backward(dy, y)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_softmax_backward_strided_and_misaligned(dtype):
    n = 1000
    y = torch.softmax(randn(65, n + 3, dtype=torch.float32), -1).to(dtype)
    flat = randn(65 * n + 1, dtype=dtype, scale=1.0)
    # y with an odd row stride, dy one element off: a narrower variant.
    check_backward(flat[1:].view(65, n), y[:, :n])


@pytest.mark.parametrize("n", [1000, 4096, 32768])
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_id)
def test_autograd(dtype, n):
    """softmax backpropagates through softmax_bwd: x's gradient against
    torch autograd in float64."""
    x0 = randn(3, 171, n, dtype=dtype)
    dy = randn(3, 171, n, dtype=dtype, scale=1.0)
    x = x0.clone().requires_grad_()
    y = quack_mlir.softmax(x)
    assert y.grad_fn is not None
    y.backward(dy)
    xd = x0.double().requires_grad_()
    torch.softmax(xd, -1).backward(dy.double())
    assert x.grad.dtype == dtype
    err = ((x.grad.double() - xd.grad).norm() /
           dx_scale(dy, y.detach()).norm()).item()
    assert err < DX_TOL[dtype], f"dx relative error {err:.3g}"


def test_torch_compile_captures_the_backward():
    """Under torch.compile the forward and backward are torch.library ops
    with autograd; the gradient matches eager mode bit for bit."""
    x0 = randn(256, 4096, dtype=torch.bfloat16)
    dy = randn(256, 4096, dtype=torch.bfloat16, scale=1.0)

    def f(x):
        return quack_mlir.softmax(x) * 2

    grads = []
    for fn in (f, torch.compile(f, fullgraph=True)):
        x = x0.clone().requires_grad_()
        fn(x).backward(dy)
        grads.append(x.grad)
    assert torch.equal(grads[0], grads[1])
