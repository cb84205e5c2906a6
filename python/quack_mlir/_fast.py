"""The eager ops' launch path in C++ (_quack_fast, csrc/fast.cpp), when it
is built.

Each op asks for its entry point here (`_fast.softmax`, `_fast.rmsnorm`,
`_fast.layer_norm`, `_fast.cross_entropy`, `_fast.rmsnorm_backward`,
`_fast.layer_norm_backward`, `_fast.cross_entropy_backward`,
`_fast.softmax_backward`): None where the module is not
available, else a C function that checks, allocates and launches the common
case of the op in one call and returns None for every other case, which the
op's Python path then serves (and words the error of). The first use loads
the module:

- from $QUACK_MLIR_FAST_LIB (the module file, or a directory holding it),
  else from beside libquack_runtime.so, else from beside this package; the
  file is `_quack_fast` + this interpreter's extension suffix, built by
  scripts/build-torch-ext.sh;
- QUACK_MLIR_FAST=0 turns it off; QUACK_MLIR_FAST=1 makes a module that
  cannot be found or loaded an error (the first op raises
  FastPathError) instead of a quiet fallback.

`info()` says whether it is in use, from where, or why not.

The module finds no kernels itself: the first call of an (op, device,
dtype, N) and each new alignment class calls `resolve`, which asks the op's
Launcher for the variant, exactly as the Python path does.
"""

import importlib.machinery
import importlib.util
import os
import threading

from . import _kernels, _runtime

__all__ = ["info", "FastPathError"]

# Op ids (csrc/fast.cpp, enum Op) and dtype codes (enum DType).
(SOFTMAX, RMSNORM, LAYER_NORM, CROSS_ENTROPY, RMSNORM_BWD,
 LAYER_NORM_BWD, CROSS_ENTROPY_BWD, SOFTMAX_BWD) = range(8)
_DTYPES = ("bf16", "f16", "f32")
_NAMES = ("softmax", "rmsnorm", "layer_norm", "cross_entropy",
          "rmsnorm_backward", "layer_norm_backward",
          "cross_entropy_backward", "softmax_backward")

# op id -> (Launcher, bindings key from (T, N)); registered by the ops.
_launchers = {}

_module = None
_path = None
_reason = "not loaded yet (no op has run)"


class FastPathError(RuntimeError):
    """QUACK_MLIR_FAST=1 and the module cannot be used."""


def register(op, launcher, key):
    """The op `op` launches `launcher`'s variants for key(T, N)."""
    _launchers[op] = (launcher, key)


def resolve(op, device, dtype, n, args):
    """The module's question for a variant: (alignment terms, handle,
    number of arguments, the Kernel that owns the handle)."""
    launcher, key = _launchers[op]
    k = key(_DTYPES[dtype], n)
    plan = launcher._plan(k, args)
    fam = launcher.family(k)
    return fam.layout, plan.handle.value, plan.nargs, plan.kernel


class _Clear:
    """Forgets the module's variants with the Python caches (set_bundle)."""

    def __init__(self, module):
        self.module = module

    def clear(self):
        self.module.clear()


def _candidates(suffix):
    name = "_quack_fast" + suffix
    env = os.environ.get("QUACK_MLIR_FAST_LIB")
    if env:
        return [os.path.join(env, name) if os.path.isdir(env) else env]
    paths = []
    try:
        paths.append(os.path.join(
            os.path.dirname(_runtime.find_library()), name))
    except _runtime.RuntimeLibraryError:
        pass
    paths.append(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              name))
    return paths


def _load():
    """Loads and initialises the module; returns it or None (the reason in
    _reason)."""
    global _module, _path, _reason
    setting = os.environ.get("QUACK_MLIR_FAST", "")
    if setting not in ("", "0", "1"):
        raise FastPathError(f"QUACK_MLIR_FAST must be 0 or 1, got "
                            f"{setting!r}")
    if setting == "0":
        _reason = "turned off (QUACK_MLIR_FAST=0)"
        return None
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    tried = _candidates(suffix)
    path = next((p for p in tried if os.path.isfile(p)), None)
    try:
        if path is None:
            raise FastPathError(
                "no _quack_fast module; tried " + ", ".join(tried) +
                " (build it with scripts/build-torch-ext.sh)")
        # The module links torch's libraries, which importing torch loads.
        import torch
        spec = importlib.util.spec_from_file_location(
            "quack_mlir._quack_fast", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if getattr(module, "cpu_testing", 0) and os.environ.get(
                "QUACK_MLIR_FAST_TESTING") != "1":
            raise FastPathError(
                "a build for the CPU tests (QUACK_FAST_CPU_TESTING), which "
                "takes CPU tensors for CUDA ones")
        built = getattr(module, "torch_version", None)
        if built != torch.__version__:
            raise FastPathError(
                f"built for torch {built}, this is torch "
                f"{torch.__version__}; rebuild it with "
                "scripts/build-torch-ext.sh")
        import ctypes
        lib = _runtime.load_library()
        def address(fn):
            return ctypes.cast(fn, ctypes.c_void_p).value
        module.init(address(lib.quack_rt_kernel_launch),
                    address(lib.quack_rt_kernel_workspace_size), resolve,
                    _runtime.KernelError, torch.nn.Parameter)
    except Exception as e:  # any failure: the Python path serves
        _reason = f"{path or 'module'}: {e}"
        if setting == "1":
            raise FastPathError(
                f"QUACK_MLIR_FAST=1 but the C++ launch path cannot be "
                f"used: {_reason}") from e
        return None
    _kernels.fast_caches.append(_Clear(module))
    _module, _path, _reason = module, path, ""
    return module


_tried = False
_lock = threading.Lock()


def _ensure():
    """Loads the module once (whichever thread comes first) and binds the
    entry points to its functions (or to None)."""
    global _tried
    if _tried:
        return
    with _lock:
        if not _tried:
            module = _load()
            for n in _NAMES:
                globals()[n] = getattr(module, n) if module else None
            _tried = True


def _first(name):
    def call(*args):
        _ensure()
        fn = globals()[name]
        return fn(*args) if fn is not None else None
    call.__name__ = name
    return call


# Entry points (_fast.softmax, ...); each is replaced by the module's
# function, or None, at the first call of any of them.
for _name in _NAMES:
    globals()[_name] = _first(_name)
del _name


def info():
    """{"active": bool, "path": module file or None, "reason": why not,
    "variants": how many variants it remembers}. Loads the module if no op
    has."""
    _ensure()
    return {"active": _module is not None, "path": _path,
            "reason": _reason,
            "variants": _module.size() if _module is not None else 0}
