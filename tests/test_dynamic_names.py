"""Attributes read by names known only when the code runs, and objects served by
a class's ``__getattr__``.

``getattr(self, name)``, ``getattr(self, f"layer{i}")``,
``operator.attrgetter(self.key)(self)``, ``self.__dict__[key]``, a
``functools.partialmethod`` whose function does ``getattr(self, which)``: no
attribute name in the code says what the graph reads, so what the objects hold
is keyed whole (as ``vars(self)`` is), and a change made later traces anew
instead of replaying the first value. A torch-style module keeping its
sub-modules and parameters in ``self._modules`` and ``self._parameters``, served
by ``__getattr__``: that code runs at each ``self.sc``, so the dicts it reads
are walked, their numbers keyed and their arrays rebound. On the simulator,
where results can be read back.
"""
import functools
import operator
import re
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.dynamic_names import by_names
from graphtrace.errors import ArgumentError


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


def dev(*values):
    return cuda.to_device(np.array(values, dtype=np.float64))


def result(a):
    return a.copy_to_host().tolist()


class Sub:
    """A sub-module: ``out += a * w``."""

    def __init__(self, a, w=(1.0, 1.0)):
        self.a, self.w = a, dev(*w)

    def forward(self, s, out):
        axpy[1, 2, s](self.a, self.w, out)


def _by(self, which):
    return getattr(self, which)


class Holder:
    """Holds a ``Sub`` as ``q0``, and the names that find it when the code runs."""

    pick = functools.partialmethod(_by, "q0")

    def __init__(self):
        self.q0, self.key, self.i, self.how, self.names = Sub(2.0), "q0", 0, "first", ["q0"]

    def first(self):
        return self.q0


_FORMS = {   # how the code reaches the Sub an object o holds, by a name not in it
    "getattr": "getattr(o, o.key)",
    "getattr with a default": "getattr(o, o.key, None)",
    "f-string": "getattr(o, f'q{o.i}')",
    "loop over names": "[getattr(o, k) for k in o.names][0]",
    "attrgetter": "operator.attrgetter(o.key)(o)",
    "methodcaller": "operator.methodcaller(o.how)(o)",
    "__getattribute__": "o.__getattribute__(o.key)",
    "__dict__": "o.__dict__[o.key]",
    "partialmethod": "o.pick()",
}
_CODE = '''
class Model(Holder):
    @gt.graph(backend="sim")
    def step(self, s, out):
        put[1, 2, s](out, 0.0)
        {self_form}.forward(s, out)

class Outer:
    def __init__(self):
        self.inner = Holder()

    @gt.graph(backend="sim")
    def step(self, s, out):
        put[1, 2, s](out, 0.0)
        {held_form}.forward(s, out)

@gt.graph(backend="sim")
def by_global(s, out):
    put[1, 2, s](out, 0.0)
    {global_form}.forward(s, out)
'''


def _program(form: str, where: str):
    """``(the object holding q0, a call of the graph, its output)``."""
    expr = _FORMS[form]
    scope = dict(globals())   # each form alone in its functions' code
    exec(_CODE.format(self_form=_on(expr, "self"), held_form=_on(expr, "self.inner"), global_form=_on(expr, "MODEL")),
         scope)
    out = dev(0, 0)
    if where == "method":
        m = scope["Model"]()
        return m, lambda: m.step(out), out
    if where == "held":
        m = scope["Outer"]()
        return m.inner, lambda: m.step(out), out
    scope["MODEL"] = Holder()
    return scope["MODEL"], lambda: scope["by_global"](out), out


def _on(expr: str, holder: str) -> str:
    """``expr`` with the object ``o`` spelled ``holder``."""
    return re.sub(r"\bo\b", holder, expr)


_WHERE = ["method", "held", "global"]


@pytest.mark.parametrize("where", _WHERE)
@pytest.mark.parametrize("form", list(_FORMS))
def test_a_number_read_by_a_name_known_when_run_is_watched(form, where):
    """``m.q0.a = 5.0`` after the first call: the graph replayed 2.0, as no name
    in the code says it reads ``q0``."""
    o, call, out = _program(form, where)
    call()
    assert result(out) == [2.0, 2.0]
    o.q0.a = 5.0
    call()
    assert result(out) == [5.0, 5.0]


@pytest.mark.parametrize("where", _WHERE)
@pytest.mark.parametrize("form", list(_FORMS))
def test_a_sub_object_read_by_a_name_known_when_run_is_watched_when_replaced(form, where):
    """``m.q0 = Sub(7.0, (3, 3))``: the old object's number and array replayed."""
    o, call, out = _program(form, where)
    call()
    o.q0 = Sub(7.0, (3.0, 3.0))
    call()
    assert result(out) == [21.0, 21.0]


@pytest.mark.parametrize("where", _WHERE)
@pytest.mark.parametrize("form", list(_FORMS))
def test_an_array_read_by_a_name_known_when_run_is_rebound(form, where):
    """``m.q0.w = dev(3, 4)``: the array was refused as not reached, or the old
    one replayed; the same object and array again cost no trace."""
    o, call, out = _program(form, where)
    call()
    o.q0.w = dev(3.0, 4.0)
    call()
    assert result(out) == [6.0, 8.0]
    o.q0.w.copy_to_device(np.array([1.0, 2.0]))   # in place: the graph reads it now
    call()
    assert result(out) == [2.0, 4.0]


class _Settings:
    def __init__(self):
        self.lr, self.key = 1.0, "lr"


@gt.graph(backend="sim")
def _by_argument(s, out, cfg):
    put[1, 2, s](out, getattr(cfg, cfg.key))


def test_a_number_an_argument_object_holds_read_by_a_name_known_when_run_is_watched():
    """``getattr(cfg, cfg.key)`` off an object passed as an argument: ``cfg.lr``
    replayed its first value."""
    cfg, out = _Settings(), dev(0, 0)
    _by_argument(out, cfg)
    cfg.lr = 7.0
    _by_argument(out, cfg)
    assert result(out) == [7.0, 7.0]


class _Modes:
    def __init__(self):
        self.scale, self.mode, self.w = 0.5, "train", dev(1, 1)

    def train(self, s, out):
        put[1, 2, s](out, self.scale)

    def infer(self, s, out):
        put[1, 2, s](out, 1.0)


class _PicksMethod:
    def __init__(self):
        self.layer = _Modes()

    @gt.graph(backend="sim")
    def step(self, s, out):
        getattr(self.layer, self.layer.mode)(s, out)


def test_a_method_picked_by_a_name_known_when_run_reads_what_it_reads_anew():
    """``getattr(self.layer, self.layer.mode)(s, out)``: ``train`` reading
    ``self.scale`` is named nowhere in the code; its value replayed."""
    m, out = _PicksMethod(), dev(0, 0)
    m.step(out)
    assert result(out) == [0.5, 0.5]
    m.layer.scale = 0.25
    m.step(out)
    assert result(out) == [0.25, 0.25]
    m.layer.mode = "infer"
    m.step(out)
    assert result(out) == [1.0, 1.0]
    m.layer.mode = "train"
    m.step(out)
    assert result(out) == [0.25, 0.25]


class _Constant:
    def __init__(self):
        self.lr, self.calls = 1.0, 0

    @gt.graph(backend="sim")
    def step(self, s, out):
        put[1, 2, s](out, getattr(self, "lr"))


def test_a_constant_name_keys_that_attribute_alone():
    """``getattr(self, "lr")`` reads ``self.lr``: a counter the program keeps on
    self beside it traces nothing anew, a change of ``lr`` does."""
    m, out = _Constant(), dev(0, 0)
    before = m.step.cache_info().misses
    m.step(out)
    m.calls += 1
    m.step(out)
    assert m.step.cache_info().misses == before + 1
    m.lr = 3.0
    m.step(out)
    assert result(out) == [3.0, 3.0]


class _Picks:
    def __init__(self):
        self.enc, self.key = Sub(2.0), "enc"

    @gt.graph(backend="sim")
    def step(self, s, out, pick):
        put[1, 2, s](out, 0.0)
        axpy[1, 2, s](1.0, pick(self).w, out)


def test_an_array_self_holds_by_a_name_only_a_passed_function_knows_is_refused_so():
    """``pick(self).w`` with ``pick`` doing ``getattr(o, o.key)``, passed as an
    argument: refused as "held by an argument object", advising to reach it "as
    self of a graph method called on it", which the code already did."""
    m = _Picks()
    with pytest.raises(ArgumentError) as e:
        m.step(dev(0, 0), lambda o: getattr(o, o.key))
    message = str(e.value)
    assert "self.enc.w, which self holds" in message and "known only when code runs" in message
    assert "name the attribute in the code of step (self.enc.w)" in message
    assert "as self of a graph method" not in message


class _Delegates:
    """Settings served by ``__getattr__`` off another object, by the name asked."""

    def __init__(self):
        self._values = types.SimpleNamespace(lr=1.0, seen=0)

    def __getattr__(self, name):
        return getattr(self._values, name)


class _HoldsDelegate:
    def __init__(self):
        self.cfg = _Delegates()

    @gt.graph(backend="sim")
    def step(self, s, out):
        put[1, 2, s](out, self.cfg.lr)


def test_a_getattr_serving_the_name_asked_keys_by_the_names_the_code_loads():
    """``getattr(self._values, name)`` in ``__getattr__`` reads ``lr`` for
    ``self.cfg.lr``: a counter beside it, changed between calls, traces nothing
    anew (all attributes were keyed, as for a name known only when run)."""
    m, out = _HoldsDelegate(), dev(0, 0)
    before = m.step.cache_info().misses
    m.step(out)
    m.cfg._values.seen += 1
    m.step(out)
    assert m.step.cache_info().misses == before + 1
    m.cfg._values.lr = 4.0
    m.step(out)
    assert result(out) == [4.0, 4.0]


def _codes():
    def constant(self):
        return getattr(self, "a"), getattr(self.f(1), "b", None), hasattr(self, "c"), \
            operator.attrgetter("d.e", "f")(self), operator.methodcaller("g", 1)(self)

    def by_variable(self, name):
        return getattr(self, name)

    def conditional(self, c):
        return getattr(self, "a" if c else "b")

    def handed_on(self, names):
        return list(map(getattr, [self], names))

    def unpacked(self, args):
        return getattr(self, *args)

    def in_attrgetter(self, name):
        return operator.attrgetter("a", name)(self)

    return constant, [by_variable, conditional, handed_on, unpacked, in_attrgetter]


def test_only_names_not_constant_in_the_code_read_attributes_by_name():
    constant, dynamic = _codes()
    assert not by_names(constant.__code__)
    assert [f.__name__ for f in dynamic if not by_names(f.__code__)] == []


class Module:
    """As torch.nn.Module: parameters and sub-modules kept in dicts, served by
    ``__getattr__`` and routed there by ``__setattr__``."""

    def __init__(self):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})

    def __setattr__(self, name, value):
        if isinstance(value, type(dev(0))):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for d in ("_parameters", "_modules"):
            found = self.__dict__[d]
            if name in found:
                return found[name]
        raise AttributeError(name)


class Scale(Module):
    def __init__(self, a, w=(1.0, 1.0)):
        super().__init__()
        self.a, self.w = a, dev(*w)

    def forward(self, s, out):
        axpy[1, 2, s](self.a, self.w, out)


class Net(Module):
    def __init__(self):
        super().__init__()
        self.sc = Scale(2.0)

    @gt.graph(backend="sim")
    def forward(self, s, out):
        put[1, 2, s](out, 0.0)
        self.sc.forward(s, out)


class _Modules:
    """A class whose ``__getattr__`` reads ``self.__dict__["_modules"]`` by a
    constant key."""

    def __init__(self, **modules):
        self._modules = modules

    def __getattr__(self, name):
        mods = self.__dict__["_modules"]
        if name in mods:
            return mods[name]
        raise AttributeError(name)


class _Top(_Modules):
    @gt.graph(backend="sim")
    def forward(self, s, out):
        put[1, 2, s](out, 0.0)
        self.sc.forward(s, out)


NET = None


@gt.graph(backend="sim")
def _net_by_global(s, out):
    put[1, 2, s](out, 0.0)
    NET.sc.forward(s, out)


def _torch_style(where: str):
    """``(the net, a call of its graph, its output)``."""
    global NET
    out = dev(0, 0)
    if where == "method":
        m = Net()
        return m, lambda: m.forward(out), out
    if where == "constant key":
        m = _Top(sc=Scale(2.0))
        return m, lambda: m.forward(out), out
    NET = Net()
    return NET, lambda: _net_by_global(out), out


_TORCH = ["method", "constant key", "global"]


@pytest.mark.parametrize("where", _TORCH)
def test_a_number_a_sub_module_served_by_getattr_holds_is_watched(where):
    """``m.sc.a = 5.0`` with ``sc`` in ``self._modules``: 2.0 replayed."""
    m, call, out = _torch_style(where)
    call()
    assert result(out) == [2.0, 2.0]
    m.sc.a = 5.0
    call()
    assert result(out) == [5.0, 5.0]


@pytest.mark.parametrize("where", _TORCH)
def test_a_sub_module_served_by_getattr_replaced_is_watched(where):
    """``m._modules["sc"] = Scale(7.0, (3, 3))``: the old module replayed."""
    m, call, out = _torch_style(where)
    call()
    m._modules["sc"] = Scale(7.0, (3.0, 3.0))
    call()
    assert result(out) == [21.0, 21.0]


@pytest.mark.parametrize("where", _TORCH)
def test_a_parameter_served_by_getattr_is_the_graphs(where):
    """``self.w`` of a module kept in ``self._parameters``: refused as an array
    the graph does not reach; swapped (``m.sc.w = ...``, into ``_parameters``)
    or changed in place, the graph reads the new one; the same again costs no
    trace."""
    m, call, out = _torch_style(where)
    call()
    assert result(out) == [2.0, 2.0]
    call()
    m.sc.w = dev(3.0, 4.0)
    call()
    assert result(out) == [6.0, 8.0]
    m.sc.w.copy_to_device(np.array([1.0, 2.0]))
    call()
    assert result(out) == [2.0, 4.0]


def test_a_torch_style_module_traces_once_while_nothing_changes():
    m, out = Net(), dev(0, 0)
    before = m.forward.cache_info().misses
    for _ in range(3):
        m.forward(out)
    assert m.forward.cache_info().misses == before + 1


_GAIN = 2.0


class _Gained:
    def __init__(self):
        self.mode = "train"

    def train(self, s, out):
        put[1, 2, s](out, _GAIN)


class _PicksGained:
    def __init__(self):
        self.layer = _Gained()

    @gt.graph(backend="sim")
    def step(self, s, out):
        getattr(self.layer, self.layer.mode)(s, out)


def test_a_method_picked_by_a_name_known_when_run_reads_its_globals_anew():
    """``train`` reads a global ``_GAIN``; named nowhere in the graph's code, its
    globals were not followed and the first value replayed."""
    global _GAIN
    m, out = _PicksGained(), dev(0, 0)
    m.step(out)
    _GAIN = 5.0
    try:
        m.step(out)
        assert result(out) == [5.0, 5.0]
    finally:
        _GAIN = 2.0
