"""tests/gpu_child.py: the GPU tests of a whole-suite run, in a child process."""
import os

from graphtrace import _driver
from gpu_child import describe, junit_counts, run_gpu_tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ONE = "tests/gpu/test_ops.py::test_a_function_that_records_nothing_still_runs"


def test_the_child_runs_the_gpu_tests_and_reports_their_counts():
    rc, counts, output = run_gpu_tests([ONE], ROOT)
    assert rc == 0, output
    if _driver.available():
        assert counts == {"passed": 1, "failed": 0, "errors": 0, "skipped": 0}
    else:   # skipped: no GPU here
        assert counts == {"passed": 0, "failed": 0, "errors": 0, "skipped": 1}
        assert "no CUDA driver or no GPU device" in output


def test_a_missing_report_counts_nothing_and_words_leave_out_zeros(tmp_path):
    assert junit_counts(tmp_path / "none.xml") == dict.fromkeys(("passed", "failed", "errors",
                                                            "skipped"), 0)
    assert describe({"passed": 3, "failed": 0, "errors": 1, "skipped": 2}) == \
        "3 passed, 1 errors, 2 skipped"
    assert describe({"passed": 0, "failed": 2, "errors": 0, "skipped": 0}) == "0 passed, 2 failed"
