"""GPU tests of the eager ops' C++ launch path (_quack_fast).

Every op's fast result is compared bit for bit with the checked Python path
(the same kernel variant must give the same bits), and the module's count
of launches shows which calls it served. Skipped, visibly, where
the module is not built (scripts/build-torch-ext.sh) unless QUACK_MLIR_FAST=1
asks for it, which makes its absence a failure.
"""

import os

import pytest

from gpu_common import seed_for, torch

import quack_mlir  # noqa: E402
from quack_mlir import _fast, _kernels  # noqa: E402
from quack_mlir.cross_entropy import _forward as ce_forward  # noqa: E402
from quack_mlir.layernorm import (  # noqa: E402
    layer_norm_backward_checked, layer_norm_forward)
from quack_mlir.rmsnorm import (  # noqa: E402
    rmsnorm_backward_checked, rmsnorm_forward)
from quack_mlir.softmax import (  # noqa: E402
    softmax_backward_checked, softmax_forward)

_INFO = _fast.info()
if not _INFO["active"]:
    if os.environ.get("QUACK_MLIR_FAST") == "1":
        raise AssertionError("QUACK_MLIR_FAST=1 but the fast path is off: "
                             + _INFO["reason"])
    pytest.skip("the C++ launch path is not in use: " + _INFO["reason"],
                allow_module_level=True)

DTYPES = [torch.bfloat16, torch.float16, torch.float32]
SHAPES = [(1, 4096), (3, 1000), (1024, 4096), (64, 65536)]


@pytest.fixture(autouse=True)
def _seed(request):
    torch.manual_seed(seed_for(request.node.name))


def launches():
    return _fast._module.launches()


def served(fn, count=1):
    """Runs fn(); returns its result and whether the C++ path made `count`
    launches in it."""
    before = launches()
    out = fn()
    return out, launches() - before == count


def same(a, b):
    """Bit for bit (NaN included)."""
    assert a.shape == b.shape and a.dtype == b.dtype
    assert torch.equal(a.contiguous().view(torch.uint8),
                       b.contiguous().view(torch.uint8)), \
        "fast and Python paths differ"


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "f16", "f32"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_softmax(dtype, shape):
    x = torch.randn(*shape, device="cuda", dtype=dtype) * 3
    y, fast = served(lambda: quack_mlir.softmax(x))
    assert fast
    same(y, softmax_forward(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "f16", "f32"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_rmsnorm(dtype, shape):
    x = torch.randn(*shape, device="cuda", dtype=dtype)
    w = torch.randn(shape[1], device="cuda", dtype=dtype)
    (y, rstd), fast = served(
        lambda: quack_mlir.rmsnorm(x, w, 1e-5, return_rstd=True))
    assert fast
    y0, rstd0 = rmsnorm_forward(x, w, 1e-5)
    same(y, y0)
    same(rstd, rstd0)
    y1, fast = served(lambda: quack_mlir.rmsnorm(x, w, 1e-5))
    assert fast
    same(y1, y0)


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "f16", "f32"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_layer_norm(dtype, shape):
    n = shape[1]
    x = torch.randn(*shape, device="cuda", dtype=dtype) + 1
    w = torch.randn(n, device="cuda", dtype=dtype)
    b = torch.randn(n, device="cuda", dtype=dtype)
    out, fast = served(lambda: quack_mlir.layer_norm(
        x, (n,), w, b, 1e-5, return_stats=True))
    assert fast
    ref = layer_norm_forward(x, w, b, 1e-5)
    for a, r in zip(out, ref):
        same(a, r)
    for ns in (n, [n], torch.Size([n])):
        y, fast = served(lambda: quack_mlir.layer_norm(x, ns, w, b, 1e-5))
        assert fast, ns
        same(y, ref[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "f16", "f32"])
@pytest.mark.parametrize("shape", [(3, 1000), (1024, 4096), (64, 65536)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_cross_entropy(dtype, shape):
    m, n = shape
    x = torch.randn(m, n, device="cuda", dtype=dtype) * 2
    t = torch.randint(0, n, (m,), device="cuda")
    t[::3] = -100
    loss, fast = served(
        lambda: quack_mlir.cross_entropy(x, t, reduction="none"))
    assert fast
    same(loss, ce_forward(x, t, -100)[0])
    mean, fast = served(lambda: quack_mlir.cross_entropy(x, t))
    assert fast
    ref = torch.nn.functional.cross_entropy(x.double(), t)
    assert abs(mean.item() - ref.item()) <= 1e-2 * abs(ref.item()) + 1e-6


def test_shapes_beyond_two_dims_and_many_rows():
    """[B, S, N] inputs, N = 1, and more rows than the scratch buffer of
    unread statistics holds (a new buffer per call there)."""
    x = torch.randn(2, 3, 1000, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(1000, device="cuda", dtype=torch.bfloat16)
    y, fast = served(lambda: quack_mlir.rmsnorm(x, w, 1e-5))
    assert fast and y.shape == x.shape
    same(y, rmsnorm_forward(x, w, 1e-5)[0])
    x1 = torch.randn(64, 1, device="cuda")
    y, fast = served(lambda: quack_mlir.softmax(x1))
    assert fast
    same(y, softmax_forward(x1))
    big = torch.randn(20000, 256, device="cuda", dtype=torch.bfloat16)
    wb = torch.randn(256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, device="cuda", dtype=torch.bfloat16)
    y, fast = served(lambda: quack_mlir.layer_norm(big, 256, wb, b, 1e-5))
    assert fast
    same(y, layer_norm_forward(big, wb, b, 1e-5)[0])
    # Strides of size-1 dimensions kept, as the Python path's empty_like.
    xt = torch.randn(4, 1, 4096, device="cuda").transpose(0, 1)
    y, fast = served(lambda: quack_mlir.softmax(xt))
    assert fast and y.stride() == softmax_forward(xt).stride()


def test_alignment_classes_and_strides():
    """A view one element off, a row stride wider than N and one that breaks
    16-byte alignment: each is its own variant (one more remembered), each
    right."""
    n = 4096
    base = torch.randn(64 * (n + 8) + 8, device="cuda", dtype=torch.bfloat16)
    # The same bundles, every cache emptied (the module's too).
    _kernels.set_bundle(_kernels._bundle_spec)
    assert _fast.info()["variants"] == 0
    for offset, stride in ((0, n), (1, n), (0, n + 8), (0, n + 1)):
        x = base[offset:offset + 64 * stride].view(64, stride)[:, :n]
        y, fast = served(lambda: quack_mlir.softmax(x))
        assert fast
        same(y, softmax_forward(x))
        ref = torch.softmax(x.double(), -1)
        assert (y.double() - ref).abs().max().item() < 1e-2
    # Low address bits 0, 2 (x one element off), 16 (the row stride of
    # N + 8 elements) and 2 again (N + 1): three remembered entries.
    assert _fast.info()["variants"] == 3


BWD_SHAPES = [(1, 4096), (3, 1000), (1024, 4096), (64, 65536)]
# dweight and dbias: sums over rows, compared to the Python path's within
# one rounding of the output dtype.
SUM_TOL = {torch.bfloat16: 1e-2, torch.float16: 1e-3, torch.float32: 1e-5}


def close_sum(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    torch.testing.assert_close(a.float(), b.float(), rtol=SUM_TOL[a.dtype],
                               atol=SUM_TOL[a.dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "f16", "f32"])
@pytest.mark.parametrize("shape", BWD_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_rmsnorm_backward(dtype, shape):
    m, n = shape
    x = torch.randn(m, n, device="cuda", dtype=dtype)
    w = torch.randn(n, device="cuda", dtype=dtype)
    dy = torch.randn(m, n, device="cuda", dtype=dtype)
    rstd = rmsnorm_forward(x, w, 1e-5)[1]
    (dx, dw), fast = served(
        lambda: quack_mlir.rmsnorm_backward(dy, x, w, rstd))
    assert fast
    dx0, dw0 = rmsnorm_backward_checked(dy, x, w, rstd)
    same(dx, dx0)
    close_sum(dw, dw0)


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "f16", "f32"])
@pytest.mark.parametrize("shape", BWD_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_layer_norm_backward(dtype, shape):
    m, n = shape
    x = torch.randn(m, n, device="cuda", dtype=dtype) + 1
    w = torch.randn(n, device="cuda", dtype=dtype)
    b = torch.randn(n, device="cuda", dtype=dtype)
    dy = torch.randn(m, n, device="cuda", dtype=dtype)
    _, mean, rstd = layer_norm_forward(x, w, b, 1e-5)
    (dx, dw, db), fast = served(
        lambda: quack_mlir.layer_norm_backward(dy, x, w, mean, rstd))
    assert fast
    dx0, dw0, db0 = layer_norm_backward_checked(dy, x, w, mean, rstd)
    same(dx, dx0)
    close_sum(dw, dw0)
    close_sum(db, db0)


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "f16", "f32"])
@pytest.mark.parametrize("shape", BWD_SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_softmax_backward(dtype, shape):
    y = torch.softmax(torch.randn(*shape, device="cuda") * 3, -1).to(dtype)
    dy = torch.randn(*shape, device="cuda", dtype=dtype)
    dx, fast = served(lambda: quack_mlir.softmax_backward(dy, y))
    assert fast
    same(dx, softmax_backward_checked(dy, y))
    x = torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=True)
    before = launches()
    (g,) = torch.autograd.grad(quack_mlir.softmax(x), (x,), dy)
    assert launches() - before == 2
    same(g, softmax_backward_checked(dy, softmax_forward(x.detach())))


@pytest.mark.parametrize("op", ["rmsnorm", "layer_norm"])
def test_autograd(op):
    """Forward and backward through autograd both launch from C++, and the
    gradients are the Python path's."""
    m, n = 512, 4096
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16,
                    requires_grad=True)
    dy = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    before = launches()
    if op == "rmsnorm":
        y, fast = served(lambda: quack_mlir.rmsnorm(x, w, 1e-5))
        grads = torch.autograd.grad(y, (x, w), dy)
        y0, rstd = rmsnorm_forward(x.detach(), w.detach(), 1e-5)
        ref = rmsnorm_backward_checked(dy, x.detach(), w.detach(), rstd)
    else:
        y, fast = served(lambda: quack_mlir.layer_norm(x, n, w, b, 1e-5))
        grads = torch.autograd.grad(y, (x, w, b), dy)
        y0, mean, rstd = layer_norm_forward(x.detach(), w.detach(),
                                            b.detach(), 1e-5)
        ref = layer_norm_backward_checked(dy, x.detach(), w.detach(), mean,
                                          rstd)
    assert fast and y.grad_fn is not None
    same(y.detach(), y0)
    same(grads[0], ref[0])
    for g, r in zip(grads[1:], ref[1:]):
        close_sum(g, r)
    # The backward launched from C++ as well.
    assert launches() - before == 2


@pytest.mark.parametrize("dtype", DTYPES, ids=["bf16", "f16", "f32"])
def test_cross_entropy_autograd(dtype):
    """Forward and backward of cross_entropy with autograd both launch from
    C++ (the mean's gradient arrives expanded and is made f32 and
    contiguous first); dlogits as torch's, in float64."""
    m, n = 1024, 4096
    x = (torch.randn(m, n, device="cuda") * 2).to(dtype).requires_grad_()
    t = torch.randint(0, n, (m,), device="cuda")
    t[::5] = -100
    before = launches()
    loss = quack_mlir.cross_entropy(x, t)
    (dx,) = torch.autograd.grad(loss, (x,))
    assert launches() - before == 2
    xd = x.detach().double().requires_grad_()
    (ref,) = torch.autograd.grad(
        torch.nn.functional.cross_entropy(xd, t), (xd,))
    err = ((dx.double() - ref).norm() / ref.norm()).item()
    assert err < {torch.float32: 1e-5}.get(dtype, 1e-2), err


def test_declines_what_the_python_path_serves():
    """An int eps, a tensor subclass, M = 0, a wrong shape or dtype all go
    to the Python path (which words any error)."""
    n = 1024
    x = torch.randn(8, n, device="cuda", requires_grad=True)
    w = torch.randn(n, device="cuda")
    _, fast = served(lambda: quack_mlir.rmsnorm(x.detach(), w, 0))
    assert not fast
    empty = torch.empty(0, n, device="cuda")
    _, fast = served(lambda: quack_mlir.softmax(empty))
    assert not fast
    with pytest.raises(ValueError, match="weight must have shape"):
        quack_mlir.rmsnorm(x.detach(), w[:-1], 1e-6)
    with pytest.raises(TypeError, match="dtype"):
        quack_mlir.softmax(x.detach().double())
    with pytest.raises(ValueError, match="normalized_shape"):
        quack_mlir.layer_norm(x.detach(), n + 1, w, w)
    with pytest.raises(ValueError, match="overlap"):
        quack_mlir.softmax(torch.randn(1, n, device="cuda").expand(8, n))

    class Sub(torch.Tensor):
        pass
    xs = x.detach().as_subclass(Sub)
    y, fast = served(lambda: quack_mlir.softmax(xs))
    assert not fast
    same(y.as_subclass(torch.Tensor), softmax_forward(x.detach()))
    # Parameters are weights like any other; inputs that require grad are
    # served under no_grad and in inference mode.
    p = torch.nn.Parameter(w.clone())
    with torch.no_grad():
        _, fast = served(lambda: quack_mlir.rmsnorm(x, p, 1e-6))
        assert fast
        _, fast = served(lambda: quack_mlir.layer_norm(x, n, p, p, 1e-6))
        assert fast
        t = torch.randint(0, n, (8,), device="cuda")
        _, fast = served(lambda: quack_mlir.cross_entropy(x, t))
        assert fast
    with torch.inference_mode():
        xi = torch.randn(8, n, device="cuda")
        y, fast = served(lambda: quack_mlir.softmax(xi))
        assert fast
        same(y, softmax_forward(xi))


def test_stream_and_graph_capture():
    """Launches on the current stream, and inside a CUDA graph capture once
    the variant is known."""
    x = torch.randn(256, 8192, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8192, device="cuda", dtype=torch.bfloat16)
    ref = rmsnorm_forward(x, w, 1e-6)[0]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        y, fast = served(lambda: quack_mlir.rmsnorm(x, w, 1e-6))
    assert fast
    torch.cuda.current_stream().wait_stream(s)
    same(y, ref)
    g = torch.cuda.CUDAGraph()
    before = launches()
    with torch.cuda.graph(g):
        yg = quack_mlir.rmsnorm(x, w, 1e-6)
    assert launches() - before == 1
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    same(yg, rmsnorm_forward(x, w, 1e-6)[0])
