"""State a loop's body changes that a module of a namespace package holds.

Python runs a body once and the device repeats that recording, so a body that
swaps the arrays a module holds ran every iteration on the first one's
arrays. A namespace package (a folder with no ``__init__.py``) has a spec and
no file, and was taken for Python's own: its modules' state, reached through
it (``loop_nspkg.state.cur``), went unwatched. It is now refused at the
block's line, as a regular package's is.
"""
import importlib
import sysconfig
import types

import numpy as np
import pytest

import graphtrace as gt
import loop_nspkg.state
from flow_kernels import add, count, dev, shift
from graphtrace.owners import own_holder
from helpers import line_of


def _refused_at(program, marker, named, *args):
    f = gt.graph(program, backend="sim")
    args = args or (dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    with pytest.raises(gt.ArgumentError) as info:
        f(*args)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert named in str(e), str(e)


def _namespace_package_swap(s, a, b, n):
    loop_nspkg.state.cur, loop_nspkg.state.nxt = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # namespace package swap
        shift[1, 4, body](loop_nspkg.state.cur, loop_nspkg.state.nxt)
        count[1, 1, body](n)
        loop_nspkg.state.cur, loop_nspkg.state.nxt = \
            loop_nspkg.state.nxt, loop_nspkg.state.cur


def _namespace_package_counter(s, a, b, n):
    loop_nspkg.state.T = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # namespace package counter
        loop_nspkg.state.T += 0.5
        add[1, 4, body](a, loop_nspkg.state.T)
        count[1, 1, body](n)


def _namespace_package_kept_in_branch(s, a, b, n):
    loop_nspkg.state.res = a
    with s.if_then(gt.cond(n) == 0) as then:   # namespace package kept in branch
        add[1, 4, then](b, 1.0)
        loop_nspkg.state.res = b
    s.copy(a, loop_nspkg.state.res)


@pytest.mark.parametrize("program, marker, named", [
    (_namespace_package_swap, "namespace package swap",
     "loop_nspkg.state.cur and loop_nspkg.state.nxt"),
    (_namespace_package_counter, "namespace package counter", "loop_nspkg.state.T,"),
    (_namespace_package_kept_in_branch, "namespace package kept in branch",
     "loop_nspkg.state.res"),
])
def test_state_a_namespace_packages_module_holds_that_a_body_changes_is_refused(
        program, marker, named):
    """``loop_nspkg`` has no ``__init__.py``: the package has a spec and no file,
    which told it apart as Python's own; reached through it
    (``loop_nspkg.state.cur``) the module's state went unwatched."""
    _refused_at(program, marker, named)


def test_a_namespace_package_is_the_programs_where_one_of_its_folders_is():
    """A namespace package of the program's folders is its own; one whose folders
    are all installed packages' is a library's."""
    assert own_holder(loop_nspkg) and own_holder(loop_nspkg.state)
    spec = importlib.machinery.ModuleSpec("gt_test_ns", None, is_package=True)
    installed = types.ModuleType("gt_test_ns")
    installed.__spec__ = spec
    installed.__path__ = [sysconfig.get_paths()["purelib"] + "/gt_test_ns"]
    assert not own_holder(installed)
    installed.__path__.append(str(__file__).rsplit("/", 1)[0] + "/gt_test_ns")
    assert own_holder(installed)
