"""tools/gpu_check.py: how a compute-sanitizer run is read."""
import importlib.util
import os

import pytest

_path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                     "tools", "gpu_check.py")
_spec = importlib.util.spec_from_file_location("gpu_check", _path)
gpu_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpu_check)


def test_errors_of_every_process_are_added_up():
    text = ("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"
            "========= Invalid __global__ write of size 4 bytes\n"
            "========= ERROR SUMMARY: 3 errors\n12 passed in 3.1s\n")
    assert gpu_check.sanitizer_verdict(text, 0) == (1, "3 errors in 2 processes; 12 passed in 3.1s")


def test_racecheck_summary_and_a_clean_run():
    text = "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\nok\n"
    assert gpu_check.sanitizer_verdict(text, 0) == (0, "0 errors in 1 process; ok")
    text = "RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)\nok\n"
    assert gpu_check.sanitizer_verdict(text, 0)[0] == 1


@pytest.mark.parametrize("rc", [0, 2])
def test_a_run_without_a_summary_fails(rc):
    rc_out, tail = gpu_check.sanitizer_verdict("Traceback ...\nImportError: x\n", rc)
    assert rc_out != 0 and tail.startswith("no sanitizer summary found; ImportError")


def test_a_failing_program_fails_even_without_sanitizer_errors():
    assert gpu_check.sanitizer_verdict("ERROR SUMMARY: 0 errors\n1 failed\n", 1)[0] == 1
