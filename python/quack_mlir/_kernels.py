"""Where kernels come from: the bundles in use and a cache of loaded kernels.

The bundle path is $QUACK_MLIR_BUNDLE or what `set_bundle` was given: one or
more entries separated by os.pathsep, each a bundle directory (it holds
index.json) or a bundle root (a directory whose subdirectories are bundle
directories, such as one `quackc KERNEL.qk --bundle=ROOT/KERNEL` per .qk
file). See bundle.find_bundle_dirs.
"""

import os
import threading

from .bundle import BundleError, BundleSet

_lock = threading.Lock()
_bundle_spec = None
_bundle = None
# Metadata path -> loaded Kernel.
_loaded = {}
# (kernel, bindings as a tuple, alignment of the actual tensors) -> Kernel.
_cache = {}
# Per-op caches of kernels (launchers register theirs), emptied with _cache.
fast_caches = []


def set_bundle(path):
    """Uses the bundle path `path` (overrides $QUACK_MLIR_BUNDLE): a bundle
    directory, a bundle root, several of them joined with os.pathsep, or a
    list of them.

    `None` goes back to $QUACK_MLIR_BUNDLE. Loaded kernels are forgotten.
    """
    global _bundle_spec, _bundle
    with _lock:
        if path is None:
            _bundle_spec = None
        elif isinstance(path, (str, bytes, os.PathLike)):
            _bundle_spec = os.fspath(path)
        else:
            _bundle_spec = [os.fspath(p) for p in path]
        _bundle = None
        _cache.clear()
        _loaded.clear()
        for cache in fast_caches:
            cache.clear()


def get_bundle():
    """Returns the BundleSet in use, reading its indexes on first use."""
    global _bundle
    b = _bundle
    if b is not None:
        return b
    with _lock:
        if _bundle is None:
            spec = _bundle_spec or os.environ.get("QUACK_MLIR_BUNDLE")
            if not spec:
                raise BundleError(
                    "no kernel bundle: set QUACK_MLIR_BUNDLE to a directory "
                    "written by `quackc --bundle` (or a directory of such "
                    "directories, or several joined with "
                    f"{os.pathsep!r}), or call quack_mlir.set_bundle(path)")
            _bundle = BundleSet(spec)
        return _bundle


def load_variant(variant):
    """Returns the loaded Kernel of a bundle Variant (loaded once)."""
    path = variant.metadata_path
    k = _loaded.get(path)
    if k is not None:
        return k
    from ._runtime import Kernel
    k = Kernel(path)
    with _lock:
        return _loaded.setdefault(path, k)


def get_kernel(kernel, bindings, alignment):
    """Returns the loaded Kernel serving `kernel` with these bindings for
    tensors of the given alignment; raises KernelNotFoundError if none."""
    key = (kernel, tuple(bindings.items()), alignment)
    k = _cache.get(key)
    if k is not None:
        return k
    k = load_variant(get_bundle().find(kernel, bindings, alignment))
    with _lock:
        return _cache.setdefault(key, k)
