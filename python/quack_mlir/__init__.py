"""quack_mlir: PyTorch ops that launch kernels compiled by quackc.

Ops (over the last dimension, on the current CUDA stream): rmsnorm,
softmax, layer_norm and cross_entropy, with autograd through their
backward kernels, and argmax. Each is registered with torch.library
(quack_mlir::rmsnorm_fwd, softmax_fwd, layernorm_fwd, their _bwd ops,
argmax) for torch.compile, and called directly, past the dispatcher, in
eager mode; the direct backward functions (rmsnorm_backward,
layer_norm_backward, softmax_backward) take a forward's saved results.

Kernels come from ahead-of-time bundles (`quackc KERNEL.qk --bundle=DIR`),
found through $QUACK_MLIR_BUNDLE or `set_bundle(path)`: a bundle directory
(it holds index.json), a bundle root (a directory whose subdirectories are
bundle directories, e.g. one per .qk file), or several of either joined with
os.pathsep. They are launched through libquack_runtime.so (found through
$QUACK_MLIR_RUNTIME_LIB, beside this package, or in
$QUACK_MLIR_BUILD_DIR/lib).

Where no bundle has the variant an op needs (or no bundle is set) and
quackc is found ($QUACK_MLIR_QUACKC or PATH), the variant is compiled on
demand into an on-disk cache ($QUACK_MLIR_CACHE, default
~/.cache/quack_mlir) keyed on the description, bindings, alignment class,
arch and compiler; see quack_mlir.jit. QUACK_MLIR_JIT=0 turns that off.
"""

from ._kernels import get_bundle, set_bundle
from ._runtime import KernelError, RuntimeLibraryError
from .bundle import BundleError, KernelNotFoundError
from .argmax import argmax
from .cross_entropy import cross_entropy
from .layernorm import layer_norm, layer_norm_backward
from .rmsnorm import rmsnorm, rmsnorm_backward
from .softmax import softmax, softmax_backward

__all__ = ["rmsnorm", "rmsnorm_backward", "softmax", "softmax_backward",
           "layer_norm",
           "layer_norm_backward", "cross_entropy", "argmax", "set_bundle",
           "get_bundle",
           "BundleError", "KernelNotFoundError", "KernelError",
           "RuntimeLibraryError"]
