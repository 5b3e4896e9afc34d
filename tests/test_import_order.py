"""numba.cuda imported before graphtrace, without numba's simulator, on a machine
with no GPU: graphtrace can no longer switch numba to its simulator, and numba's
own calls fail ("CUDA driver library cannot be found"); importing graphtrace warns
at once, saying what happened and the two ways out."""
import os
import subprocess
import sys
import warnings

import pytest

from graphtrace import backend

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SAYS = ("numba.cuda was imported before graphtrace, without numba's CUDA simulator",
         "Import graphtrace before numba.cuda", "NUMBA_ENABLE_CUDASIM=1")


@pytest.fixture
def no_gpu(monkeypatch):
    """numba.cuda imported (as it is here), a machine without a GPU, no backend named."""
    pytest.importorskip("numba.cuda")
    monkeypatch.delenv("GRAPHTRACE_BACKEND", raising=False)
    monkeypatch.setattr(backend._driver, "available", lambda: False)


def prepared() -> list:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        backend.prepare_numba()
    return [str(w.message) for w in seen]


def test_numba_imported_first_without_the_simulator_warns(no_gpu, monkeypatch):
    import numba
    monkeypatch.setattr(numba.config, "ENABLE_CUDASIM", 0)
    said = prepared()
    assert len(said) == 1 and all(part in said[0] for part in _SAYS), said


def test_numba_imported_first_with_the_simulator_or_a_gpu_says_nothing(no_gpu, monkeypatch):
    import numba
    monkeypatch.setattr(numba.config, "ENABLE_CUDASIM", 1)
    assert prepared() == []
    monkeypatch.setattr(numba.config, "ENABLE_CUDASIM", 0)
    monkeypatch.setattr(backend._driver, "available", lambda: True)   # numba finds the GPU
    assert prepared() == []


def test_the_warning_names_the_program_s_import_line():
    if backend._driver.available():
        pytest.skip("a GPU is here: numba imported first runs on it")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_ENABLE_CUDASIM", "GRAPHTRACE_BACKEND")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", "from numba import cuda\nimport graphtrace\n"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("<string>:2: UserWarning: numba.cuda was imported before "
                                  "graphtrace"), done.stderr
    assert done.stderr.count("UserWarning") == 1, done.stderr


def test_numba_imported_before_graphtrace_but_not_numba_cuda_is_switched_to_the_simulator():
    """``import numba`` alone came first: numba read the environment then, so setting
    NUMBA_ENABLE_CUDASIM was too late; its config is set too, and numba.cuda, imported
    after graphtrace, is the simulator."""
    if backend._driver.available():
        pytest.skip("a GPU is here: numba runs on it")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_ENABLE_CUDASIM", "GRAPHTRACE_BACKEND")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    code = ("import numba\nimport numpy as np\nimport graphtrace\nfrom numba import cuda\n"
            "print(cuda.to_device(np.ones(3)).copy_to_host().sum())\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "3.0", done.stderr
    assert "UserWarning" not in done.stderr, done.stderr


def test_backend_gpu_asked_for_on_a_machine_without_one_warns_at_import(monkeypatch):
    """``GRAPHTRACE_BACKEND=gpu`` with no driver: the user's first numba call
    (``cuda.to_device``) would fail with numba's own message, naming neither the
    setting nor the way out; importing graphtrace says both, at the import line."""
    monkeypatch.setenv("GRAPHTRACE_BACKEND", "gpu")
    monkeypatch.setattr(backend._driver, "available", lambda: False)
    said = prepared()
    assert len(said) == 1 and "GRAPHTRACE_BACKEND=gpu is set" in said[0] \
        and "GRAPHTRACE_BACKEND=sim" in said[0], said
    monkeypatch.setattr(backend._driver, "available", lambda: True)
    assert prepared() == []
