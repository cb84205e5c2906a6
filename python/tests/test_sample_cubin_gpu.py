"""Runs the sample gpu.module cubin (kernels/samples/saxpy.mlir) on the GPU.

quackc compiles a hand-written gpu.module to a cubin on the build machine;
this test loads that cubin through the CUDA driver and checks the result.
The cubin directory comes from QUACK_MLIR_SAMPLES (default: build/samples).
"""

import ctypes
import os
import pathlib

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = pathlib.Path(os.environ.get("QUACK_MLIR_SAMPLES",
                                      ROOT / "build" / "samples"))

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA device")


def _check(rc, what):
    assert rc == 0, f"{what} failed with CUDA error {rc}"


def test_saxpy_cubin_runs():
    cubin = SAMPLES / "saxpy.cubin"
    if not cubin.exists():
        pytest.skip(f"{cubin} not built (quackc kernels/samples/saxpy.mlir)")
    cuda = ctypes.CDLL("libcuda.so.1")
    n = 1_000_003
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    expected = 2.5 * x.double() + y.double()
    torch.cuda.synchronize()

    image = cubin.read_bytes()
    module = ctypes.c_void_p()
    _check(cuda.cuModuleLoadData(ctypes.byref(module), image),
           "cuModuleLoadData")
    func = ctypes.c_void_p()
    _check(cuda.cuModuleGetFunction(ctypes.byref(func), module, b"saxpy"),
           "cuModuleGetFunction")
    args = [ctypes.c_int64(n), ctypes.c_float(2.5),
            ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr())]
    params = (ctypes.c_void_p * len(args))(
        *[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    blocks = (n + 255) // 256
    _check(cuda.cuLaunchKernel(func, blocks, 1, 1, 256, 1, 1, 0, stream,
                               params, None), "cuLaunchKernel")
    torch.cuda.synchronize()
    err = (y.double() - expected).abs().max().item()
    assert err < 1e-5, f"max error {err}"
    cuda.cuModuleUnload(module)
