"""What the torch ops share: input validation with clear errors, output
allocation and the launch on the current stream of the tensors' device.

Validation is complete but cheap: tensor attributes that cost a C call each
(dim, dtype, is_cuda, get_device, stride(), is_contiguous) rather than ones
that build Python objects (x.device, x.device.type, x.stride(i), views),
which are used only to word an error. Structural checks (types, dtypes,
shapes, strides) come before device checks, so that they can be exercised on
CPU tensors.
"""

torch = None
Tensor = None
# torch dtype -> (T binding, element size in bytes).
DTYPES = None
_f32 = None
_get_device = None
_raw_stream = None


def init_torch():
    """Imports torch (raises ImportError without it) and binds the few
    torch functions the hot path calls."""
    global torch, Tensor, DTYPES, _f32, _get_device, _raw_stream
    if torch is not None:
        return torch
    import torch as t
    DTYPES = {t.bfloat16: ("bf16", 2), t.float16: ("f16", 2),
              t.float32: ("f32", 4)}
    _f32 = t.float32
    Tensor = t.Tensor
    _get_device = t._C._cuda_getDevice
    _raw_stream = t._C._cuda_getCurrentRawStream
    torch = t
    return t


def rows(op, x, name="x"):
    """Checks x: [..., N], a supported dtype, last dimension unit-stride,
    leading dimensions forming evenly spaced rows. Returns (M, N, row stride
    in elements (0 when M <= 1), (T, element size), contiguous). `name`
    names x in the messages."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a torch.Tensor, got "
                        f"{type(x).__name__}")
    nd = x.dim()
    if nd == 0:
        raise ValueError(f"{op}: {name} must have at least one dimension "
                         "[..., N], got a 0-d tensor")
    dt = DTYPES.get(x.dtype)
    if dt is None:
        raise TypeError(f"{op}: {name} has dtype {x.dtype}; supported dtypes "
                        "are torch.bfloat16, torch.float16 and torch.float32")
    contiguous = x.is_contiguous()
    if nd == 2:
        m, n = x.shape
        sm, sn = x.stride()
    elif contiguous:
        n = x.shape[-1]
        m = x.numel() // n if n else 0
        sm, sn = n, 1
    else:
        n = x.shape[-1]
        m = sm = 0
        sn = x.stride()[-1]
    if n == 0:
        raise ValueError(f"{op}: the last dimension of {name} (N) must be "
                         f"positive, {name} has shape {tuple(x.shape)}")
    if n > 1 and sn != 1:
        raise ValueError(f"{op}: the last dimension of {name} must have "
                         f"stride 1, {name} has strides {tuple(x.stride())}; "
                         "call "
                         ".contiguous() first")
    if nd != 2 and not contiguous:
        try:
            x2 = x.view(-1, n)
        except RuntimeError:
            raise ValueError(
                f"{op}: {name} of shape {tuple(x.shape)} and strides "
                f"{tuple(x.stride())} cannot be viewed as rows [M, N] "
                "without a copy; call .contiguous() first") from None
        m = x2.shape[0]
        sm = x2.stride()[0]
    if m <= 1:
        sm = 0
    elif sm < n:
        raise ValueError(f"{op}: the rows of {name} overlap (row stride {sm} < "
                         f"N = {n}); pass a tensor whose rows are distinct, "
                         "e.g. x.contiguous()")
    return m, n, sm, dt, contiguous


def _one_dim(op, name, v, length, dim):
    """Checks that v is a tensor of shape [length] with unit stride; `dim`
    names the length (N or M) in the message."""
    if not isinstance(v, Tensor):
        raise TypeError(f"{op}: {name} must be a torch.Tensor, got "
                        f"{type(v).__name__}")
    if v.dim() != 1 or v.shape[0] != length:
        raise ValueError(f"{op}: {name} must have shape [{dim}] = "
                         f"[{length}], got {list(v.shape)}")
    if length > 1 and v.stride()[0] != 1:
        raise ValueError(f"{op}: {name} must be contiguous, it has stride "
                         f"{v.stride()[0]}")


def vector(op, name, v, x, n):
    """Checks a per-column operand v: [N], x's dtype, unit stride."""
    if isinstance(v, Tensor) and v.dtype != x.dtype:
        raise TypeError(f"{op}: {name} has dtype {v.dtype} but x has "
                        f"{x.dtype}; they must match")
    _one_dim(op, name, v, n, "N")


def per_row(op, name, v, m):
    """Checks a per-row f32 operand v: [M], unit stride (a forward pass's
    saved statistics)."""
    if isinstance(v, Tensor) and v.dtype != _f32:
        raise TypeError(f"{op}: {name} must have dtype torch.float32, got "
                        f"{v.dtype}")
    _one_dim(op, name, v, m, "M")


def rows_like(op, name, v, x, m, n, x_name="x"):
    """Checks v against x (as rows() returned M and N; `x_name` names x in
    messages): same dtype and shape. Returns v's row stride in
    elements."""
    if (isinstance(v, Tensor) and v.dtype == x.dtype and v.shape == x.shape
            and v.is_contiguous()):
        # What rows(op, v) returns for a contiguous tensor of x's shape and
        # dtype (whose checks x passed already). Its device is the caller's
        # to check (device()), as for every other operand.
        return n if m > 1 else 0
    vm, vn, stride, _, _ = rows(op, v, name)
    if v.dtype != x.dtype:
        raise TypeError(f"{op}: {name} has dtype {v.dtype} but {x_name} has "
                        f"{x.dtype}; they must match")
    if (vm, vn) != (m, n) or v.shape != x.shape:
        raise ValueError(f"{op}: {name} must have {x_name}'s shape "
                         f"{tuple(x.shape)}, got {tuple(v.shape)}")
    return stride


def device(op, x, *named, name="x"):
    """Checks that x (called `name` in messages) is on a CUDA device and
    every (name, tensor) of `named` on the same one; returns the device
    index."""
    if not x.is_cuda:
        raise ValueError(f"{op}: {name} must be on a CUDA device, it is on "
                         f"{x.device}")
    dev = x.get_device()
    for other, v in named:
        if v.get_device() != dev or not v.is_cuda:
            raise ValueError(f"{op}: {other} is on {v.device} but {name} is "
                             f"on {x.device}; they must be on the same "
                             "device")
    return dev


def empty_rows_like(x, contiguous):
    """A new contiguous tensor of x's shape, dtype and device."""
    if contiguous:
        return torch.empty_like(x)
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


def empty_per_row(x, m):
    """A new f32 tensor [M] on x's device."""
    return x.new_empty(m, dtype=_f32)


# Per-row statistics that nobody reads (the rstd of an rmsnorm called
# without autograd, the lse of such a cross-entropy) still have to be
# written somewhere: for up to _SCRATCH_ROWS rows they go to one f32 buffer
# per device instead of a new tensor, an allocation less per call where the
# host time is what counts (few rows). Kernels on any stream may write the
# buffer at the same time; nothing reads it, and it is never freed, so no
# kernel can write into memory the allocator has handed to a tensor.
_SCRATCH_ROWS = 16384
_scratch = {}


def stats_per_row(x, m, dev, keep):
    """The f32 tensor a kernel writes a per-row statistic to: a new one of
    shape [M] on x's device when the caller keeps it (`keep`), else
    unread_per_row(x, m, dev)."""
    return empty_per_row(x, m) if keep else unread_per_row(x, m, dev)


def unread_per_row(x, m, dev):
    """An f32 tensor of at least M elements on x's device (index `dev`),
    for per-row outputs that are written but never read."""
    if m <= _SCRATCH_ROWS:
        buf = _scratch.get(dev)
        if buf is not None:
            return buf
        # Not from inside a CUDA graph capture, whose allocations belong to
        # the graph's pool.
        if not torch.cuda.is_current_stream_capturing():
            buf = _scratch[dev] = x.new_empty(_SCRATCH_ROWS, dtype=_f32)
            return buf
    return x.new_empty(m, dtype=_f32)


def launch(launcher, key, dev, m, args):
    """Launches on the current stream of device `dev`, making it the
    current device for the call when it is not."""
    if dev == _get_device():
        launcher.launch(key, m, args, _raw_stream(dev))
    else:
        with torch.cuda.device(dev):
            launcher.launch(key, m, args, _raw_stream(dev))


def launch_with_workspace(launcher, key, dev, m, args, like=None):
    """Like launch() for kernels with sums over rows, whose last argument
    is the workspace: `args` ends with a placeholder that is replaced by a
    fresh f32 workspace of the size the chosen variant needs (allocated on
    the current stream, so the caching allocator orders its reuse; through
    `like.new_empty` when a tensor on device `dev` is given, which skips
    parsing a device name). The size is asked of the runtime once per
    (variant, device, M)."""
    if dev == _get_device():
        _launch_with_workspace(launcher, key, dev, m, args, like)
    else:
        with torch.cuda.device(dev):
            _launch_with_workspace(launcher, key, dev, m, args, like)


def _launch_with_workspace(launcher, key, dev, m, args, like):
    size = launcher.workspace_bytes(key, m, args, dev)
    ws = None
    if size:
        words = (size + 3) // 4
        if like is not None:
            ws = like.new_empty(words, dtype=_f32)
        else:
            ws = torch.empty(words, dtype=_f32, device=f"cuda:{dev}")
    # `ws` stays referenced until the launch is queued.
    launcher.launch(key, m, args[:-1] + (ws.data_ptr() if size else 0,),
                    _raw_stream(dev))


def register_at_import(get_op):
    """Calls get_op(), which registers a module's torch.library ops, where
    torch imports: ops cannot be registered while torch.compile traces, so
    they are registered when the package is imported. Without torch the
    package still imports, for CPU-only use."""
    try:
        init_torch()
    except ImportError:
        return
    get_op()


def once(build):
    """Returns a function that calls build() the first time and then returns
    its result (torch classes are built after torch is imported)."""
    built = []

    def get():
        if not built:
            built.append(build())
        return built[0]
    return get


def is_compiling():
    return torch.compiler.is_compiling()
