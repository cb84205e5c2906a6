"""summarize.py's scoreboard: verdicts, and shapes without a baseline or
without a quack_mlir figure listed rather than dropped. No torch, no GPU."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir,
                                "benchmarks"))
import summarize  # noqa: E402


def result(op, n, impl, tbps=None, status="ok"):
    r = {"op": op, "dtype": "f32", "N": n, "impl": impl, "status": status}
    if tbps is not None:
        r.update(tbps=tbps, pct_ceiling=tbps / 3.0 * 100)
    return r


def test_verdicts_and_unmatched_shapes():
    run = {"results": [
        result("rmsnorm", 1024, "quack_mlir", 3.0),
        result("rmsnorm", 1024, "quack", 2.5),           # win
        result("rmsnorm", 2048, "quack_mlir", 2.95),
        result("rmsnorm", 2048, "liger", 3.0),           # tie (within 2%)
        result("rmsnorm", 4096, "quack_mlir", 2.5),
        result("rmsnorm", 4096, "quack", 3.0),           # loss
        # No baseline: QuACK refused, Liger not applicable.
        result("rmsnorm_bwd", 262144, "quack_mlir", 2.2),
        result("rmsnorm_bwd", 262144, "quack", status="error"),
        result("rmsnorm_bwd", 262144, "liger", status="n/a"),
        # No figure of ours: skipped by the time budget.
        result("rmsnorm", 131072, "quack_mlir", status="skipped"),
        result("rmsnorm", 131072, "quack", status="skipped"),
    ]}
    table = summarize.scoreboard([run])
    assert "| rmsnorm | f32 | 1024 | 3.000 (100.0%) | QuACK 2.500 | 1.20 | win |" in table
    assert "| rmsnorm | f32 | 2048 |" in table and "| tie |" in table
    assert "| 0.83 | loss |" in table
    assert ("| rmsnorm_bwd | f32 | 262144 | 2.200 (73.3%) | none measured |"
            in table)
    assert "| rmsnorm | f32 | 131072 | skipped |" in table
    assert table.endswith("1 wins, 1 ties (within 2%), 1 losses. "
                          "1 without a baseline. 1 without a quack_mlir "
                          "figure.")


def test_complete_run_has_no_extra_counts():
    run = {"results": [result("softmax", 4096, "quack_mlir", 3.0),
                       result("softmax", 4096, "liger", 3.0)]}
    assert summarize.scoreboard([run]).endswith(
        "0 wins, 1 ties (within 2%), 0 losses.")


def test_targets_name_every_miss():
    # pct_ceiling is tbps / 3.0 here.
    run = {"results": [
        result("rmsnorm", 4096, "quack_mlir", 2.8),       # 93%: met
        result("ce_fwd", 8192, "quack_mlir", 2.6),        # 87%: missed
        result("softmax", 256, "quack_mlir", 2.4),        # 80%: met
        result("layernorm", 2048, "quack_mlir", 2.1),     # 70%: missed
        result("rmsnorm_bwd", 262144, "quack_mlir", 2.3),  # 77%: missed
        result("ce_fwd_bwd", 4096, "quack_mlir", 2.9),    # 97%: met
        result("ce_bwd", 1024, "quack_mlir", 1.0),        # no target
        result("argmax", 4096, "quack_mlir", 1.0),        # no target
        result("rmsnorm", 8192, "quack_mlir", status="skipped"),
    ]}
    report = summarize.targets([run])
    assert ("| forward, N >= 4096: 90% | 1/2 | ce_fwd f32 8192 (2.600, "
            "86.7%) |") in report
    assert ("| forward, N <= 2048: 75% | 1/2 | layernorm f32 2048 (2.100, "
            "70.0%) |") in report
    assert ("| backward and ce_fwd_bwd, N >= 4096: 80% | 1/2 | rmsnorm_bwd "
            "f32 262144 (2.300, 76.7%) |") in report
    # A run with no shape a target covers reports none.
    assert summarize.targets([{"results": [
        result("argmax", 4096, "quack_mlir", 3.0)]}]) == ""


def test_not_a_run_is_refused(tmp_path, capsys):
    for text in ("{}", "[]", '{"results": [{"op": "softmax"}]}', "not json"):
        path = tmp_path / "bench.json"
        path.write_text(text)
        assert summarize.main(["summarize.py", str(path)]) == 1
        err = capsys.readouterr().err
        assert str(path) in err and "summarize.py:" in err
    assert summarize.main(["summarize.py", str(tmp_path / "none.json")]) == 1
