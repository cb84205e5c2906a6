"""bench.py's timing loop keeps what each call returns until the same input
set comes round again, so that outputs rotate through as many blocks as
the inputs instead of reusing the one the allocator just got back; its
warm-up builds every implementation of the run before the first op, whose
share of the budget would otherwise pay for the baselines' imports. CPU only: the loop's few torch.cuda
calls and the baselines' loaders are stood in for."""

import importlib
import os
import sys
import types
import weakref

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, os.pardir, "benchmarks")


class _Event:
    def __init__(self, enable_timing=False):
        pass

    def record(self):
        pass

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return 1.0


@pytest.fixture()
def bench():
    sys.path.insert(0, BENCH)
    try:
        mod = importlib.import_module("bench")
    finally:
        sys.path.remove(BENCH)
    saved = mod.torch
    cuda = types.SimpleNamespace(Event=_Event, _sleep=lambda cycles: None,
                                 synchronize=lambda: None)
    mod.torch = types.SimpleNamespace(cuda=cuda, bfloat16="bf16",
                                      float16="f16", float32="f32")
    try:
        yield mod
    finally:
        mod.torch = saved


class _Out:
    """Stands for a call's output tensor."""


def _tracking():
    """fn for time_batches that records, at each call, how many outputs of
    earlier calls are still alive, and which set each call used."""
    made, alive_at_call, used = [], [], []

    def fn(s):
        alive_at_call.append(sum(r() is not None for r in made))
        used.append(s)
        out = _Out()
        made.append(weakref.ref(out))
        return out
    return fn, alive_at_call, used


def test_outputs_live_until_their_set_comes_round(bench):
    fn, alive, used = _tracking()
    sets = [(0,), (1,), (2,)]
    t = bench.time_batches(fn, sets, batch=4, reps=3, warmup=2)
    assert t == pytest.approx(1e-3 / 4)
    # Calls rotate over the sets, warm-up included.
    assert used == [0, 1] + [i % 3 for i in range(12)]
    # At each call, one earlier output is alive per set used so far: a
    # set's output is let go only when that set is used again.
    assert alive == [len(set(used[:j])) for j in range(len(used))]
    assert alive[-1] == 3


def test_one_set_keeps_nothing(bench):
    # One set is already too large for the L2: no second output is held.
    fn, alive, _ = _tracking()
    bench.time_batches(fn, [(0,)], batch=3, reps=2, warmup=1)
    assert alive == [0] * 7


class _Op:
    """Stands for an op: its factories record what they build."""

    def __init__(self, name, built):
        self.name = name
        self.built = built

    def factories(self):
        def make(impl):
            def factory(dtype):
                self.built.append((self.name, impl, dtype))
                if impl == "quack":
                    raise ImportError("no cutlass")
                return object()
            return factory
        return {k: make(k) for k in ("quack_mlir", "torch_compile", "liger",
                                     "quack")}


def test_warm_up_builds_what_the_run_measures_once(bench):
    built, compiles = [], []
    ops = [_Op("rmsnorm", built), _Op("softmax", built)]
    args = types.SimpleNamespace(impls=["quack_mlir", "liger", "quack",
                                        "torch_compile"])
    runner = bench.Runner(args, {})
    spent = runner.warm_up(ops, ["bf16", "f32"],
                           compile_once=lambda: compiles.append(1))
    # Every (op, implementation, dtype) of the run, once, before any op.
    assert sorted(built) == sorted(
        (op.name, impl, dt) for op in ops for impl in args.impls
        for dt in ("bf16", "f32"))
    assert compiles == [1]
    assert sorted(spent) == sorted(args.impls)
    # The ops then get the same objects, and the failure, remembered.
    n = len(built)
    assert runner.impl(ops[0], "liger", "bf16") is \
        runner.impl(ops[0], "liger", "bf16")
    with pytest.raises(bench.SetUpError, match="ImportError: no cutlass"):
        runner.impl(ops[1], "quack", "f32")
    assert len(built) == n


def test_warm_up_survives_a_failing_compile(bench):
    def broken():
        raise RuntimeError("inductor unavailable")
    runner = bench.Runner(types.SimpleNamespace(impls=["torch_compile"]), {})
    spent = runner.warm_up([], ["bf16"], compile_once=broken)
    assert list(spent) == ["torch_compile"]
