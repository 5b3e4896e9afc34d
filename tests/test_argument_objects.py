"""Objects of the program's own passed as arguments (configs), as the cache key
holds them: what the code reads off them by value, the rest by identity, held.

On the simulator, where results can be read back: a stale graph replays the
value it baked in.
"""
import collections
import dataclasses
import enum
import functools
import gc
import logging
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


def dev(*values):
    return cuda.to_device(np.array(values, dtype=np.float64))


def result(a):
    return a.copy_to_host().tolist()


class _Cfg:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class _Sub:
    def __init__(self, lr):
        self.lr = lr


class _Dict(dict):
    pass


class _List(list):
    pass


def _set_lr(hp):
    hp["lr"] = 2.0


# (what cfg.hp holds, how it changes in place, what the graph reads of it)
CONTAINERS = {
    "OrderedDict": (lambda: collections.OrderedDict(lr=1.0), _set_lr, lambda hp: hp["lr"]),
    "defaultdict": (lambda: collections.defaultdict(float, lr=1.0), _set_lr,
                    lambda hp: hp["lr"]),
    "dict subclass": (lambda: _Dict(lr=1.0), _set_lr, lambda hp: hp["lr"]),
    "nested dict": (lambda: {"opt": {"lr": [1.0]}}, lambda hp: hp["opt"]["lr"].__setitem__(
        0, 2.0), lambda hp: hp["opt"]["lr"][0]),
    "list subclass": (lambda: _List([1.0]), lambda hp: hp.__setitem__(0, 2.0),
                      lambda hp: hp[0]),
    "deque": (lambda: collections.deque([0.0, 1.0]), lambda hp: hp.append(2.0),
              lambda hp: hp[-1]),
    "set": (lambda: {"one"}, lambda hp: (hp.discard("one"), hp.add("two")),
            lambda hp: 1.0 if "one" in hp else 2.0),
    "tuple of lists": (lambda: ([1.0], "x"), lambda hp: hp[0].__setitem__(0, 2.0),
                       lambda hp: hp[0][0]),
    "list of configs": (lambda: [_Sub(1.0)], lambda hp: setattr(hp[0], "lr", 2.0),
                        lambda hp: hp[0].lr),
}


@pytest.mark.parametrize("case", list(CONTAINERS))
def test_a_container_an_argument_object_holds_is_keyed_by_value(case):
    """An ``OrderedDict``, a set, a deque... on a config, changed in place, replayed
    the old value: only exact lists and dicts were keyed by value, the rest by id."""
    make, change, read = CONTAINERS[case]

    @gt.graph(backend="sim")
    def step(s, out, cfg):
        put[1, 2, s](out, read(cfg.hp))

    out, cfg = dev(0.0, 0.0), _Cfg(hp=make())
    step(out, cfg)
    assert result(out) == [1.0, 1.0]
    step(out, cfg)
    assert step.cache_info().misses == 1   # the same values: the same graph
    change(cfg.hp)
    step(out, cfg)
    assert result(out) == [2.0, 2.0]


@gt.graph(backend="sim")
def _coefficient(s, out, cfg):
    put[1, 2, s](out, float(cfg.coef[0]))


def test_an_object_keyed_by_identity_is_held_so_its_id_finds_no_stale_graph():
    """An attribute keyed by ``id()`` alone (a host array) let a new object given
    the id of a freed one replay the graph baked with the freed one's values."""
    out, cfg = dev(0.0, 0.0), _Cfg(coef=np.array([1.0]))
    for k in range(1, 9):
        cfg.coef = np.array([float(k)])   # the old one freed: its id free for reuse
        gc.collect()
        _coefficient(out, cfg)
        assert result(out) == [float(k)] * 2


@dataclasses.dataclass
class _Mutable:
    lr: float = 1.0


class _Equal:
    def __init__(self, lr):
        self.lr = lr

    def __eq__(self, other):   # and no __hash__: unhashable
        return isinstance(other, _Equal) and other.lr == self.lr


@dataclasses.dataclass(frozen=True)
class _Frozen:
    lr: float = 1.0
    scale: float = 1.0

    def rate(self):   # reads what the graph function does not name
        return self.lr * self.scale


@dataclasses.dataclass(frozen=True, eq=False)
class _FrozenCoef:
    coef: np.ndarray

    def __eq__(self, other):
        return isinstance(other, _FrozenCoef) and np.array_equal(other.coef, self.coef)

    def __hash__(self):
        return hash(self.coef.tobytes())


class _Loose:
    """Equal where the names are: ``lr`` is left out of ``__eq__``."""

    def __init__(self, name, lr):
        self.name, self.lr = name, lr

    def __eq__(self, other):
        return isinstance(other, _Loose) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


@gt.graph(backend="sim")
def _rate(s, out, cfg):
    put[1, 2, s](out, cfg.lr)


@gt.graph(backend="sim")
def _method_rate(s, out, cfg):
    put[1, 2, s](out, cfg.rate())


@pytest.mark.parametrize("make", [_Mutable, _Equal, lambda lr: types.SimpleNamespace(lr=lr)],
                         ids=["dataclass", "__eq__ without __hash__", "SimpleNamespace"])
def test_an_unhashable_argument_object_is_keyed_like_any_other(make):
    """A plain ``@dataclass`` config (``__hash__ = None``) was refused as unhashable."""
    _rate.clear_cache()
    out, cfg = dev(0.0, 0.0), make(1.0)
    _rate(out, cfg)
    assert result(out) == [1.0, 1.0]
    cfg.lr = 2.0
    _rate(out, cfg)
    assert result(out) == [2.0, 2.0]
    _rate(out, make(3.0))
    assert result(out) == [3.0, 3.0]


def test_an_equal_frozen_config_made_at_every_call_finds_its_graph():
    """A frozen dataclass built anew at every call (``step(x, Cfg(0.5))``) traced
    at every call: it was keyed by identity."""
    out = dev(0.0, 0.0)
    for _ in range(4):
        _method_rate(out, _Frozen(0.5))
    assert _method_rate.cache_info().misses == 1 and result(out) == [0.5, 0.5]
    _method_rate(out, _Frozen(0.5, scale=2.0))   # read by its method alone
    assert result(out) == [1.0, 1.0]
    _method_rate(out, _Frozen(0.5))
    assert _method_rate.cache_info().misses == 2 and result(out) == [0.5, 0.5]


def test_a_config_equal_by_its_own_eq_is_keyed_by_its_values():
    """A class whose ``__eq__`` leaves a field out finds no graph baked with another
    value of that field."""
    _rate.clear_cache()
    out = dev(0.0, 0.0)
    _rate(out, _Loose("a", 1.0))
    _rate(out, _Loose("a", 2.0))
    assert result(out) == [2.0, 2.0]


def test_a_frozen_config_holding_an_object_is_keyed_by_identity():
    """A hashable config holding what is no value (a host array) is the object
    itself in the key, as any other: another one traces anew."""
    out, before = dev(0.0, 0.0), _coefficient.cache_info().misses
    a, b = _FrozenCoef(np.array([1.0])), _FrozenCoef(np.array([1.0]))
    _coefficient(out, a)
    _coefficient(out, a)
    _coefficient(out, b)
    assert _coefficient.cache_info().misses - before == 2


def test_the_log_says_which_value_of_an_argument_object_changed(caplog):
    """The log's diff of two keys failed on an argument object's entry."""
    caplog.set_level(logging.INFO, logger="graphtrace")
    _rate.clear_cache()
    out, cfg = dev(0.0, 0.0), _Cfg(lr=1.0)
    _rate(out, cfg)
    cfg.lr = 2.0
    _rate(out, cfg)
    _rate(out, _Cfg(lr=2.0))
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("trace _rate")]
    assert said[1].endswith("cfg.lr: 1.0 -> 2.0") and said[2].endswith("cfg: another object")


def _weighted(coefs, scale=1.0):
    return sum(coefs) * scale


def _weighted_twice(coefs, scale=1.0):
    return 2 * sum(coefs) * scale


@gt.graph(backend="sim")
def _by_partial(s, out, fn):
    put[1, 2, s](out, fn())


def test_the_log_says_which_value_a_partial_argument_holds_changed(caplog):
    """A partial passed as an argument, keyed by the values it holds, is diffed
    like an argument object: its key's entry was taken for an array's."""
    caplog.set_level(logging.INFO, logger="graphtrace")
    out, fn = dev(0.0, 0.0), functools.partial(_weighted, [1.0], scale=1.0)
    _by_partial(out, fn)
    fn.keywords["scale"] = 2.0
    _by_partial(out, fn)
    _by_partial(out, functools.partial(_weighted, [1.0], scale=2.0))   # equal: its graph
    _by_partial(out, functools.partial(_weighted_twice, [1.0], scale=2.0))
    assert result(out) == [4.0, 4.0]
    said = [r.getMessage() for r in caplog.records
            if r.getMessage().startswith("trace _by_partial")]
    assert len(said) == 3
    assert said[1].endswith("fn.scale: 1.0 -> 2.0") and said[2].endswith("fn: another object")


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1.0


@gt.graph(backend="sim", static=("reps",))
def _repeated(s, x, reps):
    for _ in range(reps[0] if isinstance(reps, list) else reps):
        add_one[1, 2, s](x)


@gt.graph(backend="sim")
def _dynamic_outer(s, x, reps):
    _repeated(s, x, reps)                                    # inner call


@gt.graph(backend="sim")
def _dynamic_outer_list(s, x, reps):
    _repeated(s, x, [reps])                                  # inner list call


@gt.graph(backend="sim", static=("reps",))
def _static_outer(s, x, reps):
    _repeated(s, x, reps)


@pytest.mark.parametrize("outer, marker", [(_dynamic_outer, "inner call"),
                                           (_dynamic_outer_list, "inner list call")])
def test_a_nested_static_parameter_given_a_dynamic_scalar_names_the_outer_function(
        outer, marker):
    """The error said to add static=('reps',) to the nested function, which had it:
    the scalar is the outer function's parameter, which must be static."""
    with pytest.raises(gt.DynamicScalarError) as e:
        outer(dev(0.0, 0.0), 2)
    line = next(i for i, text in enumerate(open(__file__), 1) if f"# {marker}" in text)
    assert e.value.source[1] == line
    assert "_repeated takes 'reps' as static" in str(e.value)
    assert f"a dynamic scalar of {outer.__name__}" in str(e.value)
    assert f"in {outer.__name__}'s @graph(static=('reps',))" in str(e.value)
    x = dev(0.0, 0.0)
    _static_outer(x, 2)
    _static_outer(x, 3)
    assert result(x) == [5.0, 5.0]


def test_a_dynamic_scalar_used_in_a_helper_names_its_function():
    @gt.graph(backend="sim")
    def stepped(s, x, n):
        _repeated(s, x, 2)
        add_one[1, int(n), s](x)

    with pytest.raises(gt.DynamicScalarError, match="dynamic scalar of stepped: .* in "
                       r"stepped's @graph\(static=\('n',\)\)"):
        stepped(dev(0.0, 0.0), 2)


def test_the_retrace_warning_names_a_number_that_is_sometimes_a_bool():
    """A parameter given numbers of several types and bools (static) was blamed on
    the aliasing of arrays."""
    @gt.graph(backend="sim")
    def scaled(s, x, a):
        put[1, 2, s](x, a)

    x = dev(0.0, 0.0)
    values = [1.0, np.float64(2.0), True, False, np.float32(3.0), 4, np.int64(5),
              np.int32(6), np.float16(7.0)]
    with pytest.warns(gt.RetraceWarning) as rec:
        for a in values:
            scaled(x, a)
    message = str(rec[0].message)
    assert "the type of the number(s) a keeps changing (float, numpy.float64, bool" in message
    assert "a bool is static" in message and "aliasing" not in message


@dataclasses.dataclass
class _LearningRate:
    lr: float


def test_the_retrace_warning_says_an_equal_config_made_anew_at_every_call_is_keyed_by_identity():
    """An equal object of a non-frozen class made at every call traces every call:
    the warning says to keep one object or make the class frozen, not to keep
    shapes and dtypes fixed."""
    @gt.graph(backend="sim")
    def scaled(s, x, cfg):
        put[1, 2, s](x, cfg.lr)

    x = dev(0.0, 0.0)
    with pytest.warns(gt.RetraceWarning) as rec:
        for _ in range(12):
            scaled(x, _LearningRate(2.0))
    message = str(rec[0].message)
    assert "argument(s) cfg are objects of the program's own" in message
    assert "frozen dataclass" in message and "keep shapes" not in message

    @gt.graph(backend="sim")
    def again(s, x, cfg):
        put[1, 2, s](x, cfg.lr)

    kept = _LearningRate(1.0)   # one object whose value keeps changing: the usual advice
    with pytest.warns(gt.RetraceWarning) as rec:
        for k in range(12):
            kept.lr = float(k)
            again(x, kept)
    assert "objects of the program's own" not in str(rec[0].message)


class _Scaled:
    scale = 1.0   # read through the object, held by the class

    def __init__(self):
        self.base, self.calls = 1.0, 0

    def rate(self):   # what the graph function does not name: base, scale
        self.calls += 1   # a counter the method keeps: not keyed
        return self.base * self.scale


@dataclasses.dataclass(frozen=True)
class _FrozenScaled:
    lr: float = 1.0
    scale = 1.0


@gt.graph(backend="sim")
def _scaled(s, out, cfg):
    put[1, 2, s](out, cfg.scale)


@gt.graph(backend="sim")
def _rated(s, out, cfg):
    put[1, 2, s](out, cfg.rate())


@pytest.mark.parametrize("make", [_Scaled, _FrozenScaled])
def test_a_value_the_class_of_an_argument_object_holds_is_keyed(make):
    """``Cfg.scale = 2.0``, read as ``cfg.scale``, replayed the old value: the key
    held the object's own attributes alone."""
    out, cfg = dev(0.0, 0.0), make()
    _scaled(out, cfg)
    type(cfg).scale = 2.0
    try:
        _scaled(out, cfg)
    finally:
        type(cfg).scale = 1.0
    assert result(out) == [2.0, 2.0]


def test_what_the_methods_of_an_argument_object_read_is_keyed():
    """``cfg.rate()`` reading ``self.base`` and ``Cfg.scale``: a change to either
    replayed the old rate; the counter the method keeps traces nothing anew."""
    out, cfg, before = dev(0.0, 0.0), _Scaled(), _rated.cache_info().misses
    _rated(out, cfg)
    cfg.calls += 5
    _rated(out, cfg)
    assert _rated.cache_info().misses - before == 1
    cfg.base = 3.0
    _rated(out, cfg)
    assert result(out) == [3.0, 3.0]
    _Scaled.scale = 2.0
    try:
        _rated(out, cfg)
    finally:
        _Scaled.scale = 1.0
    assert result(out) == [6.0, 6.0]


class _Rate:
    def __init__(self, base):
        self.base = base

    def rate(self):
        return self.base_rate()

    def base_rate(self):
        return self.base


class _RateMixin:
    def rate(self):
        return self.base


class _RateByBase(_Rate):
    def rate(self):
        return _Rate.rate(self)   # the base's version, called explicitly


class _RateBySuper(_Rate):
    def rate(self):
        return super().rate()


class _RateByMixin(_Rate, _RateMixin):
    def rate(self):
        return _RateMixin.rate(self)


class _RateByOther(_Rate):
    def base_rate(self):   # overridden: reads nothing
        return 0.0

    def rate(self):
        return _Rate.base_rate(self)   # the base's, not this class's


@gt.graph(backend="sim")
def _rate_of(s, out, cfg):
    put[1, 2, s](out, cfg.rate())


@pytest.mark.parametrize("make", [_RateByBase, _RateBySuper, _RateByMixin, _RateByOther])
def test_what_a_bases_method_an_argument_objects_override_calls_reads_is_keyed(make):
    """An override calling its base's version (``Base.rate(self)``, ``super().rate()``,
    a mixin's, the base's version of another method the class overrides):
    ``cfg.base`` changed replayed the old rate."""
    out, cfg = dev(0.0, 0.0), make(1.0)
    _rate_of(out, cfg)
    assert result(out) == [1.0, 1.0]
    cfg.base = 3.0
    _rate_of(out, cfg)
    assert result(out) == [3.0, 3.0]


@dataclasses.dataclass
class _Pair:
    lr: float = 1.0
    beta: float = 0.0


@gt.graph(backend="sim")
def _by_astuple(s, out, cfg):
    lr, beta = dataclasses.astuple(cfg)
    put[1, 2, s](out, lr + beta)


@gt.graph(backend="sim")
def _by_fields(s, out, cfg):
    put[1, 2, s](out, sum(getattr(cfg, f.name) for f in dataclasses.fields(cfg)))


@pytest.mark.parametrize("step", [_by_astuple, _by_fields])
def test_a_dataclass_argument_read_whole_is_keyed_by_every_field(step):
    """``lr, beta = astuple(cfg)`` (or a loop over ``fields(cfg)``) names no
    field: the first ``lr`` replayed."""
    out, cfg = dev(0.0, 0.0), _Pair()
    step(out, cfg)
    assert result(out) == [1.0, 1.0]
    cfg.lr = 3.0
    step(out, cfg)
    assert result(out) == [3.0, 3.0]


class _Op:   # what syntax runs on it reads self.c: __call__, indexing, float(), __getattr__
    def __init__(self, c):
        self.c = c

    def __call__(self, s, out):
        put[1, 2, s](out, self.c)

    def __getitem__(self, k):
        return self.c * (k + 1)

    def __float__(self):
        return self.c * 10.0

    def __getattr__(self, name):
        if name == "decay":
            return self.c * 100.0
        raise AttributeError(name)

    @gt.graph(backend="sim")
    def step(self, s, out):   # a graph method, called inline from another graph
        put[1, 2, s](out, self.c * 1000.0)


@gt.graph(backend="sim")
def _run_op(s, op, out, how):
    if how == "call":
        op(s, out)
    elif how == "index":
        put[1, 2, s](out, op[1])
    elif how == "float":
        put[1, 2, s](out, float(op))
    elif how == "getattr":
        put[1, 2, s](out, op.decay)
    elif how == "graph method":
        op.step(s, out)
    else:
        s.child(op.step, out)


@pytest.mark.parametrize("how, scale", [("call", 1.0), ("index", 2.0), ("float", 10.0),
                                        ("getattr", 100.0), ("graph method", 1000.0),
                                        ("child graph method", 1000.0)])
def test_what_syntax_and_graph_methods_of_an_argument_object_read_is_keyed(how, scale):
    """``op(s, x)`` (its ``__call__``), ``op[1]``, ``float(op)``, ``op.decay`` served
    by ``__getattr__``, and a graph method of it called inline or as a child graph
    read ``op.c``: changing it replayed the first value."""
    op, out = _Op(1.0), dev(0.0, 0.0)
    for c in (1.0, 2.0, 3.0):
        op.c = c
        _run_op(op, out, how)
        assert result(out) == [c * scale] * 2, (how, c)


class _Model:
    def __init__(self, c):
        self.c = c
        self.out = dev(0.0, 0.0)

    def __call__(self, s):
        put[1, 2, s](self.out, self.c)

    def __getitem__(self, k):
        return self.c * 2.0

    @gt.graph(backend="sim")
    def forward(self, s):   # self(s): __call__; self[0]: __getitem__
        self(s)

    @gt.graph(backend="sim")
    def indexed(self, s):
        put[1, 2, s](self.out, self[0])


@pytest.mark.parametrize("method, scale", [("forward", 1.0), ("indexed", 2.0)])
def test_what_syntax_run_on_self_reads_is_keyed(method, scale):
    m = _Model(1.0)
    for c in (1.0, 2.0, 3.0):
        m.c = c
        getattr(m, method)()
        assert result(m.out) == [c * scale] * 2, (method, c)


_C = 1.0


def _add_global(s, out):   # reads a global number
    put[1, 2, s](out, _C)


def _closure_adder():
    c = 1.0

    def add(s, out):
        put[1, 2, s](out, c)

    def set_c(v):
        nonlocal c
        c = v
    return add, set_c


@gt.graph(backend="sim")
def _apply(s, op, out):
    op(s, out)


def _coef():   # a helper reading a global number
    return _C


_SETTINGS = types.SimpleNamespace(c=1.0)


def _add_by_helper(s, out):
    put[1, 2, s](out, _coef())


def _add_by_settings(s, out):   # a global object's attribute
    put[1, 2, s](out, _SETTINGS.c)


@pytest.mark.parametrize("how", ["global", "closure", "bound method", "lambda", "helper",
                                 "settings", "partial"])
def test_what_a_function_passed_as_an_argument_reads_is_keyed(how):
    """A function handed to the graph function reading a number by a global or
    closure name, or off its bound object, replayed the first number (in a
    partial holding no arguments, the very same call did)."""
    global _C
    add, set_c = _closure_adder()
    model = _Op(1.0)
    op = {"global": _add_global, "closure": add, "bound method": model.__call__,
          "lambda": lambda s, out: put[1, 2, s](out, _C * 2.0), "helper": _add_by_helper,
          "settings": _add_by_settings, "partial": functools.partial(_add_global)}[how]
    out, scale = dev(0.0, 0.0), 2.0 if how == "lambda" else 1.0
    try:
        for c in (1.0, 2.0, 3.0, 3.0):
            _C = _SETTINGS.c = c
            set_c(c)
            model.c = c
            _apply(op, out)   # the same function object every call
            assert result(out) == [c * scale] * 2, (how, c)
    finally:
        _C = _SETTINGS.c = 1.0


@gt.graph(backend="sim")
def _graph_add_global(s, out):   # reads a global number
    put[1, 2, s](out, _C)


@gt.graph(backend="sim")
def _apply_as(s, op, out, how):
    if how == "child":
        s.child(op, out)
    elif how == "list":
        op[0](s, out)
    else:
        op(s, out)


@pytest.mark.parametrize("how", ["call", "child", "list", "partial", "closure", "bound"])
def test_what_a_graph_function_passed_as_an_argument_reads_is_keyed(how):
    """A graph function passed as an argument (called, as a child graph, in a list,
    in a partial; one reading a closure number; ``gt.graph(obj.method)`` reading
    ``self.c``) was keyed by identity alone: a changed global replayed the first
    value."""
    global _C
    add, set_c = _closure_adder()
    model = _Op(1.0)
    op = {"call": _graph_add_global, "child": _graph_add_global, "list": [_graph_add_global],
          "partial": functools.partial(_graph_add_global), "closure": gt.graph(add),
          "bound": gt.graph(model.__call__)}[how]
    out = dev(0.0, 0.0)
    try:
        for c in (1.0, 2.0, 3.0, 3.0):
            _C = model.c = c
            set_c(c)
            _apply_as(op, out, how)   # the same function object every call
            assert result(out) == [c] * 2, (how, c)
    finally:
        _C = 1.0


_BASE = 1.0


class _ReadsBase:   # what syntax, its methods and its property run reads the global _BASE
    def __init__(self):
        self.k = 2.0

    def __call__(self, s, out):
        put[1, 2, s](out, _BASE * self.k)

    def rate(self):
        return _BASE * self.k

    @property
    def prop(self):
        return _BASE + self.k

    @classmethod
    def crate(cls):
        return _BASE * 3.0

    @staticmethod
    def srate():
        return _BASE * 4.0

    def launch(self, s, out):
        put[1, 2, s](out, _BASE)


@dataclasses.dataclass(frozen=True)
class _FrozenBase:   # keyed by its values: an equal one finds its graph
    k: float = 2.0

    def rate(self):
        return _BASE * self.k


_BASE_MODULE = types.ModuleType("module_of_the_program")
exec("BASE = 1.0\ndef rate():\n    return BASE * 5.0\n", vars(_BASE_MODULE))


@gt.graph(backend="sim")
def _by_base(s, out, obj, how):
    if how == "call":
        obj(s, out)
    elif how == "property":
        put[1, 2, s](out, obj.prop)
    elif how == "classmethod":
        put[1, 2, s](out, obj.crate())
    elif how == "staticmethod":
        put[1, 2, s](out, obj.srate())
    elif how == "launching method":
        obj.launch(s, out)
    elif how == "class":
        put[1, 2, s](out, obj.rate(obj()))
    else:   # a method, a module's function
        put[1, 2, s](out, obj.rate())


@pytest.mark.parametrize("how, want", [
    ("call", lambda b: b * 2.0), ("method", lambda b: b * 2.0), ("property", lambda b: b + 2.0),
    ("classmethod", lambda b: b * 3.0), ("staticmethod", lambda b: b * 4.0),
    ("launching method", lambda b: b), ("class", lambda b: b * 2.0),
    ("module", lambda b: b * 5.0), ("frozen", lambda b: b * 2.0)])
def test_what_the_methods_of_an_argument_object_read_by_global_names_is_keyed(how, want):
    """An object passed as an argument whose ``__call__``, method, property, class
    or static method the graph runs reads a global number (so does a class
    passed, a module's function, a frozen dataclass's method): the names it read
    were keyed off the object,
    not the globals its methods read, and a changed global replayed the first
    value."""
    global _BASE
    obj = {"class": _ReadsBase, "module": _BASE_MODULE, "frozen": _FrozenBase()}.get(how) or \
        _ReadsBase()
    out = dev(0.0, 0.0)
    try:
        for b in (1.0, 2.0, 3.0, 3.0):
            _BASE = _BASE_MODULE.BASE = b
            _by_base(out, obj, how)   # the same object every call
            assert result(out) == [want(b)] * 2, (how, b)
    finally:
        _BASE = _BASE_MODULE.BASE = 1.0


class _RateCfg:
    LR = 1.0

    @classmethod
    def rate(cls):
        return cls.LR * 2


_SETTINGS = types.ModuleType("settings_of_the_program")
_SETTINGS.LR = 1.0


def test_a_class_or_module_passed_as_an_argument_is_keyed_by_the_values_read_off_it():
    """``step(out, Cfg)`` reading ``cfg.LR`` (or ``cfg.rate()`` reading ``cls.LR``):
    a class or module argument was keyed by identity alone, so a new ``LR``
    replayed the first graph, the very same call or not."""
    @gt.graph(backend="sim")
    def step(s, out, cfg, how):
        put[1, 2, s](out, cfg.rate() if how == "method" else cfg.LR)

    out = dev(0.0, 0.0)
    try:
        for lr in (1.0, 3.0, 5.0):
            _RateCfg.LR = _SETTINGS.LR = lr
            for cfg, how, want in ((_RateCfg, "attribute", lr), (_RateCfg, "method", 2 * lr),
                                   (_SETTINGS, "attribute", lr)):
                step(out, cfg, how)
                step(out, cfg, how)   # the very arguments of the last call
                assert out.copy_to_host().tolist() == [want, want], (cfg, how)
    finally:
        _RateCfg.LR = _SETTINGS.LR = 1.0


class _Mode(enum.IntEnum):
    SLOW = 0
    FAST = 1


def test_an_int_enum_member_argument_is_static_as_an_enum_members_is():
    """An IntEnum member is an int, so it became a dynamic scalar, and the enum
    test ``mode is Mode.FAST`` was silently False while tracing."""
    @gt.graph(backend="sim")
    def step(s, out, mode):
        put[1, 2, s](out, 2.0 if mode is _Mode.FAST else 1.0)

    out = dev(0.0, 0.0)
    for mode, want in ((_Mode.FAST, 2.0), (_Mode.SLOW, 1.0), (_Mode.FAST, 2.0)):
        step(out, mode)
        assert out.copy_to_host().tolist() == [want, want]
    assert step.cache_info().misses == 2


def test_a_static_frozenset_keeps_signed_zeros_and_number_types_apart():
    """frozenset({-0.0}) equals frozenset({0.0}) in Python, and {1} equals {1.0}:
    keyed by equality they shared one graph, though the trace read them apart."""
    import math

    @gt.graph(backend="sim")
    def f(s, out, signs):
        put[1, 2, s](out, sum(math.copysign(7.0, x) + (type(x) is int) for x in signs))

    out = dev(0.0, 0.0)
    for signs, want in ((frozenset({0.0}), 7.0), (frozenset({-0.0}), -7.0),
                        (frozenset({1}), 8.0), (frozenset({1.0}), 7.0)):
        f(out, signs)
        assert out.copy_to_host().tolist() == [want, want], signs


class _Recorder:
    def __init__(self, scale=1.0):
        self.vals, self.scale = [], scale

    def add(self, h):
        self.vals.append(float(h[0]) * self.scale)

    def gain(self):
        return self.scale


@cuda.jit
def _fill(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = a


def test_a_method_of_an_argument_handed_to_s_host_is_not_watched():
    """``s.host(rec.add, h)`` with ``add`` appending to ``rec.vals``: the callback
    reads what it reads when it runs, so the key holds nothing of it (as for a
    method of self): the growing list traced every call anew. A method the code
    calls itself is still followed: ``rec.gain()`` reading ``rec.scale``."""
    @gt.graph(backend="sim")
    def step(s, x, h, a, rec):
        _fill[1, 32, s](x, a)
        s.copy(h, x)
        s.host(rec.add, h)

    x, h, rec = cuda.device_array(4), gt.pinned_empty(4), _Recorder()
    for a in range(10):
        step(x, h, float(a), rec)
    assert rec.vals == [float(a) for a in range(10)]
    assert step.cache_info().misses == 1

    @gt.graph(backend="sim")
    def scaled(s, x, h, rec):
        _fill[1, 32, s](x, rec.gain())
        s.copy(h, x)
        s.host(rec.add, h)

    rec = _Recorder(2.0)
    scaled(x, h, rec)
    rec.scale = 3.0   # read by gain, which the code calls: traced anew
    scaled(x, h, rec)
    assert rec.vals == [4.0, 9.0] and scaled.cache_info().misses == 2


class _ReadsNothingByName:
    def __init__(self):
        self.k = 2.0

    def rate(self):   # self alone: a call reads nothing more
        return 2.0 * self.k


def test_a_method_reaching_nothing_by_name_is_keyed_without_looking_into_it_at_each_call():
    """Its code names no global or closure name: its object's values key it, and
    no ``Holdings`` of the method is built or consulted at each call."""
    from graphtrace import object_keys

    @gt.graph(backend="sim")
    def f(s, out, obj):
        put[1, 2, s](out, obj.rate())
    obj, out = _ReadsNothingByName(), dev(0.0, 0.0)
    for k in (2.0, 2.0, 3.0):
        obj.k = k
        f(out, obj)
        assert result(out) == [2.0 * k] * 2
    assert f.cache_info().misses == 2
    assert _ReadsNothingByName.rate not in object_keys._HOLDINGS


_COUNT = 1.0
_FLAGS = [1.0]


def _reads_count():
    return _COUNT * _FLAGS[0]


def test_the_key_of_names_holding_the_very_same_numbers_is_reused_and_a_change_is_seen():
    """``Reach.functions`` keeps the key of the last call while the names hold the
    very same helpers and numbers (none a container a call may change in place):
    a rebound number, or a list changed in place, still gives another key."""
    global _COUNT
    from graphtrace.reach import Reach
    reach = Reach(_reads_count)
    first = reach.functions()
    _FLAGS[0] = 2.0
    assert reach.functions() != first   # a list read whole: read again
    _FLAGS[0] = 1.0
    try:
        numbers = Reach(lambda: _COUNT + 1.0)
        assert numbers.functions() is numbers.functions()
        key = numbers.functions()
        _COUNT = 2.0
        assert numbers.functions() != key
        _COUNT = 1
        assert numbers.functions() != key   # another type, an equal value
    finally:
        _COUNT = 1.0


class _Rated:
    def __init__(self, b=1.0):
        self.b = b

    def rate(self):
        return self.b * 2


@dataclasses.dataclass(frozen=True)
class _FrozenRated:
    b: float = 1.0

    def rate(self):
        return self.b * 2


class _ClassRated:
    b = 1.0

    @classmethod
    def rate(cls):
        return cls.b * 2


@gt.graph(backend="sim")
def _by_rate(s, out, cfg):
    put[1, 2, s](out, cfg.rate())


def test_a_method_replaced_on_an_argument_objects_class_traces_anew():
    """P.rate = new_rate in a notebook's cell: the object's key read what the old
    method read, found once per class, and held nothing of the method itself, so
    the old method's value was replayed (for a frozen dataclass's new instance too,
    and a class passed itself)."""
    for cls, arg in ((_Rated, _Rated()), (_FrozenRated, None), (_ClassRated, _ClassRated)):
        out, old = dev(0, 0), cls.__dict__["rate"]
        try:
            _by_rate(out, arg if arg is not None else cls())
            assert result(out) == [2.0, 2.0]
            new = (lambda self: self.b * 7)
            setattr(cls, "rate", classmethod(new) if cls is _ClassRated else new)
            _by_rate(out, arg if arg is not None else cls())
            assert result(out) == [7.0, 7.0], cls
        finally:
            setattr(cls, "rate", old)


class _Coef:
    def __init__(self, b):
        self.b, self.c = b, 5.0

    def coef(self):
        return self.c


@gt.graph(backend="sim")
def _by_coef(s, out, cfg):
    put[1, 2, s](out, cfg.coef())


def test_what_a_replaced_method_reads_off_an_argument_object_is_keyed():
    """After _Coef.coef = lambda self: self.b, a change of p.b replayed the value the
    first trace after the patch read: the names the class's methods read were found
    once per class."""
    old = _Coef.coef
    try:
        p, out = _Coef(1.0), dev(0, 0)
        _by_coef(out, p)
        _Coef.coef = lambda self: self.b
        p.b = 3.0
        _by_coef(out, p)
        assert result(out) == [3.0, 3.0]
        p.b = 8.0
        _by_coef(out, p)
        assert result(out) == [8.0, 8.0]
    finally:
        _Coef.coef = old
