"""RMSNorm forward over the last dimension."""

from . import _fast, _ops
from ._launch import Launcher, float_bits

__all__ = ["rmsnorm", "rmsnorm_backward"]

_OP = "rmsnorm"
# rmsnorm_fwd(M, x, x.row_stride, w, eps, y, y.row_stride, rstd)
# The plain variant: weight in x's dtype, no residual, bias or offset.
_kernel = Launcher("rmsnorm_fwd", ("T", "TW", "N"),
                   fixed={"RESIDUAL": "false", "BIAS": "false",
                          "OFFSET": "false"})
_fast.register(_fast.RMSNORM, _kernel, lambda t, n: (t, t, n))


def check_eps(op, eps):
    if not isinstance(eps, (int, float)) or isinstance(eps, bool):
        raise TypeError(f"{op}: eps must be a float, got "
                        f"{type(eps).__name__}")


def rmsnorm_forward(x, weight, eps, keep_rstd=True):
    """Returns (y, rstd); the eager path, validating everything. Without
    `keep_rstd`, rstd is written to a scratch buffer and None is returned
    in its place."""
    ops = _ops
    if ops.torch is None:
        ops.init_torch()
    m, n, stride, dt, contiguous = ops.rows(_OP, x)
    ops.vector(_OP, "weight", weight, x, n)
    dev = ops.device(_OP, x, ("weight", weight))
    y = ops.empty_rows_like(x, contiguous)
    rstd = ops.stats_per_row(x, m, dev, keep_rstd)
    if m > 0:
        ops.launch(_kernel, (dt[0], dt[0], n), dev, m, (
            x.data_ptr(), stride, weight.data_ptr(), float_bits(eps),
            y.data_ptr(), n if m > 1 else 0, rstd.data_ptr()))
    return y, (rstd if keep_rstd else None)


_op = None


def _get_op():
    """The torch.library op that torch.compile sees."""
    global _op
    if _op is not None:
        return _op
    torch = _ops.torch

    @torch.library.custom_op("quack_mlir::rmsnorm_fwd", mutates_args=())
    def rmsnorm_fwd(x: torch.Tensor, weight: torch.Tensor,
                    eps: float) -> tuple[torch.Tensor, torch.Tensor]:
        return rmsnorm_forward(x, weight, eps)

    @rmsnorm_fwd.register_fake
    def _(x, weight, eps):
        return (torch.empty_like(x, memory_format=torch.contiguous_format),
                x.new_empty((x.shape[:-1].numel(),), dtype=torch.float32))

    # The backward as an op of its own, so that torch.compile captures the
    # whole training step.
    @torch.library.custom_op("quack_mlir::rmsnorm_bwd", mutates_args=())
    def rmsnorm_bwd(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                    rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return rmsnorm_backward(dy.contiguous(), x, weight, rstd)

    @rmsnorm_bwd.register_fake
    def _(dy, x, weight, rstd):
        return (torch.empty_like(x, memory_format=torch.contiguous_format),
                torch.empty_like(weight))

    def setup_context(ctx, inputs, output):
        x, weight, _eps = inputs
        ctx.save_for_backward(x, weight, output[1])

    def backward(ctx, dy, _drstd):
        x, weight, rstd = ctx.saved_tensors
        dx, dw = rmsnorm_bwd(dy, x, weight, rstd)
        return dx, dw, None

    rmsnorm_fwd.register_autograd(backward, setup_context=setup_context)
    _op = rmsnorm_fwd
    return _op


def rmsnorm(x, weight, eps=1e-6, return_rstd=False):
    """RMSNorm over the last dimension of `x`.

    y = x * rsqrt(mean(x * x, dim=-1) + eps) * weight, accumulated in f32 and
    returned in x's dtype and shape (contiguous); with `return_rstd`, also the
    per-row rsqrt(mean(x * x) + eps) in f32, of shape [M] where M is the
    product of x's leading dimensions.

    x: [..., N] on a CUDA device, bf16/f16/f32, last dimension unit-stride
    (a 2-D view with a wider row stride is used as is). weight: [N], same
    dtype and device, contiguous. Runs on the current CUDA stream. With
    autograd (x or weight requiring grad), the backward runs rmsnorm_bwd.
    """
    if _ops.torch is None:
        _ops.init_torch()
    fast = _fast.rmsnorm
    if fast is not None and not _ops.torch.compiler.is_compiling():
        # Without autograd; None where the checked path below serves.
        out = fast(x, weight, eps, return_rstd)
        if out is not None:
            return out
    check_eps(_OP, eps)
    if _ops.torch.compiler.is_compiling():
        y, rstd = _get_op()(x, weight, float(eps))
    elif _ops.torch.is_grad_enabled() and (
            getattr(x, "requires_grad", False) or
            getattr(weight, "requires_grad", False)):
        y, rstd = _function().apply(x, weight, eps)
    else:
        y, rstd = rmsnorm_forward(x, weight, eps, keep_rstd=return_rstd)
    return (y, rstd) if return_rstd else y


def _autograd_function():
    """The autograd function: the forward kernel, then rmsnorm_bwd."""
    class RMSNorm(_ops.torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, eps):
            # Grad mode is off in here: the C++ path serves (or None).
            fast = _fast.rmsnorm
            out = fast(x, weight, eps, True) if fast is not None else None
            y, rstd = out if out is not None else rmsnorm_forward(
                x, weight, eps)
            # No zeros for the gradient of rstd (non-differentiable, never
            # read): that would be one more allocation and fill per
            # backward. dy is then None when no gradient reaches y.
            ctx.set_materialize_grads(False)
            ctx.mark_non_differentiable(rstd)
            ctx.save_for_backward(x, weight, rstd)
            return y, rstd

        @staticmethod
        @_ops.torch.autograd.function.once_differentiable
        def backward(ctx, dy, _drstd):
            if dy is None:
                return None, None, None
            x, weight, rstd = ctx.saved_tensors
            if not dy.is_contiguous():
                dy = dy.contiguous()
            dx, dw = rmsnorm_backward(dy, x, weight, rstd)
            return dx, dw, None

    return RMSNorm


_function = _ops.once(_autograd_function)


_ops.register_at_import(_get_op)


# rmsnorm_bwd(M, x, x.row_stride, w, dy, dy.row_stride, rstd, dx,
#             dx.row_stride, dw, workspace)
_bwd_kernel = Launcher("rmsnorm_bwd", ("T", "TW", "N"),
                       fixed={"RESIDUAL": "false", "OFFSET": "false"})
_fast.register(_fast.RMSNORM_BWD, _bwd_kernel, lambda t, n: (t, t, n))


def rmsnorm_backward(dy, x, weight, rstd):
    """Gradients of rmsnorm: returns (dx, dweight).

    dy and x: [..., N] of one dtype and shape; weight: [N], x's dtype; rstd:
    the forward's per-row f32 rsqrt(mean(x * x) + eps), shape [M]. dweight
    sums over all rows in f32 and is rounded once to weight's dtype.
    """
    fast = _fast.rmsnorm_backward
    if fast is not None:
        out = fast(dy, x, weight, rstd)
        if out is not None:
            return out
    return rmsnorm_backward_checked(dy, x, weight, rstd)


def rmsnorm_backward_checked(dy, x, weight, rstd):
    """rmsnorm_backward through the Python path, validating everything."""
    op = "rmsnorm_backward"
    if _ops.torch is None:
        _ops.init_torch()
    m, n, stride, dt, contiguous = _ops.rows(op, x)
    dy_stride = _ops.rows_like(op, "dy", dy, x, m, n)
    _ops.vector(op, "weight", weight, x, n)
    _ops.per_row(op, "rstd", rstd, m)
    dev = _ops.device(op, x, ("dy", dy), ("weight", weight), ("rstd", rstd))
    dx = _ops.empty_rows_like(x, contiguous)
    dw = _ops.torch.empty_like(weight)
    _ops.launch_with_workspace(_bwd_kernel, (dt[0], dt[0], n), dev, m, (
        x.data_ptr(), stride, weight.data_ptr(), dy.data_ptr(), dy_stride,
        rstd.data_ptr(), dx.data_ptr(), n if m > 1 else 0, dw.data_ptr(), 0),
        x)
    return dx, dw
