"""numba-cuda's own device arrays as tracing reads them (``arrays.interface_of``,
``key_interface``, ``_speedups.c``'s ``view_key``), checked in a child process
without numba's simulator (``numba_arrays_child.py``): numba's arrays over memory
never touched, which needs no GPU.

Tracing reads a numba array's address past numba's Python property, and makes
the interface of a view of a new geometry from the attributes it read for the
view's key rather than asking numba, which makes it in Python at several times
the cost: these must give what numba's own properties give."""
import functools
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.cache
def child() -> dict:
    from graphtrace._compiled import speedups
    if speedups() is None:   # the child holds compiled tracing to pure Python's
        pytest.skip("compares compiled tracing with pure Python: tracing is not compiled "
                    "here, or GRAPHTRACE_PURE_PYTHON is set")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
    env.setdefault("GRAPHTRACE_BACKEND", "sim")
    done = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "numba_arrays_child.py")],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_numba_device_arrays_are_read_as_numba_arrays():
    assert child()["kinds"] == ["numba"]


@pytest.mark.parametrize("name", ["base", "view", "strided", "reversed", "empty", "2d", "row",
                                  "column", "block", "one row", "fortran", "broadcast",
                                  "float64", "int8"])
def test_the_interface_made_from_a_key_is_numbas_own(name):
    assert child()["interfaces"][name] is True


def test_views_made_at_every_launch_give_one_graph_compiled_or_not():
    out = child()
    assert out["nodes"] == 36 and out["same listing"] is True


def test_new_views_of_every_kind_are_taken_in_as_by_the_python_path():
    """A numba view of a new geometry is taken in by the compiled path with an
    interface made from its key (strided, reversed, empty, 2-D rows, columns and
    blocks, Fortran order, broadcast, other dtypes): the same Buffers."""
    assert child()["new views"] is True


def test_views_give_the_graph_of_the_same_arrays_known_by_numbas_interface_alone():
    assert child()["as by the interface"] is True


def test_only_the_arguments_ask_numba_for_their_address_and_interface():
    """Views made again and views of new geometries ask numba's properties nothing:
    the two arguments (x and m) are read by their interfaces, which read the address."""
    out = child()
    for path in ("reads compiled", "reads pure"):
        assert out[path] == {"device_ctypes_pointer": 2, "__cuda_array_interface__": 2}, path


def test_record_arrays_keep_their_fields():
    """numba's interface has no descr: a record array was taken as a void ("|V16")
    without fields, so records of one size with other fields or field order shared
    a cache key (on a GPU, a graph traced for another layout was replayed)."""
    records = ["[('a', '<f8'), ('b', '<f8')]", "[('b', '<f8'), ('a', '<f8')]", "[('a', '<f8')]"]
    assert child()["records"] == [[r] * 3 for r in records] * 2
