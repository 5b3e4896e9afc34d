"""What a loop's body changes that a module of a namespace package, a module or
a class of many names, or a helper's return holds, and the cost of watching a
module a body reads.

Python runs a body once and the device repeats that recording, so a body that
swaps the arrays a module or a class holds, or bumps a number a helper hands
its work, ran every iteration on the first one's arrays and numbers. A
namespace package's module (a folder with no ``__init__.py``) was taken for a
library's, and a module, a class or an object of more than 1,024 names was
walked only so far; a number the body bumped itself and a helper returned
(``G += 0.5`` then ``add(x, now())``) was not seen to reach the work. Each is
now refused at the block's line. A body reading a setting off a module of
many globals walks the module once, not at every block.
"""
import importlib
import sys
import sysconfig
import types

import numpy as np
import pytest

import graphtrace as gt
import loop_nspkg.state
from flow_kernels import add, count, dev, host, shift
from graphtrace.ops import _loop_slots, _loop_state
from graphtrace.owners import own_holder
from helpers import line_of

_NAMES = 1100   # past the 1,024 slots a name's walk stopped at


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
     "`loop_nspkg.state.cur` and `loop_nspkg.state.nxt`"),
    (_namespace_package_counter, "namespace package counter", "`loop_nspkg.state.T`,"),
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


@pytest.fixture
def bigmod(tmp_path, monkeypatch):
    """A module of the program's own, a file of ``_NAMES`` numbers before the two
    names a body swaps."""
    path = tmp_path / "gt_big_state.py"
    path.write_text("".join(f"C_{i} = {i}.5\n" for i in range(_NAMES)) +
                    "cur = nxt = res = None\nT = 0.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("gt_big_state")
    yield module
    sys.modules.pop("gt_big_state", None)


def _many(holder):
    """``holder`` (a module, a class, an object) set up to hold ``_NAMES`` numbers
    before ``cur`` and ``nxt``."""
    for i in range(_NAMES):
        setattr(holder, f"C_{i}", i + 0.5)
    holder.cur = holder.nxt = holder.res = None
    return holder


class _Crowded:
    """A class of the program's own, given many names by ``_many``."""


def _swapping(holder):
    def program(s, a, b, n):
        holder.cur, holder.nxt = a, b
        with s.while_loop(gt.cond(n) < 3) as body:   # many names swap
            shift[1, 4, body](holder.cur, holder.nxt)
            count[1, 1, body](n)
            holder.cur, holder.nxt = holder.nxt, holder.cur
    return program


def _kept_in_branch(holder):
    def program(s, a, b, n):
        holder.res = a
        with s.if_then(gt.cond(n) == 0) as then:   # many names kept in branch
            add[1, 4, then](b, 1.0)
            holder.res = b
        s.copy(a, holder.res)
    return program


@pytest.mark.parametrize("kind", ["module", "class", "object"])
def test_state_a_holder_of_over_1024_names_holds_that_a_body_changes_is_refused(
        bigmod, kind):
    """The walk of a name stopped at 1,024 slots, so a module, a class or an object
    holding more names hid the ones after: every iteration ran on the first
    arrays, and the code after a branch read what its one recorded pass left.
    A holder's names are all watched."""
    holder = {"module": bigmod, "class": _many(_Crowded),
              "object": _many(types.SimpleNamespace())}[kind]
    _refused_at(_swapping(holder), "many names swap", "`holder.cur` and `holder.nxt`")
    _refused_at(_kept_in_branch(holder), "many names kept in branch", "holder.res")


def _swaps_past_the_items_watched(holder):
    def program(s, a, b, n):
        holder.TABLES.append([a, b] + [0.0] * 248)
        with s.while_loop(gt.cond(n) < 3) as body:   # swaps past the items watched
            shift[1, 4, body](holder.TABLES[4][0], holder.TABLES[4][1])
            count[1, 1, body](n)
            holder.TABLES[4][0], holder.TABLES[4][1] = \
                holder.TABLES[4][1], holder.TABLES[4][0]
    return program


def test_items_past_the_1024_a_name_watches_that_the_body_names_are_watched():
    """Past the first 1,024 items of containers under one name (four lists of 250
    before it), a list's items were not looked into: the body swapping two of
    them by constant keys ran on the first arrays. Those the code names are
    walked too."""
    holder = types.SimpleNamespace(TABLES=[[float(i)] * 250 for i in range(4)])
    _refused_at(_swaps_past_the_items_watched(holder), "swaps past the items watched",
                "`holder.TABLES[4][0]` and `holder.TABLES[4][1]`")


def test_a_module_of_many_names_read_by_many_blocks_is_walked_once(bigmod, monkeypatch):
    """200 branches reading a setting off a module of over a thousand globals
    walked the module at each one's entry and exit; what the walk read is
    now looked at again instead, and the module walked anew only where that
    changed."""
    walked = []
    slots = _loop_slots._slots

    def counting(root, name, *rest):
        walked.append(name)
        return slots(root, name, *rest)
    for module in (_loop_slots, _loop_state):   # (wherever it is called from)
        monkeypatch.setattr(module, "_slots", counting)

    @gt.graph(backend="sim")
    def f(s, a, flag):
        for _ in range(50):
            with s.if_then(gt.cond(flag)) as then:
                add[1, 4, then](a, bigmod.C_7)

    a = dev(0, 1, 2, 3)
    f(a, dev(1, dtype=np.int32))
    assert host(a) == [375, 376, 377, 378]
    assert walked.count("bigmod") <= 2, walked.count("bigmod")


def _changed_between_blocks(holder, set_pair):
    """A branch reading ``holder``'s arrays, then the pair set anew in another
    order, then a loop swapping them: the slots taken for the branch no longer
    hold, and the loop is refused."""
    def program(s, a, b, n):
        set_pair(b, a)
        with s.if_then(gt.cond(n) == 0) as then:
            add[1, 4, then](holder.cur if hasattr(holder, "cur") else holder[0], 1.0)
        set_pair(a, b)
        with s.while_loop(gt.cond(n) < 3) as body:   # changed between blocks
            src, dst = (holder.cur, holder.nxt) if hasattr(holder, "cur") else holder
            shift[1, 4, body](src, dst)
            count[1, 1, body](n)
            set_pair(dst, src)
    return program


def test_what_changes_between_two_blocks_is_taken_anew(bigmod):
    """The slots kept for a name are those of the walk while nothing it read has
    changed: a module's global, a class's attribute, an object's and a list's
    item set between two blocks are seen."""
    pair = [None, None]
    obj = types.SimpleNamespace(cur=None, nxt=None)

    def set_attrs(holder):
        def set_pair(x, y):
            holder.cur, holder.nxt = x, y
        return set_pair

    def set_items(x, y):
        pair[0], pair[1] = x, y

    for holder, set_pair, named in ((bigmod, set_attrs(bigmod), "holder.cur"),
                                    (_Crowded, set_attrs(_Crowded), "holder.cur"),
                                    (obj, set_attrs(obj), "holder.cur"),
                                    (pair, set_items, "holder[0]")):
        _refused_at(_changed_between_blocks(holder, set_pair), "changed between blocks",
                    named)


G = 0.0
G_COUNT = 0


class _Ctr:
    t = 0.0

    @classmethod
    def get(cls):
        return cls.t

    def mine(self):
        return self.t


def _now_g():
    return G


def _count_g():
    return G_COUNT


def _now_c():
    return _Ctr.t


def _global_returned(s, a, b, n):
    global G
    G = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # global returned
        G += 0.5
        add[1, 4, body](a, _now_g())
        count[1, 1, body](n)


def _int_global_returned(s, a, b, n):
    global G_COUNT
    G_COUNT = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # int global returned
        G_COUNT += 1
        add[1, 4, body](a, float(_count_g()))
        count[1, 1, body](n)


def _class_attribute_returned(s, a, b, n):
    _Ctr.t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # class attribute returned
        _Ctr.t += 0.5
        add[1, 4, body](a, _now_c())
        count[1, 1, body](n)


def _classmethod_returned(s, a, b, n):
    _Ctr.t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # classmethod returned
        _Ctr.t += 0.5
        v = _Ctr.get()
        add[1, 4, body](a, v)
        count[1, 1, body](n)


def _method_returned(s, a, b, n):
    c = _Ctr()
    c.t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # method returned
        c.t += 0.5
        add[1, 4, body](a, c.mine())
        count[1, 1, body](n)


def _closure_returned(s, a, b, n):
    t = 0.0

    def now():
        return t
    with s.while_loop(gt.cond(n) < 3) as body:   # closure returned
        t += 0.5
        add[1, 4, body](a, now())
        count[1, 1, body](n)


@pytest.mark.parametrize("program, marker, named", [
    (_global_returned, "global returned", "changes `G`,"),
    (_int_global_returned, "int global returned", "changes `G_COUNT`,"),
    (_class_attribute_returned, "class attribute returned", "changes `_Ctr.t`,"),
    (_classmethod_returned, "classmethod returned", "changes `_Ctr.t`,"),
    (_method_returned, "method returned", "changes `c.t`,"),
    (_closure_returned, "closure returned", "changes `t`,"),
])
def test_a_number_the_body_bumps_and_a_helper_returns_to_its_work_is_refused(
        program, marker, named):
    """The body bumps the number itself and hands its work what a function of the
    program's returns of it (``G += 0.5`` then ``add(x, now())``, ``now`` returning
    ``G``; ``_Ctr.t``, ``cls.t``, ``self.t``, a closure's ``t``): the device would
    add the first value every iteration. The same bumped by a helper was refused
    already."""
    _refused_at(program, marker, named)


def test_a_number_a_helper_returns_that_no_work_takes_or_that_it_sets_first_runs():
    """A counter the body bumps whose helper's return only goes to a list it logs
    to, and a helper setting the number before returning it: the same work in
    each eager iteration."""
    log = []

    def reset():
        _Ctr.t = 2.0
        return _Ctr.t

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        _Ctr.t = 0.0
        with s.while_loop(gt.cond(n) < 3) as body:
            _Ctr.t += 0.5
            log.append(_now_c())
            add[1, 4, body](a, 1.0)
            add[1, 4, body](b, reset())
            count[1, 1, body](n)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [3, 4, 5, 6] and host(b) == [6, 6, 6, 6]
