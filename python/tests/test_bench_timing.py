"""bench.py's timing loop keeps what each call returns until the same input
set comes round again, so that outputs rotate through as many blocks as
the inputs instead of reusing the one the allocator just got back; its
warm-up loads every baseline before the first op, whose share of the
budget would otherwise pay for it. CPU only: the loop's few torch.cuda
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
    mod.torch = types.SimpleNamespace(cuda=cuda)
    try:
        yield mod
    finally:
        mod.torch = saved


class _Out:
    """Stands for a call's output tensor."""


def _tracking(nsets):
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
    fn, alive, used = _tracking(3)
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
    fn, alive, _ = _tracking(1)
    bench.time_batches(fn, [(0,)], batch=3, reps=2, warmup=1)
    assert alive == [0] * 7


def test_warm_up_loads_each_baseline_once_before_the_ops(bench):
    loaded, compiles = [], []

    def liger(module):
        loaded.append(("liger", module))

    def quack(module):
        loaded.append(("quack", module))
        raise ImportError("no cutlass")  # remembered by the real loader

    spent = bench.warm_up(["quack_mlir", "liger", "quack", "torch_compile"],
                          loaders={"liger": liger, "quack": quack},
                          compile_once=lambda: compiles.append(1))
    # Every Liger module the ops use; QuACK stops at its first failure.
    assert loaded == [("liger", m) for m in bench.WARM_UP_MODULES["liger"]] \
        + [("quack", bench.WARM_UP_MODULES["quack"][0])]
    assert compiles == [1]
    # quack_mlir needs no warm-up; the others are timed.
    assert sorted(spent) == ["liger", "quack", "torch_compile"]
    assert all(v >= 0 for v in spent.values())


def test_warm_up_survives_a_failing_compile(bench):
    def broken():
        raise RuntimeError("inductor unavailable")
    spent = bench.warm_up(["torch_compile"], compile_once=broken)
    assert list(spent) == ["torch_compile"]
