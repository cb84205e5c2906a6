"""Softmax over the last dimension, with autograd: the forward kernel
(softmax_fwd) and, from its output y, the backward kernel (softmax_bwd:
dx = y * (dy - sum(dy * y)))."""

from . import _fast, _ops
from ._launch import Launcher

__all__ = ["softmax", "softmax_backward"]

_OP = "softmax"
# softmax_fwd(M, x, x.row_stride, y, y.row_stride)
_kernel = Launcher("softmax_fwd", ("T", "N"))
_fast.register(_fast.SOFTMAX, _kernel, lambda t, n: (t, n))


def softmax_forward(x):
    """Returns y; the eager path, validating everything."""
    ops = _ops
    if ops.torch is None:
        ops.init_torch()
    m, n, stride, dt, contiguous = ops.rows(_OP, x)
    dev = ops.device(_OP, x)
    y = ops.empty_rows_like(x, contiguous)
    if m > 0:
        ops.launch(_kernel, (dt[0], n), dev, m, (
            x.data_ptr(), stride, y.data_ptr(), n if m > 1 else 0))
    return y


def _check_dim(x, dim):
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{_OP}: dim must be an int, got "
                        f"{type(dim).__name__}")
    if isinstance(x, _ops.Tensor):
        nd = x.dim()
        if dim != -1 and dim != nd - 1:
            raise ValueError(
                f"{_OP}: only the last dimension is supported (dim=-1 or "
                f"dim={max(nd - 1, 0)} for this {nd}-d x), got dim={dim}; "
                "move that dimension last first, e.g. "
                f"softmax(x.movedim({dim}, -1)).movedim(-1, {dim})")


_op = None


def _get_op():
    """The torch.library op that torch.compile sees."""
    global _op
    if _op is not None:
        return _op
    torch = _ops.torch

    @torch.library.custom_op("quack_mlir::softmax_fwd", mutates_args=())
    def softmax_fwd(x: torch.Tensor) -> torch.Tensor:
        return softmax_forward(x)

    @softmax_fwd.register_fake
    def _(x):
        return torch.empty_like(x, memory_format=torch.contiguous_format)

    # The backward as an op of its own, so that torch.compile captures the
    # whole training step.
    @torch.library.custom_op("quack_mlir::softmax_bwd", mutates_args=())
    def softmax_bwd(dy: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return softmax_backward(dy.contiguous(), y)

    @softmax_bwd.register_fake
    def _(dy, y):
        return torch.empty_like(y, memory_format=torch.contiguous_format)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return softmax_bwd(dy, y)

    softmax_fwd.register_autograd(backward, setup_context=setup_context)
    _op = softmax_fwd
    return _op


def softmax(x, dim=-1):
    """Softmax over the last dimension of `x`, as torch.softmax(x, dim).

    y = exp(x - max(x)) / sum(exp(x - max(x))) along the last dimension,
    computed in f32 and returned in x's dtype and shape (contiguous).

    x: [..., N] on a CUDA device, bf16/f16/f32, last dimension unit-stride
    (a 2-D view with a wider row stride is used as is). `dim` must name the
    last dimension (-1 or x.dim() - 1). Runs on the current CUDA stream.
    With autograd (x requiring grad), the backward runs softmax_bwd from the
    saved output y.
    """
    if _ops.torch is None:
        _ops.init_torch()
    fast = _fast.softmax
    if fast is not None and type(dim) is int and dim == -1 and (
            not _ops.torch.compiler.is_compiling()):
        y = fast(x)
        if y is not None:
            return y
    _check_dim(x, dim)
    torch = _ops.torch
    if torch.compiler.is_compiling():
        return _get_op()(x)
    if torch.is_grad_enabled() and getattr(x, "requires_grad", False):
        return _function().apply(x)
    return softmax_forward(x)


def _autograd_function():
    """The autograd function: the forward kernel, then softmax_bwd from the
    saved output."""
    class Softmax(_ops.torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            # Grad mode is off in here: the C++ path serves (or None).
            fast = _fast.softmax
            y = fast(x) if fast is not None else None
            if y is None:
                y = softmax_forward(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        @_ops.torch.autograd.function.once_differentiable
        def backward(ctx, dy):
            (y,) = ctx.saved_tensors
            if not dy.is_contiguous():
                dy = dy.contiguous()
            return softmax_backward(dy, y)

    return Softmax


_function = _ops.once(_autograd_function)


# softmax_bwd(M, dy, dy.row_stride, y, y.row_stride, dx, dx.row_stride)
_bwd_kernel = Launcher("softmax_bwd", ("T", "N"))
_fast.register(_fast.SOFTMAX_BWD, _bwd_kernel, lambda t, n: (t, n))


def softmax_backward(dy, y):
    """Gradient of softmax from its output: returns dx = y * (dy - sum(dy *
    y, -1)), computed in f32 and returned in y's dtype and shape
    (contiguous).

    dy and y: [..., N] of one dtype and shape, y as softmax returned it.
    """
    fast = _fast.softmax_backward
    if fast is not None:
        dx = fast(dy, y)
        if dx is not None:
            return dx
    return softmax_backward_checked(dy, y)


def softmax_backward_checked(dy, y):
    """softmax_backward through the Python path, validating everything."""
    op = "softmax_backward"
    if _ops.torch is None:
        _ops.init_torch()
    m, n, stride, dt, contiguous = _ops.rows(op, y, "y")
    dy_stride = _ops.rows_like(op, "dy", dy, y, m, n, "y")
    dev = _ops.device(op, y, ("dy", dy), name="y")
    dx = _ops.empty_rows_like(y, contiguous)
    if m > 0:
        _ops.launch(_bwd_kernel, (dt[0], n), dev, m, (
            dy.data_ptr(), dy_stride, y.data_ptr(), stride, dx.data_ptr(),
            n if m > 1 else 0))
    return dx


_ops.register_at_import(_get_op)
