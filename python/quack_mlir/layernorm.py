"""LayerNorm forward over the last dimension."""

from . import _fast, _ops
from ._launch import Launcher, float_bits
from .rmsnorm import check_eps

__all__ = ["layer_norm", "layer_norm_backward"]

_OP = "layer_norm"
# layernorm_fwd(M, x, x.row_stride, w, b, eps, y, y.row_stride, mean, rstd)
# Weight and bias in x's dtype.
_kernel = Launcher("layernorm_fwd", ("T", "TW", "N"), fixed={"BIAS": "true"})
_fast.register(_fast.LAYER_NORM, _kernel, lambda t, n: (t, t, n))


def layer_norm_forward(x, weight, bias, eps, keep_stats=True):
    """Returns (y, mean, rstd); the eager path, validating everything.
    Without `keep_stats`, mean and rstd are written to a scratch buffer and
    None is returned in their place."""
    ops = _ops
    if ops.torch is None:
        ops.init_torch()
    m, n, stride, dt, contiguous = ops.rows(_OP, x)
    ops.vector(_OP, "weight", weight, x, n)
    ops.vector(_OP, "bias", bias, x, n)
    dev = ops.device(_OP, x, ("weight", weight), ("bias", bias))
    y = ops.empty_rows_like(x, contiguous)
    # Unkept, both go to one buffer (the scratch buffer, or one new tensor
    # for more rows): the kernel writes them in turn per row, and nothing
    # reads either.
    mean = ops.stats_per_row(x, m, dev, keep_stats)
    rstd = ops.empty_per_row(x, m) if keep_stats else mean
    if m > 0:
        ops.launch(_kernel, (dt[0], dt[0], n), dev, m, (
            x.data_ptr(), stride, weight.data_ptr(), bias.data_ptr(),
            float_bits(eps), y.data_ptr(), n if m > 1 else 0,
            mean.data_ptr(), rstd.data_ptr()))
    if not keep_stats:
        return y, None, None
    return y, mean, rstd


def _check_args(x, normalized_shape, weight, bias):
    if type(normalized_shape) is int:
        ns = (normalized_shape,)
    else:
        try:
            ns = tuple(normalized_shape)
        except TypeError:
            raise TypeError(f"{_OP}: normalized_shape must be an int or a "
                            "sequence of ints, got "
                            f"{type(normalized_shape).__name__}") from None
    if len(ns) != 1:
        raise ValueError(f"{_OP}: only normalization over the last "
                         "dimension is supported (normalized_shape of one "
                         f"element [N]), got normalized_shape={list(ns)}")
    if isinstance(x, _ops.Tensor) and x.dim() > 0 and (
            ns[0] != x.shape[-1]):
        raise ValueError(f"{_OP}: normalized_shape={list(ns)} does not "
                         f"match the last dimension of x, of shape "
                         f"{tuple(x.shape)}")
    for name, v in (("weight", weight), ("bias", bias)):
        if v is None:
            raise ValueError(
                f"{_OP}: {name} is None; this op needs both weight and bias "
                "for now: pass torch.ones(N) as weight and torch.zeros(N) "
                "as bias (in x's dtype, on x's device) for the plain "
                "normalization")


_op = None


def _get_op():
    """The torch.library op that torch.compile sees."""
    global _op
    if _op is not None:
        return _op
    torch = _ops.torch

    @torch.library.custom_op("quack_mlir::layernorm_fwd", mutates_args=())
    def layernorm_fwd(x: torch.Tensor, weight: torch.Tensor,
                      bias: torch.Tensor, eps: float
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return layer_norm_forward(x, weight, bias, eps)

    @layernorm_fwd.register_fake
    def _(x, weight, bias, eps):
        m = x.shape[:-1].numel()
        return (torch.empty_like(x, memory_format=torch.contiguous_format),
                x.new_empty((m,), dtype=torch.float32),
                x.new_empty((m,), dtype=torch.float32))

    @torch.library.custom_op("quack_mlir::layernorm_bwd", mutates_args=())
    def layernorm_bwd(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                      mean: torch.Tensor, rstd: torch.Tensor
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return layer_norm_backward(dy.contiguous(), x, weight, mean, rstd)

    @layernorm_bwd.register_fake
    def _(dy, x, weight, mean, rstd):
        return (torch.empty_like(x, memory_format=torch.contiguous_format),
                torch.empty_like(weight), torch.empty_like(weight))

    def setup_context(ctx, inputs, output):
        x, weight, _bias, _eps = inputs
        ctx.save_for_backward(x, weight, output[1], output[2])

    def backward(ctx, dy, _dmean, _drstd):
        x, weight, mean, rstd = ctx.saved_tensors
        dx, dw, db = layernorm_bwd(dy, x, weight, mean, rstd)
        return dx, dw, db, None

    layernorm_fwd.register_autograd(backward, setup_context=setup_context)
    _op = layernorm_fwd
    return _op


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5,
               return_stats=False):
    """LayerNorm over the last dimension of `x`, with the signature of
    torch.nn.functional.layer_norm.

    y = (x - mean) * rstd * weight + bias with mean = mean(x, dim=-1) and
    rstd = rsqrt(mean((x - mean)^2, dim=-1) + eps), accumulated in f32 and
    returned in x's dtype and shape (contiguous). With `return_stats`,
    returns (y, mean, rstd), mean and rstd in f32 of shape [M] where M is the
    product of x's leading dimensions.

    x: [..., N] on a CUDA device, bf16/f16/f32, last dimension unit-stride
    (a 2-D view with a wider row stride is used as is). normalized_shape:
    N or [N] (the last dimension only). weight and bias: [N], x's dtype and
    device, contiguous; both are required for now (None is an error). Runs
    on the current CUDA stream. With autograd (x, weight or bias requiring
    grad), the backward runs layernorm_bwd.
    """
    if _ops.torch is None:
        _ops.init_torch()
    fast = _fast.layer_norm
    if fast is not None and not _ops.torch.compiler.is_compiling():
        # Without autograd; None where the checked path below serves.
        out = fast(x, normalized_shape, weight, bias, eps, return_stats)
        if out is not None:
            return out
    _check_args(x, normalized_shape, weight, bias)
    check_eps(_OP, eps)
    if _ops.torch.compiler.is_compiling():
        y, mean, rstd = _get_op()(x, weight, bias, float(eps))
    elif _ops.torch.is_grad_enabled() and (
            getattr(x, "requires_grad", False) or
            getattr(weight, "requires_grad", False) or
            getattr(bias, "requires_grad", False)):
        y, mean, rstd = _function().apply(x, weight, bias, eps)
    else:
        y, mean, rstd = layer_norm_forward(x, weight, bias, eps,
                                           keep_stats=return_stats)
    return (y, mean, rstd) if return_stats else y


def _autograd_function():
    """The autograd function: the forward kernel, then layernorm_bwd."""
    class LayerNorm(_ops.torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias, eps):
            # Grad mode is off in here: the C++ path serves (or None).
            fast = _fast.layer_norm
            out = (fast(x, x.shape[-1:], weight, bias, eps, True)
                   if fast is not None else None)
            y, mean, rstd = out if out is not None else layer_norm_forward(
                x, weight, bias, eps)
            # No zeros for the gradients of mean and rstd (non-
            # differentiable, never read): two allocations and fills less
            # per backward. dy is then None when no gradient reaches y.
            ctx.set_materialize_grads(False)
            ctx.mark_non_differentiable(mean, rstd)
            ctx.save_for_backward(x, weight, mean, rstd)
            return y, mean, rstd

        @staticmethod
        @_ops.torch.autograd.function.once_differentiable
        def backward(ctx, dy, _dmean, _drstd):
            if dy is None:
                return None, None, None, None
            x, weight, mean, rstd = ctx.saved_tensors
            if not dy.is_contiguous():
                dy = dy.contiguous()
            dx, dw, db = layer_norm_backward(dy, x, weight, mean, rstd)
            return dx, dw, db, None

    return LayerNorm


_function = _ops.once(_autograd_function)


_ops.register_at_import(_get_op)


# layernorm_bwd(M, x, x.row_stride, w, dy, dy.row_stride, mean, rstd, dx,
#               dx.row_stride, dw, db, workspace)
_bwd_kernel = Launcher("layernorm_bwd", ("T", "TW", "N"),
                       fixed={"BIAS": "true"})
_fast.register(_fast.LAYER_NORM_BWD, _bwd_kernel, lambda t, n: (t, t, n))


def layer_norm_backward(dy, x, weight, mean, rstd):
    """Gradients of layer_norm: returns (dx, dweight, dbias).

    dy and x: [..., N] of one dtype and shape; weight: [N], x's dtype; mean
    and rstd: the forward's per-row f32 statistics, shape [M]. dweight and
    dbias sum over all rows in f32 and are rounded once to weight's dtype.
    """
    fast = _fast.layer_norm_backward
    if fast is not None:
        out = fast(dy, x, weight, mean, rstd)
        if out is not None:
            return out
    return layer_norm_backward_checked(dy, x, weight, mean, rstd)


def layer_norm_backward_checked(dy, x, weight, mean, rstd):
    """layer_norm_backward through the Python path, validating
    everything."""
    op = "layer_norm_backward"
    if _ops.torch is None:
        _ops.init_torch()
    m, n, stride, dt, contiguous = _ops.rows(op, x)
    dy_stride = _ops.rows_like(op, "dy", dy, x, m, n)
    _ops.vector(op, "weight", weight, x, n)
    _ops.per_row(op, "mean", mean, m)
    _ops.per_row(op, "rstd", rstd, m)
    dev = _ops.device(op, x, ("dy", dy), ("weight", weight), ("mean", mean),
                      ("rstd", rstd))
    dx = _ops.empty_rows_like(x, contiguous)
    dw = _ops.torch.empty_like(weight)
    db = _ops.torch.empty_like(weight)
    _ops.launch_with_workspace(_bwd_kernel, (dt[0], dt[0], n), dev, m, (
        x.data_ptr(), stride, weight.data_ptr(), dy.data_ptr(), dy_stride,
        mean.data_ptr(), rstd.data_ptr(), dx.data_ptr(), n if m > 1 else 0,
        dw.data_ptr(), db.data_ptr(), 0), x)
    return dx, dw, db
