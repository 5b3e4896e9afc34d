"""Captured regions reaching the graph's arrays by ways no global name shows: a
module or class handed to the region (or returned by a helper), ``globals()`` by
a constant key, ``sys.modules[__name__]``, an item of a numpy object array. Each
is ordered with the nodes using those arrays; a region reading globals by names
computed when it runs is ordered as ``opaque=True``; a new array put where the
region reached one is captured again (``CapturedOp.moved``)."""
import sys
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of
import region_reach_module as wmod
from graphtrace.ops.captured import CAPTURED

N = 4
X0 = np.arange(1.0, N + 1)
W = cuda.to_device(np.ones(N))
wmod.W = W
OBJ = np.empty(1, dtype=object)
OBJ[0] = W
KEY = "W"


class Params:   # a class used as a namespace
    w = W


@pytest.fixture(autouse=True)
def _module_holds_this_files_array():
    """``region_reach_module.W`` is this file's W at each test: another file's tests
    (test_captured_region_keys.py) put their own arrays there."""
    wmod.W = W


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


def from_module(m, y):
    y[...] = m.W * 2


def from_class(c, y):
    y[...] = c.w * 2


def _module():
    return wmod


def by_helper(y):
    y[...] = _module().W * 2


def by_globals(y):
    y[...] = globals()["W"] * 2


def by_sys_modules(y):
    y[...] = sys.modules[__name__].W * 2


def by_object_array(y):
    y[...] = OBJ[0] * 2


def by_computed_key(y):
    y[...] = globals()[KEY] * 2


def by_getattr(y):
    y[...] = getattr(sys.modules[__name__], KEY) * 2


def _between(region, *given):
    """A graph writing w before and after a region that reads w (as 2 w) unseen."""
    @gt.graph
    def f(s, x, w, y):
        scale[1, 32, s](x, 3.0, w)          # w = 3x
        s.captured(region, *given, y, writes=[y])
        scale[1, 32, s](x, 5.0, w)          # w = 5x
    return f


def _runs_right(f, calls=8):
    for _ in range(calls):
        W.copy_to_device(np.ones(N))
        y = cuda.to_device(np.zeros(N))
        f(cuda.to_device(X0), W, y)
        assert y.copy_to_host().tolist() == (6 * X0).tolist()


def _deps(f):
    g = f.trace(cuda.to_device(X0), W, cuda.to_device(np.zeros(N)))
    return g, [[d.index for d in n.deps] for n in g.nodes]


@pytest.mark.parametrize("region, given", [
    (from_module, (wmod,)), (from_class, (Params,)), (by_helper, ())],
    ids=["module", "class", "helper returning a module"])
def test_a_region_handed_a_module_or_class_is_ordered_by_the_arrays_they_hold(region, given):
    """``s.captured(fn, wmod, y)`` with fn reading ``m.W`` (W an array the kernels
    around it write), a class used as a namespace, and ``get().W``: the region
    came with no edge, and half the simulator's runs read w as 5x."""
    f = _between(region, *given)
    g, deps = _deps(f)
    assert deps == [[], [0], [1]], str(g)
    assert "inout(w, library state)" in str(g).splitlines()[2], str(g)
    _runs_right(f)


@pytest.mark.parametrize("region", [by_globals, by_sys_modules, by_object_array],
                         ids=["globals()", "sys.modules[__name__]", "object array"])
def test_a_region_reaching_a_global_by_globals_or_its_module_or_an_object_array_is_ordered(
        region):
    f = _between(region)
    g, deps = _deps(f)
    assert deps == [[], [0], [1]], str(g)
    assert "inout(w, library state)" in str(g).splitlines()[2], str(g)
    _runs_right(f)


@pytest.mark.parametrize("region", [by_computed_key, by_getattr],
                         ids=["globals()[KEY]", "getattr(module, KEY)"])
def test_a_region_reading_globals_by_computed_names_is_ordered_as_opaque(region):
    """What a region reads by a name known only when it runs cannot be seen: it is
    ordered after everything before it and before everything after it."""
    f = _between(region)
    g, deps = _deps(f)
    assert deps == [[], [0], [1]], str(g)
    assert "  opaque  " in str(g).splitlines()[2], str(g)
    _runs_right(f)


def test_a_region_reading_only_names_it_holds_is_not_made_opaque():
    def plain(y):
        y[...] = W * 2
    g, _ = _deps(_between(plain))
    assert "  opaque  " not in str(g), str(g)


def _moved(region_node):
    """``CapturedOp.moved`` for a region as ``_Region.capture`` leaves it: the places
    it reached arrays through, as they were at its capture."""
    from graphtrace.ops._region_reach import reached_values
    region = types.SimpleNamespace(watched=[], again_after=None,
                                   places=reached_values(region_node.target,
                                                         region_node.args)[1])
    gpu = types.SimpleNamespace(state={region_node.index: region}, clock=[1])
    return lambda: CAPTURED.moved(gpu, region_node)


@pytest.mark.parametrize("region, given, rebind", [
    (from_module, (wmod,), lambda new: setattr(wmod, "W", new)),
    (from_class, (Params,), lambda new: setattr(Params, "w", new)),
    (by_helper, (), lambda new: setattr(wmod, "W", new)),
    (by_globals, (), lambda new: globals().__setitem__("W", new)),
    (by_sys_modules, (), lambda new: globals().__setitem__("W", new)),
    (by_object_array, (), lambda new: OBJ.__setitem__(0, new))],
    ids=["module", "class", "helper", "globals()", "sys.modules", "object array"])
def test_a_new_array_where_a_region_reached_one_captures_it_again(region, given, rebind):
    """``wmod.W = new_array`` between calls: a call traces anew (the places are keyed,
    ``test_captured_region_keys.py``), but a compiled handle's launch is no call, so
    on the GPU the child graph captured with the old array would be replayed; the
    launch asks ``moved`` and captures it again."""
    global W
    old = W

    @gt.graph
    def f(s, y):
        s.captured(region, *given, y, writes=[y])

    y = cuda.to_device(np.zeros(N))
    node = f.trace(y).nodes[0]
    moved = _moved(node)
    assert not moved()
    try:
        rebind(cuda.to_device(np.full(N, 5.0)))
        assert moved()
    finally:
        W = wmod.W = Params.w = OBJ[0] = old
    assert not moved()


def from_module_list(m, y):
    y[...] = m.Ws[0] * 2


def from_module_dict(m, y):
    y[...] = m.D["w"] * 2


def from_object_array_list(y):
    y[...] = OBJ_LISTS[0][0] * 2


OBJ_LISTS = np.empty(1, dtype=object)


@pytest.mark.parametrize("region, given, swap", [
    (from_module_list, (wmod,), lambda new: wmod.Ws.__setitem__(0, new)),
    (from_module_dict, (wmod,), lambda new: wmod.D.__setitem__("w", new)),
    (from_module_dict, (wmod,), lambda new: wmod.D["more"].__setitem__(0, new)),
    (from_object_array_list, (), lambda new: OBJ_LISTS[0].__setitem__(0, new))],
    ids=["module list item", "module dict item", "nested list in a module dict",
         "object array item's list item"])
def test_a_new_array_inside_a_container_a_place_holds_captures_the_region_again(
        region, given, swap):
    """``rmod.Ws[0] = new``: the place holds the same list, so comparing it by
    identity missed the new array, and a compiled handle's launch on the GPU would
    replay the child graph captured with the old one; the arrays inside are
    compared item by item, nested."""
    wmod.Ws = [cuda.to_device(np.ones(N))]
    wmod.D = {"w": cuda.to_device(np.ones(N)), "more": [cuda.to_device(np.ones(N))]}
    OBJ_LISTS[0] = [cuda.to_device(np.ones(N))]
    try:
        @gt.graph
        def f(s, y):
            s.captured(region, *given, y, writes=[y])

        node = f.trace(cuda.to_device(np.zeros(N))).nodes[0]
        moved = _moved(node)
        assert not moved()
        swap(cuda.to_device(np.full(N, 5.0)))
        assert moved()
    finally:
        del wmod.Ws, wmod.D
        OBJ_LISTS[0] = None


def reads_t_of_module(m, y):
    y[...] = m.T * 2


def reads_t_of_class(c, y):
    y[...] = c.t * 2


def reads_object_array_item(y):
    y[...] = OBJ_LISTS[0] * 2


@pytest.mark.parametrize("region, given, put, label, opaque", [
    (reads_t_of_module, (wmod,), lambda t: setattr(wmod, "T", t), "region_reach_module.T",
     False),
    (reads_t_of_module, (wmod,), lambda t: setattr(wmod, "T", t), "region_reach_module.T",
     True),
    (reads_t_of_class, (Params,), lambda t: setattr(Params, "t", t), "Params.t", False),
    (reads_object_array_item, (), lambda t: OBJ_LISTS.__setitem__(0, [t]),
     "object array item (0,)", False)],
    ids=["module", "module, opaque", "class", "object array holding a list"])
def test_a_temporary_a_region_reaches_through_a_module_is_refused_at_its_line(
        region, given, put, label, opaque):
    """``rmod.T = s.empty(...)`` then ``s.captured(fn, rmod, y)``: the region, captured
    apart from the trace, met the temporary's stand-in, an error naming the region's
    own line (used after the trace ended); the temporary must be its argument."""
    @gt.graph
    def f(s, x, y):
        t = s.empty(N)
        put(t)
        scale[1, 32, s](x, 4.0, t)
        s.captured(region, *given, y, writes=[y], opaque=opaque)   # reaches t

    try:
        with pytest.raises(gt.ArgumentError) as e:
            f(cuda.to_device(X0), cuda.to_device(np.zeros(N)))
    finally:
        wmod.__dict__.pop("T", None)
        if "t" in Params.__dict__:
            del Params.t
        OBJ_LISTS[0] = None
    message = str(e.value)
    assert e.value.source[1] == line_of(__file__, "reaches t"), message
    assert f"captured region {region.__name__} reaches temporary tmp0" in message, message
    assert f"through {label}" in message, message
    assert "pass it to s.captured as an argument" in message, message
    assert f"s.captured({region.__name__}, ..., t)" in message, message


def test_a_region_reaching_no_array_through_holders_watches_nothing():
    from graphtrace.ops._region_reach import reached_values

    def plain(y):
        y[...] = 1.0
    assert not reached_values(plain, ())[1]


class Opts:   # a settings class with an attribute named as a builtin that reads by names
    eval = False
    vars = None


def reads_a_flag_named_eval(x, y):
    y[...] = x * W if not Opts.eval else x


def reads_an_attribute_named_vars(x, y):
    y[...] = x * W if Opts.vars is None else x


def guards_on_torch(x, y):
    if "torch" in sys.modules and sys.modules.get("torch") is None:
        return
    y[...] = x * W


def _listing_line(region):
    @gt.graph
    def f(s, x, y):
        s.captured(region, x, y, writes=[y])
    return str(f.trace(cuda.to_device(X0), cuda.to_device(np.zeros(N)))).splitlines()[1]


@pytest.mark.parametrize("region", [reads_a_flag_named_eval, reads_an_attribute_named_vars,
                                    guards_on_torch],
                         ids=["Opts.eval", "Opts.vars", "'torch' in sys.modules"])
def test_an_attribute_named_eval_or_a_sys_modules_membership_test_is_no_computed_read(region):
    """``co_names`` holds attribute names too: ``Opts.eval`` (``model.eval()``) was taken
    for a call of ``eval`` and the region made opaque; so was the common ``"torch" in
    sys.modules`` guard, a membership test of a constant key."""
    line = _listing_line(region)
    assert "  opaque  " not in line and " W, library state)" in line, line


def reads_by_computed_name_and_a_global(x, y, act):
    y[...] = getattr(np, act)(x * W)


def test_a_region_made_opaque_keeps_the_global_arrays_it_reads_for_reads_and_writes():
    """A region made opaque because it reads by a computed name (``getattr(np, act)``)
    refused ``reads=[W]`` of the global array it reads ("not one of the arrays it is
    given"): its reached arrays were dropped with its ordering."""
    @gt.graph(static=("act",))
    def f(s, x, y, act):
        scale[1, 32, s](x, 1.0, x)
        s.captured(reads_by_computed_name_and_a_global, x, y, act, reads=[x, W], writes=[y])

    x, y = cuda.to_device(np.array([-1.0, 2, -3, 4])), cuda.to_device(np.zeros(N))
    W.copy_to_device(np.full(N, 2.0))
    try:
        f(x, y, "abs")
        assert y.copy_to_host().tolist() == [2.0, 4.0, 6.0, 8.0]
        line = str(f.trace(x, y, "abs")).splitlines()[2]
        assert "  opaque  " in line and "in(x, W)" in line, line
    finally:
        W.copy_to_device(np.ones(N))


from sys import modules as _modules  # noqa: E402  (a region reads modules[__name__])

import region_reach_pkg  # noqa: E402


class _State:
    pass


class Holder:   # a class used as a namespace, holding an object holding the array
    state = _State()


def imports_inside(y):
    import region_reach_module as m
    y[...] = m.W * 2


def from_imports_inside(y):
    from region_reach_module import W as w
    y[...] = w * 2


def by_modules_imported_from_sys(y):
    y[...] = _modules[__name__].W * 2


def by_the_module_dict(y):
    y[...] = sys.modules[__name__].__dict__["W"] * 2


def from_a_submodule(p, y):
    y[...] = p.sub.W * 2


def from_an_object_a_class_holds(c, y):
    y[...] = c.state.w * 2


@pytest.mark.parametrize("region, given", [
    (imports_inside, ()), (from_imports_inside, ()), (by_modules_imported_from_sys, ()),
    (by_the_module_dict, ()), (from_a_submodule, (region_reach_pkg,)),
    (from_an_object_a_class_holds, (Holder,))],
    ids=["import inside", "from-import inside", "from sys import modules",
         "sys.modules[...].__dict__", "a handed package's submodule", "a class's object"])
def test_a_region_reaching_an_array_by_an_import_a_submodule_or_an_object_is_ordered(
        region, given):
    """Each was neither ordered nor opaque: the region ran beside the kernels writing w."""
    region_reach_pkg.sub.W = Holder.state.w = W
    f = _between(region, *given)
    g, deps = _deps(f)
    assert deps == [[], [0], [1]], str(g)
    _runs_right(f)


def test_a_region_reading_sys_modules_does_not_reach_the_dict_of_every_module():
    """``sys.modules[__name__].W`` is read through its lookup (the module, then W):
    sys.modules itself is no reached value, whose walk over every module imports
    lazily and grows the dict while it is read ('dictionary changed size during
    iteration', by the order the tests ran in)."""
    from graphtrace.ops._region_reach import reached_values
    values, _, unseen = reached_values(by_sys_modules, (np.zeros(2),))
    assert unseen is None
    assert not any(v is sys.modules for v in values)
    assert any(v is W for v in values)   # (the array it reads is reached)
