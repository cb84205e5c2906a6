"""tune.py's table entries name the copy path of the measured config (the
rule may choose another for the entry's split than for the model's), and
its loop's stages and split sums where it has them. CPU only: torch and
bench.py are stood in for where absent."""

import importlib
import os
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, os.pardir, "benchmarks")


@pytest.fixture(scope="module")
def tune():
    saved = {k: sys.modules.get(k) for k in ("torch", "bench")}
    # The package first, with the real torch or none: the stand-in is for
    # tune.py's own module-level uses (its dtype table) alone.
    sys.path.insert(0, os.path.join(HERE, os.pardir))
    import quack_mlir  # noqa: F401
    sys.path.pop(0)
    try:
        import torch  # noqa: F401
    except ImportError:
        fake = types.ModuleType("torch")
        fake.bfloat16, fake.float16, fake.float32 = "bf16", "f16", "f32"
        sys.modules["torch"] = fake
    if "bench" not in sys.modules:
        try:
            sys.path.insert(0, BENCH)
            importlib.import_module("bench")
        except ImportError:
            stub = types.ModuleType("bench")
            stub.time_batches = None
            sys.modules["bench"] = stub
        finally:
            sys.path.remove(BENCH)
    sys.path.insert(0, BENCH)
    try:
        yield importlib.import_module("tune")
    finally:
        sys.path.remove(BENCH)
        sys.modules.pop("tune", None)
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v


def result(config, tbps, **knobs):
    return {"kernel": "rmsnorm_bwd", "dtype": "f32", "N": 16384,
            "config": config, "tbps": tbps, "knobs": knobs}


def test_global_copy_is_written(tune):
    rows = [result("rmsnorm_bwd-f32-N16384-default", 2.73,
                   vectors_per_thread=4, rows_per_cta=1, cluster_size=4,
                   copy="global"),
            result("rmsnorm_bwd-f32-N16384-v4-r1", 3.02,
                   vectors_per_thread=4, rows_per_cta=1, cluster_size=1,
                   copy="global", prefetch=False)]
    [line] = tune.table_lines(rows, 0.03)
    assert line.startswith("rmsnorm_bwd 4 16384 4 1 1 global  # f32: 2.73")


def test_loop_stages_and_split_sums(tune):
    rows = [result("x-default", 2.0, vectors_per_thread=4, rows_per_cta=1,
                   cluster_size=1, copy="global"),
            result("x-c2-t256-bulk-s3", 2.5, vectors_per_thread=8,
                   rows_per_cta=1, cluster_size=2, copy="bulk",
                   prefetch=True, stages=3, sums="split", shared_sums=1)]
    [line] = tune.table_lines(rows, 0.03)
    assert line.split("#")[0].split() == [
        "rmsnorm_bwd", "4", "16384", "8", "1", "2", "bulk", "3", "sums=1"]


def test_register_prefetch_and_margin(tune):
    rows = [result("x-default", 2.0, vectors_per_thread=4, rows_per_cta=1,
                   cluster_size=1, copy="global"),
            result("x-v2-r2", 2.5, vectors_per_thread=2, rows_per_cta=2,
                   cluster_size=1, copy="global", prefetch=True)]
    [line] = tune.table_lines(rows, 0.03)
    assert line.split("#")[0].split()[3:] == ["2", "2", "1", "global",
                                              "prefetch"]
    # Within the margin: no entry.
    assert tune.table_lines([rows[0], dict(rows[1], tbps=2.05)], 0.03) == []


def test_forced_shared_sums_only_where_the_table_can_say_so(tune):
    default = result("rmsnorm_bwd-f32-N16384-default", 2.7,
                     vectors_per_thread=4, rows_per_cta=1, cluster_size=4,
                     copy="global")
    # All sums forced into shared memory in a bulk loop: not an entry; the
    # fastest other config is.
    forced = result("rmsnorm_bwd-f32-N16384-c2-t256-bulk-sums-shared", 3.0,
                    vectors_per_thread=8, rows_per_cta=1, cluster_size=2,
                    copy="bulk", prefetch=True, stages=2, sums="shared",
                    shared_sums=2)
    found = result("rmsnorm_bwd-f32-N16384-v4-r1", 2.99,
                   vectors_per_thread=4, rows_per_cta=1, cluster_size=1,
                   copy="global", sums="shared", shared_sums=2)
    [line] = tune.table_lines([default, forced, found], 0.03)
    assert line.split("#")[0].split()[3:] == ["4", "1", "1", "global"]
    # Split sums in such a loop are recorded (sums=K).
    split = dict(forced, knobs=dict(forced["knobs"], sums="split",
                                    shared_sums=1))
    [line] = tune.table_lines([default, split, found], 0.03)
    assert line.split("#")[0].split()[3:] == ["8", "1", "2", "bulk", "2",
                                              "sums=1"]


def test_a_target_table_is_measured_against_the_architecture_table(tune):
    # On the H100, cross_entropy_fwd bf16 at 1024: the model's split is as
    # fast as the best; sm_90.tsv's (measured on the H200) is 6% slower.
    def ce(config, tbps, vpt, rows):
        return {"kernel": "cross_entropy_fwd", "dtype": "bf16", "N": 1024,
                "config": config, "tbps": tbps,
                "knobs": {"vectors_per_thread": vpt, "rows_per_cta": rows,
                          "cluster_size": 1, "copy": "global"}}
    rows = [ce("cross_entropy_fwd-bf16-N1024-default", 2.683, 2, 2),
            ce("cross_entropy_fwd-bf16-N1024-table", 2.535, 8, 8),
            ce("cross_entropy_fwd-bf16-N1024-v2-r1", 2.687, 2, 1),
            ce("cross_entropy_fwd-bf16-N1024-v8-r8", 2.535, 8, 8)]
    assert tune.table_lines(rows, 0.03) == []
    [line] = tune.table_lines(rows, 0.03, against="table")
    assert line.split("#")[0].split() == [
        "cross_entropy_fwd", "2", "1024", "2", "1", "1", "global"]
    assert "2.54 -> 2.69" in line
    # Without a -table root there is nothing to measure against.
    assert tune.table_lines([r for r in rows if "-table" not in r["config"]],
                            0.03, against="table") == []


def test_roots_of_two_directories_are_told_apart(tune):
    one = ["t/a/rmsnorm_fwd-bf16-N256-default", "t/a/rmsnorm_fwd-bf16-N256-v2-r8/"]
    assert list(tune.root_labels(one).values()) == [
        "rmsnorm_fwd-bf16-N256-default", "rmsnorm_fwd-bf16-N256-v2-r8"]
    two = ["t/a/rmsnorm_fwd-bf16-N256-default",
           "t/early/rmsnorm_fwd-bf16-N256-default"]
    labels = tune.root_labels(two)
    assert labels[two[0]] == "a/rmsnorm_fwd-bf16-N256-default"
    assert labels[two[1]] == "early/rmsnorm_fwd-bf16-N256-default"
    # The model's root of each directory is still found as such.
    assert all(v.endswith("-default") for v in labels.values())
    # Directories of the same name under different parents stay apart.
    deep = ["b1/tune/x-default", "b2/tune/x-default"]
    assert sorted(tune.root_labels(deep).values()) == [
        "b1/tune/x-default", "b2/tune/x-default"]
    # One directory, spelled two ways, is one directory.
    here = os.path.abspath("t/a/y-default")
    assert set(tune.root_labels(["t/a/x-default", here]).values()) == {
        "x-default", "y-default"}
    with pytest.raises(ValueError, match="twice"):
        tune.root_labels(["t/a/x-default", "t/a/x-default/"])
