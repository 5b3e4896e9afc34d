"""Other spellings of what a graph reads off the program's objects, and classes
that compare oddly.

Each form reads a setting (``OPT.lr``) when traced; the graph bakes it in, so a
later change must trace anew, never replay the first value. On the simulator,
where results can be read back.
"""
import dataclasses
import functools
import operator
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt

import bases_module


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


def dev(*values):
    return cuda.to_device(np.array(values, dtype=np.float64))


def result(a):
    return a.copy_to_host().tolist()


class _Symbolic:
    def __bool__(self):
        raise TypeError("a symbolic comparison has no truth value")


class _SymbolicMeta(type):
    """A metaclass comparing its classes symbolically (as an ORM's or a symbolic
    library's may): ``==`` gives an expression that cannot be told true or false."""

    def __eq__(cls, other):
        return _Symbolic()

    def __ne__(cls, other):
        return _Symbolic()

    __hash__ = type.__hash__


class _Units(metaclass=_SymbolicMeta):
    SCALE = 1.0


class _Record(metaclass=_SymbolicMeta):
    def __init__(self):
        self.lr = 1.0

    def update(self, s, w):
        put[1, 2, s](w, self.lr * _Units.SCALE)


class _RecordCallingBase(_Record):
    def update(self, s, w):
        _Record.update(self, s, w)


class _Plain:
    def __init__(self):
        self.lr = 1.0

    def update(self, s, w):
        put[1, 2, s](w, self.lr * _Units.SCALE)


class _PlainCallingBase(_Plain):
    def update(self, s, w):
        _ = _Units   # an unrelated class of that metaclass, named
        _Plain.update(self, s, w)


class _HoldsOne:
    def __init__(self, o):
        self.o, self.w = o, dev(0, 0)

    @gt.graph(backend="sim")
    def step(self, s):
        self.o.update(s, self.w)


_GLOBAL = None


@gt.graph(backend="sim")
def _global_step(s, w):
    _GLOBAL.update(s, w)


@gt.graph(backend="sim")
def _argument_step(s, w, o, units):
    o.update(s, w)


@pytest.mark.parametrize("where", ["held", "global", "argument"])
@pytest.mark.parametrize("cls", [_Record, _RecordCallingBase, _Plain, _PlainCallingBase])
def test_classes_whose_metaclass_compares_symbolically_are_watched(cls, where):
    """A class whose metaclass answers ``==`` with an expression (no truth value):
    looking for the base a method calls (``v in mro``), keying a number read off
    the class (``MISSING in settled``), telling an argument's kind (``t in
    _SCALARS``) raised TypeError from graphtrace's own code."""
    global _GLOBAL
    o = cls()
    if where == "held":
        m = _HoldsOne(o)
        call, w = m.step, m.w
    elif where == "global":
        _GLOBAL, w = o, dev(0, 0)
        def call():
            _global_step(w)
    else:
        w = dev(0, 0)
        def call():
            _argument_step(w, o, _Units)
    try:
        call()
        assert result(w) == [1.0, 1.0]
        o.lr = 7.0
        call()
        assert result(w) == [7.0, 7.0]
        _Units.SCALE = 2.0
        call()
        assert result(w) == [14.0, 14.0]
    finally:
        _Units.SCALE, _GLOBAL = 1.0, None


class _ByModule(bases_module.Base):
    def update(self, s, w):
        bases_module.Base.update(self, s, w)


class _ByLocal(bases_module.Base):
    def update(self, s, w):
        B = bases_module.Base
        B.update(self, s, w)


class _ByImportInside(bases_module.Base):
    def update(self, s, w):
        from bases_module import Base as B
        B.update(self, s, w)


class _ByNestedClass(bases_module.Outer.Base):
    def update(self, s, w):
        bases_module.Outer.Base.update(self, s, w)


class _ByGetattr(bases_module.Base):
    def update(self, s, w):
        getattr(bases_module.Base, "update")(self, s, w)


class _ByClassDict(bases_module.Base):
    def update(self, s, w):
        bases_module.Base.__dict__["update"](self, s, w)


class _ByBases(bases_module.Base):
    def update(self, s, w):
        type(self).__bases__[0].update(self, s, w)


class _ByClassAttribute(bases_module.Base):
    parent = bases_module.Base

    def update(self, s, w):
        self.parent.update(self, s, w)


class _ByLoop(bases_module.Base):
    def update(self, s, w):
        for B in (bases_module.Base,):
            B.update(self, s, w)


class _ByMethodAlias(bases_module.Base):
    def update(self, s, w):
        up = bases_module.Base.update
        up(self, s, w)


_BASE_FORMS = [_ByModule, _ByLocal, _ByImportInside, _ByNestedClass, _ByGetattr, _ByClassDict,
               _ByBases, _ByClassAttribute, _ByLoop, _ByMethodAlias]


@pytest.mark.parametrize("where", ["held", "global", "argument"])
@pytest.mark.parametrize("cls", _BASE_FORMS, ids=lambda c: c.__name__)
def test_a_base_named_any_way_its_override_calls_it_is_followed(cls, where):
    """An override calling its base's version (``bases_module.Base.update(self,
    ...)``, through a local alias, a module imported inside, a nested class,
    ``getattr``, the class's ``__dict__``, ``__bases__``, a class attribute, a
    loop): what that version reads off the object (``self.lr``) replayed its first
    value; only a base named by a bare global or closure name was followed."""
    global _GLOBAL
    o = cls()
    if where == "held":
        m = _HoldsOne(o)
        call, w = m.step, m.w
    elif where == "global":
        _GLOBAL, w = o, dev(0, 0)
        def call():
            _global_step(w)
    else:
        w = dev(0, 0)
        def call():
            _argument_step(w, o, None)
    try:
        call()
        assert result(w) == [1.0, 1.0]
        o.lr = 7.0
        call()
        assert result(w) == [7.0, 7.0]
    finally:
        _GLOBAL = None


_KEPT_GAIN = 1.0


class _Other:
    def __init__(self):
        self.lr = 1.0

    def update(self, s, w):
        put[1, 2, s](w, self.lr * _KEPT_GAIN)


class _KeepsRunner:
    """Keeps a function the graph calls as ``o.fn(s, w)``, running on itself or on
    another object it holds; ``update`` counts its calls (state, not watched)."""

    def __init__(self, how):
        self.lr, self.calls, self.other = 1.0, 0, _Other()
        self.target = self.other if how.startswith("other") else self
        if how == "bound":
            self.fn = self.update
        elif how == "partial":
            self.fn = functools.partial(_KeepsRunner.update, self)
        elif how == "partial of the bound method":
            self.fn = functools.partial(self.update)
        elif how == "lambda":
            self.fn = lambda s, w: self.update(s, w)
        elif how == "lambda default":
            self.fn = lambda s, w, me=self: me.update(s, w)
        elif how == "dict":
            self.fns = {"u": self.update}
            self.fn = lambda s, w: self.fns["u"](s, w)
        elif how == "other bound":
            self.fn = self.other.update
        elif how == "other partial":
            self.fn = functools.partial(_Other.update, self.other)

    def update(self, s, w):
        self.calls += 1
        put[1, 2, s](w, self.lr * _KEPT_GAIN)


@gt.graph(backend="sim")
def _calls_kept(s, w, o):
    o.fn(s, w)


@pytest.mark.parametrize("how", ["bound", "partial", "partial of the bound method", "lambda",
                                 "lambda default", "dict", "other bound", "other partial"])
def test_what_a_function_kept_on_an_argument_object_reads_is_watched(how):
    """``o.fn = o.update`` (a partial, a lambda, a dict of them; another object's
    method) on an object passed as an argument: what ``update`` reads off its
    object (``lr``) and by a global name replayed the first values; the counter
    it keeps is state (traced once)."""
    global _KEPT_GAIN
    o, w = _KeepsRunner(how), dev(0, 0)
    before = _calls_kept.cache_info().misses
    _calls_kept(w, o)
    _calls_kept(w, o)
    assert result(w) == [1.0, 1.0] and _calls_kept.cache_info().misses == before + 1
    o.target.lr = 7.0
    _calls_kept(w, o)
    assert result(w) == [7.0, 7.0]
    _KEPT_GAIN = 2.0
    try:
        _calls_kept(w, o)
        assert result(w) == [14.0, 14.0]
    finally:
        _KEPT_GAIN = 1.0


@dataclasses.dataclass
class _Inner:
    lr: float = 1.0


@dataclasses.dataclass
class _Cfg:
    inner: _Inner = dataclasses.field(default_factory=_Inner)

    def as_tuple(self):
        return dataclasses.astuple(self)

    def as_vars(self):
        return vars(self.inner)


class _Bag:
    def __init__(self):
        self.inner = types.SimpleNamespace(lr=1.0)

    def as_vars(self):
        return vars(self.inner)


_WHOLE_READS = {   # (how the code reads the config whole, the class of the config)
    "astuple": ("dataclasses.astuple({c})[0][0]", _Cfg),
    "asdict": ("list(list(dataclasses.asdict({c}).values())[0].values())[0]", _Cfg),
    "fields": ("[getattr({c}.inner, f.name) for f in dataclasses.fields({c}.inner)][0]", _Cfg),
    "vars": ("list(vars({c}.inner).values())[0]", _Bag),
    "__dict__": ("list({c}.inner.__dict__.values())[0]", _Bag),
    "own method astuple": ("{c}.as_tuple()[0][0]", _Cfg),
    "own method vars": ("list({c}.as_vars().values())[0]", _Bag),
}
_WHOLE_CODE = '''
class Holds:
    def __init__(self, c):
        self.cfg, self.w = c, dev(0, 0)

    @gt.graph(backend="sim")
    def step(self, s):
        put[1, 2, s](self.w, {held})

@gt.graph(backend="sim")
def by_global(s, w):
    put[1, 2, s](w, {named})

@gt.graph(backend="sim")
def by_argument(s, w, c):
    put[1, 2, s](w, {passed})
'''


@pytest.mark.parametrize("where", ["held", "global", "argument"])
@pytest.mark.parametrize("how", list(_WHOLE_READS))
def test_a_config_read_whole_is_keyed_by_all_it_holds(how, where):
    """``dataclasses.astuple(self.cfg)``, ``asdict``, ``fields``, ``vars(cfg)``,
    ``cfg.__dict__``, or a method of the config doing ``astuple(self)``: no
    attribute name in the code says what is read, and ``lr`` replayed its first
    value (only an argument read by ``astuple`` in the graph's own code was keyed)."""
    expr, cls = _WHOLE_READS[how]
    scope = dict(globals())   # each form alone in its functions' code
    exec(_WHOLE_CODE.format(held=expr.format(c="self.cfg"), named=expr.format(c="CFG"),
                            passed=expr.format(c="c")), scope)
    c = cls()
    if where == "held":
        m = scope["Holds"](c)
        call, w = m.step, m.w
    elif where == "global":
        scope["CFG"], w = c, dev(0, 0)
        def call():
            scope["by_global"](w)
    else:
        w = dev(0, 0)
        def call():
            scope["by_argument"](w, c)
    call()
    assert result(w) == [1.0, 1.0]
    c.inner.lr = 7.0
    call()
    assert result(w) == [7.0, 7.0]


@dataclasses.dataclass
class _WholeSelf:
    lr: float = 1.0
    w: object = None

    @gt.graph(backend="sim")
    def step(self, s):
        put[1, 2, s](self.w, dataclasses.astuple(self)[0])


def test_a_method_reading_its_own_dataclass_whole_is_keyed_by_its_fields():
    """``dataclasses.astuple(self)`` in a graph method: ``self.lr`` replayed."""
    m = _WholeSelf(w=dev(0, 0))
    m.step()
    m.lr = 7.0
    m.step()
    assert result(m.w) == [7.0, 7.0]


class _Counter:
    """A host callback's object: the count it keeps is its state, never watched."""

    def __init__(self):
        self.n = 0

    def record(self, h):
        self.n += 1


class _Step:
    def __init__(self):
        self.lr = 1.0

    def update(self, s, w):
        put[1, 2, s](w, self.lr)


_SINK, _OPT = _Counter(), _Step()
_TABLE = {"log": _SINK.record, "sgd": _OPT.update}
_REGISTRY = {"log": _SINK.record, "opt": _OPT}
_CALLBACKS, _UPDATES = [_SINK.record], [_OPT.update]


def _by_keys(s, w, h):
    s.host(_TABLE["log"], h)
    _TABLE["sgd"](s, w)


def _by_local(s, w, h):
    cb = _TABLE["log"]
    s.host(cb, h)
    _TABLE["sgd"](s, w)


def _by_get(s, w, h):
    s.host(_TABLE.get("log"), h)
    _TABLE.get("sgd")(s, w)


def _by_registry(s, w, h):
    cb = _REGISTRY["log"]
    s.host(cb, h)
    _REGISTRY["opt"].update(s, w)


def _loop_variable_reused(s, w, h):
    for fn in _CALLBACKS:
        s.host(fn, h)
    for fn in _UPDATES:
        fn(s, w)


def _by_comprehension(s, w, h):
    [s.host(cb, h) for cb in _CALLBACKS]
    [op(s, w) for op in _UPDATES]


_HANDING = [_by_keys, _by_local, _by_get, _by_registry, _loop_variable_reused,
            _by_comprehension]


@pytest.mark.parametrize("form", _HANDING, ids=lambda f: f.__name__)
def test_a_container_of_callbacks_and_methods_held_by_a_name_is_told_apart(form):
    """``s.host(TABLE["log"], h)`` beside ``TABLE["sgd"](s, w)`` (a local taking the
    callback, ``.get``, a dict of a callback and an object, one loop variable for
    the callbacks' loop and then the optimizers'): handing one item to ``s.host``
    left the whole container out, and ``OPT.lr`` replayed its first value; the
    callback's count stays its state (one trace per setting)."""
    g = gt.graph(form, backend="sim")
    w, h = dev(0, 0), gt.pinned_empty(2)
    _SINK.n = 0
    try:
        for _ in range(3):
            g(w, h)
        assert result(w) == [1.0, 1.0] and g.cache_info().misses == 1
        _OPT.lr = 7.0
        for _ in range(2):
            g(w, h)
        assert result(w) == [7.0, 7.0] and g.cache_info().misses == 2 and _SINK.n == 5
    finally:
        _OPT.lr = 1.0


class _Hooks:
    def __init__(self, how):
        self.lr, self.n, self.w = 1.0, 0, dev(0, 0)
        self.sink, self.opt = _Counter(), _Step()
        self.how = how
        if how == "methods of self":
            self.hooks = {"log": self.record, "upd": self.update}
        else:
            self.hooks = {"log": self.sink.record, "upd": self.opt.update}

    def record(self, h):
        self.n += 1

    def update(self, s, w):
        put[1, 2, s](w, self.lr)

    @gt.graph(backend="sim")
    def step(self, s, h):
        s.host(self.hooks["log"], h)
        self.hooks["upd"](s, self.w)


@pytest.mark.parametrize("how", ["methods of self", "methods of held objects"])
def test_a_container_of_callbacks_and_methods_self_holds_is_told_apart(how):
    """``self.hooks = {"log": self.record, "upd": self.update}`` with ``s.host(
    self.hooks["log"], h)`` and ``self.hooks["upd"](s, w)``: update's ``self.lr``
    replayed its first value; the callback's count is its state."""
    m = _Hooks(how)
    target, counter = (m, m) if how == "methods of self" else (m.opt, m.sink)
    h, before = gt.pinned_empty(2), _Hooks.step.cache_info().misses
    for _ in range(3):
        m.step(h)
    assert result(m.w) == [1.0, 1.0] and _Hooks.step.cache_info().misses == before + 1
    target.lr = 7.0
    for _ in range(2):
        m.step(h)
    assert result(m.w) == [7.0, 7.0] and counter.n == 5
    assert _Hooks.step.cache_info().misses == before + 2


class _ArgumentHooks:
    def __init__(self):
        self.sink, self.opt = _Counter(), _Step()
        self.hooks = {"log": self.sink.record, "upd": self.opt.update}
        self.fn = self.sink.record


@gt.graph(backend="sim")
def _argument_hooks(s, w, h, c):
    s.host(c.hooks["log"], h)
    s.host(c.fn, h)
    c.hooks["upd"](s, w)


def test_a_container_of_callbacks_and_methods_an_argument_holds_is_told_apart():
    """The same on an object passed as an argument: the callbacks' count (their
    state) traced anew at every call."""
    c, w, h = _ArgumentHooks(), dev(0, 0), gt.pinned_empty(2)
    before = _argument_hooks.cache_info().misses
    for _ in range(3):
        _argument_hooks(w, h, c)
    assert result(w) == [1.0, 1.0] and _argument_hooks.cache_info().misses == before + 1
    c.opt.lr = 7.0
    for _ in range(2):
        _argument_hooks(w, h, c)
    assert result(w) == [7.0, 7.0] and c.sink.n == 10
    assert _argument_hooks.cache_info().misses == before + 2


class _ImportsInside:
    def __init__(self, how):
        self.how, self.w = how, dev(0, 0)

    @gt.graph(backend="sim")
    def step(self, s):
        if self.how == "import as":
            import bases_module as bm
            put[1, 2, s](self.w, bm.SCALE)
        else:
            from bases_module import SCALE
            put[1, 2, s](self.w, SCALE)


@pytest.mark.parametrize("how", ["import as", "from import"])
def test_a_module_a_graph_method_imports_itself_is_watched_on_repeated_calls(how):
    """``import bases_module as bm`` inside a graph method reading ``bm.SCALE``: the
    identity snapshots a method's repeated call is checked by (``guard.py``) saw
    the method's globals only, and the new value replayed the first."""
    m = _ImportsInside(how)
    for _ in range(3):
        m.step()
    assert result(m.w) == [1.0, 1.0]
    bases_module.SCALE = 7.0
    try:
        m.step()
        m.step()
        assert result(m.w) == [7.0, 7.0]
    finally:
        bases_module.SCALE = 1.0


_GAIN = 1.0


class _GainStep(_Step):
    def update(self, s, w):
        put[1, 2, s](w, self.lr * _GAIN)


_FAST_OPT = _GainStep()
_FAST_TABLE = {"sgd": _FAST_OPT.update}


@gt.graph(backend="sim")
def _through_table(s, w):
    _FAST_TABLE["sgd"](s, w)


def _set_lr():
    _FAST_OPT.lr = 7.0


def _other_optimizer():
    other = _GainStep()
    other.lr = 7.0
    _FAST_TABLE["sgd"] = other.update


def _gain():
    global _GAIN
    _GAIN = 7.0


def _seven(self, s, w):
    put[1, 2, s](w, 7.0)


def _code_anew():   # as %autoreload 2 does
    _GainStep.update.__code__ = _seven.__code__


@pytest.mark.parametrize("change", [_set_lr, _other_optimizer, _gain, _code_anew],
                         ids=lambda f: f.__name__)
def test_a_function_whose_names_hold_objects_takes_the_short_call_and_sees_each_change(
        change, monkeypatch):
    """A function calling ``TABLE["sgd"](s, w)`` took the full check (walking the
    objects its names hold) at every call; its repeated calls are now checked by
    identity snapshots (``guard.py``), as a method's are, which still see a setting
    changed, another optimizer put in the table, a global the method reads and the
    method's code replaced in place."""
    global _GAIN
    from graphtrace.holding import Holdings
    walks = []
    real = Holdings.walk
    monkeypatch.setattr(Holdings, "walk", lambda self, o: walks.append(1) or real(self, o))
    monkeypatch.setattr(_GainStep.update, "__code__", _GainStep.update.__code__)   # (put back)
    w = dev(0, 0)
    _through_table.clear_cache()
    try:
        _through_table(w)
        _through_table(w)   # (a full check, which takes the snapshots)
        before = len(walks)
        for _ in range(3):
            _through_table(w)
        assert len(walks) == before and result(w) == [1.0, 1.0]
        change()
        _through_table(w)
        assert result(w) == [7.0, 7.0]
    finally:
        _FAST_OPT.lr, _GAIN, _FAST_TABLE["sgd"] = 1.0, 1.0, _FAST_OPT.update


@gt.graph(backend="sim")
def _reads_a_config_whole(s, w, cfg):
    put[1, 2, s](w, dataclasses.astuple(cfg)[0][0])


def test_a_function_of_the_standard_library_a_graph_calls_is_not_walked():
    """``dataclasses.astuple(cfg)``: the walk of what the names reach went into the
    standard library's function and all it names, which every call then checked
    (a millisecond a call); it reads no name of the program's."""
    c, w = _Cfg(), dev(0, 0)
    _reads_a_config_whole(w, c)
    walked = [fn.__module__ for fn in _reads_a_config_whole._holdings.reach._walked]
    assert "dataclasses" not in walked and "copy" not in walked, walked
    c.inner.lr = 7.0
    _reads_a_config_whole(w, c)
    assert result(w) == [7.0, 7.0]


@gt.graph(backend="sim")
def _pops_one(s, w, h):
    s.host(_TABLE["log"], h)
    _TABLE.copy().pop("sgd")(s, w)


def test_an_item_a_method_of_the_container_takes_is_used():
    """``TABLE.copy().pop("sgd")(s, w)`` beside ``s.host(TABLE["log"], h)``: a method
    read off the container may take any item, so none is a callback alone."""
    w, h = dev(0, 0), gt.pinned_empty(2)
    try:
        _pops_one(w, h)
        _OPT.lr = 7.0
        _pops_one(w, h)
        assert result(w) == [7.0, 7.0]
    finally:
        _OPT.lr = 1.0


class _Handed:   # (a class of its own: no other test's table holds its methods)
    def __init__(self):
        self.lr = 1.0

    def update(self, s, w):
        put[1, 2, s](w, self.lr)


_HANDED = _Handed()


def _sgd(opt, s, w):
    put[1, 2, s](w, opt.lr)


_UPDATES_BY_NAME = {"sgd": _sgd}
_CLASS_FUNCTIONS = {"sgd": _Handed.update}

_HANDING_WHOLE = {
    "helper by name": "_sgd(_HANDED, s, w)",
    "helper in a dict": "_UPDATES_BY_NAME['sgd'](_HANDED, s, w)",
    "class function in a dict": "_CLASS_FUNCTIONS['sgd'](_HANDED, s, w)",
    "getattr": "getattr(_HANDED, 'update')(s, w)",
    "attrgetter": "operator.attrgetter('update')(_HANDED)(s, w)",
    "methodcaller": "operator.methodcaller('update', s, w)(_HANDED)",
}


@pytest.mark.parametrize("how", list(_HANDING_WHOLE))
def test_a_global_object_handed_whole_to_a_function_is_keyed_by_what_it_reads(how):
    """``sgd(OPT, s, w)`` reading ``opt.lr`` (a helper by name or from a dict, a
    class's function), ``getattr(OPT, "update")``, ``attrgetter``,
    ``methodcaller``: an object holding settings alone was left to the chains the
    code reads off its name, and none says ``lr``: the first value replayed."""
    scope = dict(globals(), operator=operator)
    exec(f"@gt.graph(backend='sim')\ndef g(s, w):\n    {_HANDING_WHOLE[how]}\n", scope)
    w = dev(0, 0)
    try:
        scope["g"](w)
        assert result(w) == [1.0, 1.0]
        _HANDED.lr = 7.0
        scope["g"](w)
        assert result(w) == [7.0, 7.0]
    finally:
        _HANDED.lr = 1.0
