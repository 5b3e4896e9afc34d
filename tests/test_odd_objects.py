"""Objects whose own lookup raises, reached every way a graph function reaches one.

graphtrace asks the objects a call reaches for attributes (``hasattr(v,
"py_func")``, a class's ``__cuda_array_interface__``), which Python's
``hasattr`` and ``getattr(v, name, default)`` answer only where the object
raises AttributeError. A module's or a metaclass's ``__getattr__``, an
instance's ``__getattr__`` or ``__getattribute__`` and a property may raise
anything: each such object here, read as a global, a closure value, an
attribute of self or of an object self holds, an argument, and inside a
``s.while_loop`` body, either runs as eager numpy says (and a change to what
the graph read off it traces anew) or is refused at the call's line; never an
error from graphtrace's own code.
"""
import linecache
import sys
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host
from graphtrace.probe import _attr, _has, _repr
from helpers import line_of
from numba import cuda


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


class _RaisingMeta(type):
    def __getattr__(cls, name):
        raise RuntimeError("no " + name)


def _meta_class():
    """A class whose metaclass's ``__getattr__`` raises RuntimeError."""
    class MetaOdd(metaclass=_RaisingMeta):
        lr = 2.0
    return MetaOdd


def _getattr_raising(exc):
    class Odd:
        def __init__(self):
            self.lr = 2.0

        def __getattr__(self, name):
            raise exc(name)
    return Odd


class _Property:
    def __init__(self):
        self.lr = 2.0

    @property
    def boom(self):
        raise RuntimeError("boom")

    @property   # what graphtrace asks a helper or a kernel for
    def py_func(self):
        raise RuntimeError("py_func")

    @property
    def __wrapped__(self):
        raise RuntimeError("__wrapped__")

    @property
    def __func__(self):
        raise RuntimeError("__func__")


class _Getattribute:
    """Raises for every attribute but ``lr``, its ``__dict__`` and its class."""

    def __init__(self):
        self.lr = 2.0

    def __getattribute__(self, name):
        if name in ("lr", "__dict__", "__class__"):
            return object.__getattribute__(self, name)
        raise RuntimeError("getattribute " + name)


class _Dunders:
    """An object whose ==, hash, truth, len, iteration and repr raise."""

    def __init__(self):
        self.lr = 2.0

    def __eq__(self, other):
        raise TypeError("==")

    def __hash__(self):
        raise TypeError("hash")

    def __bool__(self):
        raise TypeError("bool")

    def __len__(self):
        raise TypeError("len")

    def __iter__(self):
        raise TypeError("iter")

    def __repr__(self):
        raise TypeError("repr")


@pytest.fixture(autouse=True)
def _forget_odd_modules():
    """The odd modules leave sys.modules after each test (a library scanning it, as
    hypothesis does for its constants, would meet their __getattr__)."""
    yield
    for name in [n for n in sys.modules if n.startswith("odd_module_")]:
        del sys.modules[name]


def _module(dunders_too: bool):
    """A module of the program's whose ``__getattr__`` raises RuntimeError (for
    its dunders too, ``__file__`` and ``__spec__`` among them, or not)."""
    name = "odd_module_" + ("all" if dunders_too else "plain")
    m = types.ModuleType(name)

    def __getattr__(attr):
        if not dunders_too and attr.startswith("__"):
            raise AttributeError(attr)
        raise RuntimeError("module getattr " + attr)
    m.__getattr__ = __getattr__
    m.lr = 2.0
    sys.modules[name] = m
    return m


ODD = {
    "module __getattr__": lambda: _module(False),
    "module __getattr__ (dunders too)": lambda: _module(True),
    "metaclass __getattr__ (the class)": _meta_class,
    "metaclass __getattr__ (an object)": lambda: _meta_class()(),
    "__getattr__ RuntimeError": lambda: _getattr_raising(RuntimeError)(),
    "__getattr__ KeyError": lambda: _getattr_raising(KeyError)(),
    "__getattr__ TypeError": lambda: _getattr_raising(TypeError)(),
    "properties": lambda: _Property(),
    "__getattribute__": lambda: _Getattribute(),
    "==, hash, bool, len, iter, repr": lambda: _Dunders(),
}


def _set_lr(x, lr):
    if issubclass(type(x), type):
        type.__setattr__(x, "lr", lr)
    else:
        object.__setattr__(x, "lr", lr)


# each way a graph function reaches the object: (make(odd) -> call(w), iterations)
def _global(x):
    global _G
    _G = x

    @gt.graph(backend="sim")
    def f(s, w):
        put[1, 2, s](w, _G.lr)
    return f, 1


def _closure(x):
    @gt.graph(backend="sim")
    def f(s, w):
        put[1, 2, s](w, x.lr)
    return f, 1


def _self(x):
    class Model:
        def __init__(self):
            self.odd = x

        @gt.graph(backend="sim")
        def step(self, s, w):
            put[1, 2, s](w, self.odd.lr)
    return Model().step, 1


def _held(x):
    class Holder:
        pass

    class Model:
        def __init__(self):
            self.holder = Holder()
            self.holder.odd = x

        @gt.graph(backend="sim")
        def step(self, s, w):
            put[1, 2, s](w, self.holder.odd.lr)
    return Model().step, 1


def _argument(x):
    @gt.graph(backend="sim")
    def f(s, w, odd):
        put[1, 2, s](w, odd.lr)
    return (lambda w: f(w, x)), 1


def _loop_global(x):
    global _L
    _L = x

    @gt.graph(backend="sim")
    def f(s, w, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 2, body](w, _L.lr)
            count[1, 1, body](n)
    return (lambda w: f(w, dev(0, dtype=np.int32))), 3


def _loop_self(x):
    class Model:
        def __init__(self):
            self.odd = x

        @gt.graph(backend="sim")
        def step(self, s, w, n):
            with s.while_loop(gt.cond(n) < 3) as body:
                add[1, 2, body](w, self.odd.lr)
                count[1, 1, body](n)
    m = Model()
    return (lambda w: m.step(w, dev(0, dtype=np.int32))), 3


def _loop_helper(x):
    def bump(s, w):   # a helper the body calls, reading the object by a closure name
        add[1, 2, s](w, x.lr)

    @gt.graph(backend="sim")
    def f(s, w, n):
        with s.while_loop(gt.cond(n) < 3) as body:
            bump(body, w)
            count[1, 1, body](n)
    return (lambda w: f(w, dev(0, dtype=np.int32))), 3


REACHED = {"global": _global, "closure": _closure, "self": _self, "held by self": _held,
           "argument": _argument, "loop body, global": _loop_global,
           "loop body, self": _loop_self, "loop body, helper's closure": _loop_helper}


@pytest.mark.parametrize("how", list(REACHED))
@pytest.mark.parametrize("kind", list(ODD))
def test_an_object_whose_lookup_raises_runs_as_eagerly_and_is_watched(kind, how):
    x = ODD[kind]()
    call, iterations = REACHED[how](x)
    for lr in (2.0, 3.0, 3.0):   # a change to what the graph read off it: traced anew
        _set_lr(x, lr)
        w = dev(0.0, 0.0)
        call(w)
        assert host(w) == (np.zeros(2) + iterations * np.float32(lr)).tolist()


class _NoClass:
    """An object that raises even for its class, which ``isinstance`` asks."""

    def __init__(self):
        object.__setattr__(self, "lr", 2.0)

    def __getattribute__(self, name):
        if name == "lr":
            return object.__getattribute__(self, name)
        raise RuntimeError("getattribute " + name)


class _UnhashableMeta(type):
    def __hash__(cls):
        raise TypeError("no hash of the class")

    def __eq__(cls, other):
        raise TypeError("no == of the class")


class _Unhashable(metaclass=_UnhashableMeta):
    lr = 2.0


@pytest.mark.parametrize("how", ["global", "self", "held by self", "loop body, global"])
@pytest.mark.parametrize("odd, why", [(_NoClass, "RuntimeError: getattribute __class__"),
                                      (_Unhashable, "TypeError: no hash of the class")])
def test_an_object_python_itself_cannot_ask_is_refused_at_the_call(odd, why, how):
    """What Python asks of any object (``isinstance`` its ``__class__``, a key its
    hash) raising: refused at the call's line, naming the object's method."""
    call, iterations = REACHED[how](odd() if odd is _NoClass else odd)
    with pytest.raises(gt.ArgumentError) as e:
        call(dev(0.0, 0.0))   # the call
    file, line = e.value.source   # the line calling the graph function: here, or a lambda's
    assert file == __file__ and (line == line_of(__file__, "the call") or
                                 "lambda w: " in linecache.getline(file, line))
    assert why in str(e.value)
    assert "__getattribute__" in str(e.value) or "__hash__" in str(e.value)
    assert "test_odd_objects.py" in str(e.value)   # where its method is


def test_a_module_whose_getattr_raises_is_read_in_a_loop_body():
    """The reported case: a loop body reading a module whose ``__getattr__`` raises
    RuntimeError (graphtrace asked it for ``py_func``), its state swapped each
    iteration through its attributes."""
    m = _module(False)
    m.cur = m.nxt = None

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        m.cur, m.nxt = a, b
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](m.nxt, 1.0)
            count[1, 1, body](n)

    b = dev(0, 0, 0, 0)
    f(dev(0, 1, 2, 3), b, dev(0, dtype=np.int32))
    assert host(b) == [3, 3, 3, 3]


def test_an_object_of_a_class_whose_metaclass_getattr_raises_is_held_by_self():
    """The reported case: self holds an object (and the class) of a metaclass whose
    ``__getattr__`` raises (graphtrace asked the class for its array interface)."""
    class Model:
        def __init__(self):
            self.lr, self.odd_cls, self.fn = 1.5, _meta_class(), self.update
            self.odd = self.odd_cls()

        def update(self, s, w):
            put[1, 2, s](w, self.lr)

        @gt.graph(backend="sim")
        def step(self, s, w):
            self.fn(s, w)
            _ = self.odd, self.odd_cls

    m, w = Model(), dev(0, 0)
    m.step(w)
    assert host(w) == [1.5, 1.5]
    m.lr = 2.5
    m.step(w)
    assert host(w) == [2.5, 2.5]


def test_a_callable_object_whose_lookup_raises_runs_as_a_host_callback():
    seen = []

    class Callback(_getattr_raising(RuntimeError)):
        def __call__(self, h):
            seen.append(float(h[0]))

    cb = Callback()

    @gt.graph(backend="sim")
    def f(s, w, h):
        put[1, 2, s](w, 5.0)
        s.copy(h, w)
        s.host(cb, h)

    w, h = dev(0, 0), gt.pinned_empty(2, np.float32)
    f(w, h)
    f(w, h)
    assert seen == [5.0, 5.0]
    assert "Callback.__call__" in str(f.trace(w, h))


def test_a_static_argument_whose_repr_raises_is_keyed_and_warned_about():
    """Retraced for each new value, past the retrace warning, which names what
    changes by its repr: one that raises is shown by its type."""
    class Setting:
        def __init__(self, v):
            self.v = v

        def __eq__(self, other):
            return type(other) is Setting and other.v == self.v

        def __hash__(self):
            return hash(self.v)

        def __repr__(self):
            raise RuntimeError("repr")

    @gt.graph(backend="sim", static=("o",))
    def f(s, w, o):
        put[1, 2, s](w, float(o.v))

    w = dev(0, 0)
    with pytest.warns(gt.RetraceWarning):
        for i in range(12):
            f(w, Setting(i))
    assert host(w) == [11.0, 11.0]


def test_the_probes_take_any_error_of_an_objects_lookup_for_none():
    m = _module(True)
    for v in (m, _meta_class(), _meta_class()(), _getattr_raising(KeyError)(), _Property(),
              _Getattribute()):
        assert not _has(v, "py_func")
        assert _attr(v, "__wrapped__", "absent") == "absent"
        assert _has(v, "lr") and _attr(v, "lr") == 2.0
    assert _repr(_Dunders()) == "<_Dunders>"
    with pytest.raises(RuntimeError):   # what getattr with a default lets through
        getattr(m, "x", None)
    with pytest.raises(KeyboardInterrupt):
        _attr(_getattr_raising(KeyboardInterrupt)(), "x")
