"""Objects of the program's own that a graph method's ``self`` holds.

``self.opt.update(s, g, w)`` reading ``self.lr`` off the optimizer, layers in a
list each holding its weights: their arrays are the graph's, and what the
traced code reads off them is watched, so a later change traces anew instead of
replaying the old value. On the simulator, where results can be read back.
"""
import collections
import functools
import inspect
import operator
import warnings
import types
import weakref

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.held import held_objects
from graphtrace.owners import own_class


@cuda.jit
def axpy(a, x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += a * x[i]


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


def dev(*values):
    return cuda.to_device(np.array(values, dtype=np.float64))


def result(a):
    return a.copy_to_host().tolist()


class SGD:
    def __init__(self, lr):
        self.lr = lr

    def update(self, s, g, w):
        axpy[1, 2, s](-self.lr, g, w)


class GraphSGD:
    def __init__(self, lr):
        self.lr = lr

    @gt.graph(backend="sim")
    def update(self, s, g, w):   # a graph method of the held object: inlined
        axpy[1, 2, s](-self.lr, g, w)


class SlottedSGD:
    __slots__ = ("lr", "spare")

    def __init__(self, lr):
        self.lr = lr   # spare left empty

    def __getattr__(self, name):   # an attribute it lacks (spare too): KeyError
        raise KeyError(name)

    def update(self, s, g, w):
        axpy[1, 2, s](-self.lr, g, w)


class Momentum:
    def __init__(self, lr, n=2):
        self.lr = lr
        self.v = cuda.to_device(np.zeros(n))
        self.t = 0

    def update(self, s, g, w):
        self.t += 1   # state the optimizer keeps: read when traced, not watched
        axpy[1, 2, s](1.0, g, self.v)
        axpy[1, 2, s](-self.lr, self.v, w)


class Model:
    def __init__(self, opt):
        self.opt = opt
        self.w = dev(1, 1)
        self.g = dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        self.opt.update(s, self.g, self.w)


@pytest.mark.parametrize("opt", [SGD, GraphSGD, SlottedSGD])
def test_a_setting_of_a_held_object_is_watched(opt):
    m = Model(opt(0.5))
    before = m.step.cache_info().misses
    m.step()
    assert result(m.w) == [0.5, 0.5]
    m.step()
    assert result(m.w) == [0.0, 0.0]
    m.opt.lr = 0.25   # changed in place
    m.step()
    assert result(m.w) == [-0.25, -0.25]
    m.opt = opt(1.0)  # another object
    m.step()
    assert result(m.w) == [-1.25, -1.25]
    assert m.step.cache_info().misses == before + 3


def test_a_held_objects_arrays_are_the_graphs_and_its_state_is_not_watched():
    m = Model(Momentum(0.5))
    before = m.step.cache_info().misses
    for _ in range(3):
        m.step()
    # v: 1, 2, 3; w: 1 - 0.5 * (1 + 2 + 3)
    assert result(m.opt.v) == [3.0, 3.0] and result(m.w) == [-2.0, -2.0]
    assert m.step.cache_info().misses == before + 1 and m.opt.t == 1   # traced once
    listing = str(m.step.trace())
    assert "self.opt.v" in listing
    m.opt.v = dev(10, 10)   # another array in the held object: bound anew
    m.step()
    assert result(m.opt.v) == [11.0, 11.0] and result(m.w) == [-7.5, -7.5]


class Layer:
    def __init__(self, scale, owner=None):
        self.scale = scale
        self.out = dev(0, 0)
        self.owner = owner   # a way back: walked once

    def __call__(self, s, x):
        put[1, 2, s](self.out, 0.0)
        axpy[1, 2, s](self.scale, x, self.out)
        return self.out


class Stats:
    def __init__(self):
        self.calls = 0

    def record(self, h):
        self.calls += 1   # a host callback's counter: read when it runs


class Net:
    def __init__(self):
        self.layers = [Layer(2.0, self), Layer(3.0, self)]
        self.stats = Stats()
        self.h = gt.pinned_empty(2, np.float64)

    @gt.graph(backend="sim")
    def run(self, s, x):
        for layer in self.layers:
            x = layer(s, x)
        s.copy(self.h, x)
        s.host(self.stats.record, self.h)


def test_layers_in_a_list_each_holding_arrays():
    net, x = Net(), dev(1, 2)
    for _ in range(3):
        net.run(x)
    assert result(net.layers[1].out) == [6.0, 12.0] and net.h.tolist() == [6.0, 12.0]
    assert net.stats.calls == 3 and net.run.cache_info().misses == 1
    net.layers[0].scale = 5.0
    net.run(x)
    assert result(net.layers[1].out) == [15.0, 30.0]
    net.layers[1] = Layer(1.0)
    net.run(x)
    assert result(net.layers[1].out) == [5.0, 10.0]
    assert net.run.cache_info().misses == 3


MOMENTUM = 0.5


class Scaled:
    def __init__(self):
        self.v = dev(1, 1)

    def update(self, s, w):
        axpy[1, 2, s](MOMENTUM, self.v, w)   # a global a held object's method reads


class Holder:
    def __init__(self):
        self.opt = Scaled()
        self.w = dev(0, 0)

    @gt.graph(backend="sim")
    def step(self, s):
        self.opt.update(s, self.w)


def test_a_global_a_held_objects_method_reads_is_watched():
    global MOMENTUM
    h = Holder()
    h.step()
    assert result(h.w) == [0.5, 0.5]
    MOMENTUM = 2.0
    try:
        h.step()
        assert result(h.w) == [2.5, 2.5]
    finally:
        MOMENTUM = 0.5


def test_a_held_objects_method_put_on_its_class_anew_traces_anew():
    class Opt:
        def update(self, s, w):
            put[1, 2, s](w, 1.0)

    class M:
        def __init__(self):
            self.opt, self.w = Opt(), dev(0, 0)

        @gt.graph(backend="sim")
        def step(self, s):
            self.opt.update(s, self.w)

    m = M()
    m.step()
    assert result(m.w) == [1.0, 1.0]
    Opt.update = lambda self, s, w: put[1, 2, s](w, 7.0)
    m.step()
    assert result(m.w) == [7.0, 7.0]


def test_own_classes():
    import enum
    import threading

    class Sub(SGD):
        pass

    class Color(enum.Enum):
        RED = 1

    class Worker(threading.Thread):   # a library's class underneath: not walked
        pass

    assert own_class(SGD) and own_class(Sub) and own_class(types.SimpleNamespace)
    for t in (int, list, dict, np.ndarray, functools.partial, type(dev(1)), type,
              type(np.random.default_rng()), Color, Worker, ValueError):
        assert not own_class(t), t


def test_held_objects_walks_lists_dicts_and_objects_once_each():
    net = Net()
    net.extra = {"a": net.layers[0], "b": [net.stats]}
    labels = [label for label, *_ in held_objects(net)]
    assert labels == ["self.layers[0]", "self.layers[1]", "self.stats"]


OPT = SGD(0.5)


class State:
    def __init__(self):
        self.u = dev(1, 2)


STATE = State()
SETTINGS = types.SimpleNamespace(lr=2.0)


class Log:
    def __init__(self):
        self.calls = 0

    def record(self, h):
        self.calls += 1


LOG = Log()


@gt.graph(backend="sim")
def global_step(s, g, w):
    OPT.update(s, g, w)   # a global optimizer's method reads its lr


@gt.graph(backend="sim")
def global_state(s, w, h):
    axpy[1, 2, s](SETTINGS.lr, STATE.u, w)   # an array a global object holds
    s.copy(h, w)
    s.host(LOG.record, h)


def test_a_global_objects_method_reads_are_watched():
    global OPT
    keep = OPT
    try:
        g, w = dev(1, 1), dev(1, 1)
        global_step(g, w)
        assert result(w) == [0.5, 0.5]
        OPT.lr = 0.25
        global_step(g, w)
        assert result(w) == [0.25, 0.25]
        OPT = SGD(1.0)
        global_step(g, w)
        assert result(w) == [-0.75, -0.75]
    finally:
        OPT = keep
        OPT.lr = 0.5


def test_a_global_objects_arrays_are_the_graphs_and_a_callbacks_counter_is_not_watched():
    w, h = dev(0, 0), gt.pinned_empty(2, np.float64)
    before = global_state.cache_info().misses
    for _ in range(3):
        global_state(w, h)
    assert result(w) == [6.0, 12.0] and LOG.calls >= 3
    assert global_state.cache_info().misses == before + 1
    assert "STATE.u" in str(global_state.trace(w, h))
    keep = STATE.u
    try:
        STATE.u = dev(10, 10)   # another array in the global object: seen
        global_state(w, h)
        assert result(w) == [26.0, 32.0]
    finally:
        STATE.u = keep


@gt.graph(backend="sim")
def reads_settings(s, w):
    put[1, 2, s](w, SETTINGS.lr)


def test_a_global_object_of_settings_alone_keeps_the_short_call_path():
    w = dev(0, 0)
    reads_settings(w)
    reads_settings(w)
    assert reads_settings._fast is not None   # no walk of the object at every call
    SETTINGS.lr = 3.0
    try:
        reads_settings(w)
        assert result(w) == [3.0, 3.0]
    finally:
        SETTINGS.lr = 2.0


class _Coef:
    def __init__(self, owner):
        self.owner = owner   # the model holding it
        self.w = dev(1, 1)

    def coef(self):
        return self.owner.c   # a number of the model, read through the way back


class _Back:
    def __init__(self):
        self.c = 1.0
        self.layer = _Coef(self)

    @gt.graph(backend="sim")
    def step(self, s, x):
        axpy[1, 2, s](self.layer.coef(), self.layer.w, x)


def test_a_number_of_self_a_held_objects_method_reads_is_watched():
    m = _Back()
    x = dev(0, 0)
    m.step(x)
    m.c = 5.0
    m.step(x)
    assert result(x) == [6.0, 6.0]


class _Reads:
    lr = 1.0   # a class attribute read through the object

    def __init__(self):
        self.w = dev(1, 1)
        self.cfg = {"m": 10.0}
        self.lrs = [100.0]

    def apply(self, s, x):
        axpy[1, 2, s](self.lr, self.w, x)
        axpy[1, 2, s](self.cfg["m"], self.w, x)   # by constant keys
        axpy[1, 2, s](self.lrs[0], self.w, x)


class _ReadsHolder:
    def __init__(self):
        self.opt = _Reads()

    @gt.graph(backend="sim")
    def step(self, s, x):
        self.opt.apply(s, x)


def test_class_values_and_constant_keys_a_held_objects_method_reads_are_watched():
    m = _ReadsHolder()

    def run():
        x = dev(0, 0)
        m.step(x)
        return result(x)[0]
    assert run() == 111.0
    _Reads.lr = 2.0
    try:
        assert run() == 112.0
    finally:
        _Reads.lr = 1.0
    m.opt.cfg["m"] = 20.0
    assert run() == 121.0
    m.opt.lrs[0] = 200.0
    assert run() == 221.0


class _Meter:
    def __init__(self):
        self.n = 0

    def update(self, h):   # a host callback named like the optimizer's method
        self.n += 1


class _WithMeter:
    def __init__(self):
        self.opt, self.meter = SGD(0.5), _Meter()
        self.w, self.g = dev(0, 0), dev(1, 1)
        self.h = gt.pinned_empty(2, np.float64)
        self.history = []   # a log the program keeps: the graph does not read it
        self.sched = types.SimpleNamespace(lr=1.0)   # nor this

    @gt.graph(backend="sim")
    def step(self, s):
        self.opt.update(s, self.g, self.w)
        s.copy(self.h, self.w)
        s.host(self.meter.update, self.h)


def test_a_callback_named_like_a_method_hides_nothing_and_unread_objects_change_nothing():
    m = _WithMeter()
    before = m.step.cache_info().misses
    for i in range(3):
        m.step()
        m.history.append(types.SimpleNamespace(step=i, loss=float(i)))
        m.sched.lr *= 0.5
    assert m.step.cache_info().misses == before + 1 and m.meter.n == 3
    assert result(m.w) == [-1.5, -1.5]
    m.opt.lr = 2.0
    m.step()
    assert result(m.w) == [-3.5, -3.5]


class _Uses:
    def __init__(self):
        self.w, self.g = dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def a(self, s):
        axpy[1, 2, s](1.0, STATE.u, self.w)   # a global object's array in a method

    @gt.graph(backend="sim")
    def b(self, s):
        OPT.update(s, self.g, self.w)         # a global object's method in a method


def test_a_method_walks_the_objects_its_globals_hold():
    m = _Uses()
    m.a()
    assert result(m.w) == [1.0, 2.0]
    keep = OPT.lr
    try:
        OPT.lr = 0.5
        m.b()
        OPT.lr = 2.0
        m.b()
        assert result(m.w) == [-1.5, -0.5]
    finally:
        OPT.lr = keep


def _counting_helper(s, g, w):
    OPT.t = getattr(OPT, "t", 0)
    OPT.t += 1             # state kept on the global optimizer by a helper
    OPT.update(s, g, w)


@gt.graph(backend="sim")
def counts_in_a_helper(s, g, w):
    _counting_helper(s, g, w)


def test_state_a_helper_keeps_in_a_global_object_is_not_watched():
    g, w = dev(1, 1), dev(0, 0)
    keep, OPT.lr = OPT.lr, 0.5
    try:
        before = counts_in_a_helper.cache_info().misses
        for _ in range(3):
            counts_in_a_helper(g, w)
        assert counts_in_a_helper.cache_info().misses == before + 1
        assert result(w) == [-1.5, -1.5]
    finally:
        OPT.lr = keep


class _Late:
    def __init__(self):
        self.u = None


LATE = _Late()


@gt.graph(backend="sim")
def uses_late(s, y):
    if LATE.u is not None:
        axpy[1, 2, s](1.0, LATE.u, y)


def test_an_array_put_later_where_a_global_object_held_none_is_seen():
    y = dev(0, 0)
    uses_late(y)
    uses_late(y)
    LATE.u = dev(1, 2)
    try:
        uses_late(y)
        assert result(y) == [1.0, 2.0]
    finally:
        LATE.u = None


def test_an_abstract_base_keeps_a_class_the_programs_own():
    import abc
    import typing

    class Base(abc.ABC):
        @abc.abstractmethod
        def update(self, s, g, w): ...

    class Opt(Base):
        def __init__(self, lr):
            self.lr = lr

        def update(self, s, g, w):
            axpy[1, 2, s](-self.lr, g, w)

    T = typing.TypeVar("T")

    class Box(typing.Generic[T]):
        pass

    assert own_class(Opt) and own_class(Box)
    m = Model(Opt(0.5))
    m.step()
    m.opt.lr = 2.0
    m.step()
    assert result(m.w) == [-1.5, -1.5]


class _Counted:
    def __init__(self, scale):
        self.scale, self.calls = scale, 0
        self.out = dev(0, 0)


class _Loops:
    def __init__(self):
        self.layers = [_Counted(2.0), _Counted(3.0)]

    @gt.graph(backend="sim")
    def run(self, s, x):
        for layer in self.layers:
            layer.calls += 1   # state the trace keeps through a loop variable
            put[1, 2, s](layer.out, 0.0)
            axpy[1, 2, s](layer.scale, x, layer.out)


def test_state_the_trace_changes_through_a_loop_variable_is_not_watched():
    m, x = _Loops(), dev(1, 2)
    before = m.run.cache_info().misses
    for _ in range(4):
        m.run(x)
    assert m.run.cache_info().misses == before + 1 and m.layers[0].calls == 1
    m.layers[1].scale = 5.0   # a setting beside it: still watched
    m.run(x)
    assert result(m.layers[1].out) == [5.0, 10.0]


class _StepLR:
    def __init__(self):
        self.base, self.gamma, self.last_epoch = 1.0, 0.5, 0

    def step(self):   # called by the program between graph calls
        self.last_epoch += 1

    def get_lr(self):
        return self.base * self.gamma ** self.last_epoch


class _StepOpt:
    def step(self, s, w, g, lr):   # named like the scheduler's own step
        axpy[1, 2, s](-lr, g, w)


class _Trainer:
    def __init__(self):
        self.opt, self.sched, self.w, self.g = _StepOpt(), _StepLR(), dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def train(self, s):
        self.opt.step(s, self.w, self.g, self.sched.get_lr())


def test_a_schedulers_epoch_is_watched_beside_a_method_of_the_same_name():
    t = _Trainer()
    t.train()
    t.sched.step()
    t.train()
    assert result(t.w) == [-1.5, -1.5]


class _Base:
    def __init__(self):
        self.scale, self.out = 2.0, dev(0, 0)

    def forward(self, s, x):
        axpy[1, 2, s](self.scale, x, self.out)


class _Sub(_Base):
    def forward(self, s, x):
        super().forward(s, x)
        axpy[1, 2, s](1.0, x, self.out)


class _UsesSub:
    def __init__(self):
        self.layer, self.lr = _Sub(), 0.5

    @gt.graph(backend="sim")
    def run(self, s, x):
        put[1, 2, s](self.layer.out, 0.0)
        self.layer.forward(s, x)
        axpy[1, 2, s](getattr(self, "lr"), x, self.layer.out)   # by a constant name


def test_a_bases_method_called_through_super_and_getattr_of_self_are_watched():
    m, x = _UsesSub(), dev(1, 2)
    m.run(x)
    assert result(m.layer.out) == [3.5, 7.0]
    m.layer.scale = 5.0
    m.run(x)
    assert result(m.layer.out) == [6.5, 13.0]
    m.lr = 1.5
    m.run(x)
    assert result(m.layer.out) == [7.5, 15.0]


class _Scale:
    def __init__(self, a):
        self.a = a

    def __call__(self, s, x):
        axpy[1, 2, s](self.a, x, x)


SCALES = [_Scale(1.0), _Scale(2.0)]   # objects of the program's own in a global list
HOLDER_MODULE = types.ModuleType("holder_module")   # and one behind a module's attribute
HOLDER_MODULE.OPT = SGD(0.5)


@gt.graph(backend="sim")
def scales_in_a_list(s, x, g, w):
    for layer in SCALES:
        layer(s, x)
    HOLDER_MODULE.OPT.update(s, g, w)


def test_objects_in_a_global_list_and_behind_a_module_attribute_are_watched():
    x, g, w = dev(1, 1), dev(1, 1), dev(0, 0)
    scales_in_a_list(x, g, w)
    assert result(x) == [6.0, 6.0] and result(w) == [-0.5, -0.5]
    SCALES[0].a, HOLDER_MODULE.OPT.lr = 3.0, 2.0
    try:
        x = dev(1, 1)
        scales_in_a_list(x, g, w)
        assert result(x) == [12.0, 12.0] and result(w) == [-2.5, -2.5]
    finally:
        SCALES[0].a, HOLDER_MODULE.OPT.lr = 1.0, 0.5


@cuda.jit
def double(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= 2.0


@cuda.jit
def triple(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= 3.0


class _Act:
    def __init__(self):
        self.act = double


ACT = _Act()


@gt.graph(backend="sim")
def applies_held_kernel(s, x):
    ACT.act[1, 2, s](x)


def test_a_kernel_a_global_object_holds_is_watched():
    x = dev(1, 1)
    applies_held_kernel(x)
    ACT.act = triple
    try:
        applies_held_kernel(x)
        assert result(x) == [6.0, 6.0]
    finally:
        ACT.act = double


class _Child:
    def __init__(self, owner):
        self.owner, self.out = owner, dev(0, 0)

    def forward(self, s, x):
        self.owner.calls += 1   # state kept on the model through the way back
        axpy[1, 2, s](self.owner.gain, x, self.out)


class _Owner:
    def __init__(self):
        self.calls, self.gain = 0, 1.0
        self.child = _Child(self)

    @gt.graph(backend="sim")
    def run(self, s, x):
        self.child.forward(s, x)


def test_state_kept_on_self_through_a_held_object_is_not_watched_and_settings_are():
    m, x = _Owner(), dev(1, 1)
    before = m.run.cache_info().misses
    for _ in range(3):
        m.run(x)
    assert m.run.cache_info().misses == before + 1 and result(m.child.out) == [3.0, 3.0]
    m.gain = 2.0
    m.run(x)
    assert result(m.child.out) == [5.0, 5.0]


class _Lazy:
    def __init__(self):
        self.opt, self.cfg = None, types.SimpleNamespace(k=0.0)   # cfg: held already
        self.w, self.g = dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        if self.opt is None:
            self.opt = SGD(0.5)   # made by the first trace: its lr is a setting
        self.opt.update(s, self.g, self.w)
        axpy[1, 2, s](self.cfg.k, self.g, self.w)


def test_settings_of_an_object_the_first_trace_made_are_watched():
    m = _Lazy()
    m.step()
    m.step()
    m.opt.lr = 2.0
    m.step()
    assert result(m.w) == [-3.0, -3.0]


def _wrapped(f):
    @functools.wraps(f)   # the method behind __wrapped__
    def inner(*args, **kwargs):
        return f(*args, **kwargs)
    return inner


def _closed(f):
    def inner(*args, **kwargs):   # no functools.wraps: the method in its closure alone
        return f(*args, **kwargs)
    return inner


def _decorated(decorator):
    class Opt:
        def __init__(self, lr):
            self.lr = lr

        @decorator
        def update(self, s, g, w):
            axpy[1, 2, s](-self.lr, g, w)

    class Net:
        def __init__(self):
            self.opt, self.k = Opt(1.0), 1.0
            self.w, self.g = dev(0, 0), dev(1, 1)

        @decorator
        def rate(self):
            return self.k

        @gt.graph(backend="sim")
        def step(self, s):
            self.opt.update(s, self.g, self.w)
            axpy[1, 2, s](self.rate(), self.g, self.w)

    return Net


@pytest.mark.parametrize("decorator", [_wrapped, _closed, lambda f: _closed(_wrapped(f))])
def test_what_decorated_methods_of_self_and_of_a_held_object_read_is_watched(decorator):
    m = _decorated(decorator)()
    m.step()
    m.opt.lr, m.k = 3.0, 10.0
    m.step()
    assert result(m.w) == [7.0, 7.0]


class _LazyDefaults:
    def __init__(self):
        self.scale, self.lr, self.reset = None, 1.0, False
        self.calls, self.g, self.w = 0, dev(1.0, 1.0), dev(0.0, 0.0)
        self.opt = _Clipped()

    def maybe_reset(self):
        if self.reset:          # not run while traced here
            self.lr = 1.0

    @gt.graph(backend="sim")
    def step(self, s):
        if self.scale is None:  # a default set by the first trace
            self.scale = 1.0
        self.maybe_reset()
        self.calls += 1         # state: traced once, left out of the key
        self.opt.update(s, self.g, self.w, self.scale * self.lr)


class _Clipped:
    def __init__(self):
        self.clip = None

    def update(self, s, g, w, a):
        if self.clip is None:
            self.clip = 10.0
        axpy[1, 2, s](min(a, self.clip), g, w)


def test_settings_the_traced_code_stores_but_does_not_change_are_watched():
    """What the traced code stores on self or a held object was taken for state,
    left out of the key, so a later change replayed the old value: a default the
    first trace set from None (``if self.scale is None: self.scale = 1.0``), and
    a store the trace did not run (a branch not taken). Only what the trace
    changes from a value is state (``self.calls += 1``)."""
    m = _LazyDefaults()
    m.step()                                   # w = 1
    m.scale = 2.0
    m.step()                                   # + 2
    m.lr = 2.5
    m.step()                                   # + 5
    m.opt.clip = 0.5
    m.step()                                   # + 0.5
    assert result(m.w) == [8.5, 8.5]
    m.step()                                   # + 0.5: the same graph
    assert result(m.w) == [9.0, 9.0]
    assert m.calls == 4 and _LazyDefaults.step.cache_info().misses == 4


class _Scales:
    def __init__(self):
        self.scales, self.coef, self.history = [1.0, 2.0], {"a": 1.0}, []
        self.g, self.w = dev(1.0, 1.0), dev(0.0, 0.0)

    @gt.graph(backend="sim")
    def step(self, s):
        for a in self.scales:
            axpy[1, 2, s](a, self.g, self.w)
        for _, c in self.coef.items():
            axpy[1, 2, s](c, self.g, self.w)
        self.history.append(len(self.scales))   # state the trace keeps: not watched


def test_lists_and_dicts_of_numbers_self_holds_are_watched():
    """A loop over a list or dict of numbers self holds bakes them in: a change
    to one traces anew (a list the trace appends to is state)."""
    m = _Scales()
    m.step()                                   # w = 4
    m.scales[1] = 5.0
    m.coef["a"] = 10.0
    m.step()                                   # + 16
    m.step()                                   # + 16: the same graph
    assert result(m.w) == [36.0, 36.0]
    m.scales.append(1)                         # an int: another graph
    m.step()                                   # + 17
    assert result(m.w) == [53.0, 53.0]
    assert _Scales.step.cache_info().misses == 3


class _Drops:
    def __init__(self):
        self.opt, self.g, self.w = SGD(1.0), dev(1.0, 1.0), dev(0.0, 0.0)

    @gt.graph(backend="sim")
    def step(self, s):
        self.opt.update(s, self.g, self.w)
        self.opt = None   # the trace lets go of the only object held


def test_a_trace_that_lets_go_of_every_held_object_is_built():
    m = _Drops()
    m.step()
    assert result(m.w) == [-1.0, -1.0] and m.opt is None


class _Adam:
    def __init__(self):
        self.t, self.lr = 0, 1.0

    def update(self, s, g, w):
        self.t += 1   # state a Python step counter keeps: runs when traced only
        axpy[1, 2, s](-self.lr * self.t, g, w)


class _WithAdam:
    def __init__(self):
        self.opt, self.g, self.w, self.scale = _Adam(), dev(1.0, 1.0), dev(0.0, 0.0), None

    @gt.graph(backend="sim")
    def step(self, s):
        if self.scale is None:
            self.scale = 1.0   # a default: no state
        self.opt.update(s, self.g, self.w)


def test_state_a_trace_changes_is_named_in_a_warning_once():
    """A counter the traced code keeps on an object changes once, when traced: the
    graph replays what it computed then. Said once, naming it; not for defaults."""
    m = _WithAdam()
    with pytest.warns(gt.StateWarning, match=r"tracing step changed self\.opt\.t:") as got:
        m.step()
    assert len(got) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        m.step()
        m.scale = 2.0
        m.step()   # traced anew: the counter changes again, said already
    assert m.opt.t == 2 and result(m.w) == [-4.0, -4.0]


class _BagSGD(types.SimpleNamespace):   # the program's class on a bag of attributes
    def update(self, s, g, w):
        axpy[1, 2, s](-self.lr * self.args.scale, g, w)


class _WithBag:
    def __init__(self):
        import argparse
        args = argparse.ArgumentParser().parse_args([])
        args.scale = 1.0
        self.opt, self.g, self.w = _BagSGD(lr=1.0, args=args), dev(1.0, 1.0), dev(0.0, 0.0)

    @gt.graph(backend="sim")
    def step(self, s):
        self.opt.update(s, self.g, self.w)


def test_objects_on_a_bag_of_attributes_are_held():
    """A class of the program's own on ``SimpleNamespace``, and argparse's
    ``Namespace``, hold what the program set: walked, their settings watched."""
    import argparse
    assert own_class(_BagSGD) and own_class(argparse.Namespace)
    m = _WithBag()
    m.step()
    m.opt.lr = 3.0
    m.step()
    m.opt.args.scale = 2.0
    m.step()
    assert result(m.w) == [-10.0, -10.0]


def _decorated_layers(decorator):
    class Base:
        def __init__(self):
            self.k = 1.0

        @decorator
        def forward(self, s, g, w):
            axpy[1, 2, s](self.k, g, w)

    class Sub(Base):
        @decorator
        def forward(self, s, g, w):   # the base's method, reached through super()
            super().forward(s, g, w)

    class Scale:
        def __init__(self):
            self.a = 1.0

        @decorator
        def __call__(self, s, g, w):   # run by layer(s, g, w)
            axpy[1, 2, s](self.a, g, w)

    class Net:
        def __init__(self):
            self.layer, self.sub = Scale(), Sub()
            self.w, self.g = dev(0, 0), dev(1, 1)

        @gt.graph(backend="sim")
        def step(self, s):
            self.layer(s, self.g, self.w)
            self.sub.forward(s, self.g, self.w)

    return Net


@pytest.mark.parametrize("decorator", [_wrapped, _closed])
def test_a_held_objects_decorated_call_and_decorated_super_call_are_followed(decorator):
    m = _decorated_layers(decorator)()
    before = m.step.cache_info().misses
    m.step()
    m.step()
    assert result(m.w) == [4.0, 4.0] and m.step.cache_info().misses == before + 1
    m.layer.a, m.sub.k = 3.0, 10.0
    m.step()
    assert result(m.w) == [17.0, 17.0]


class _Layers:   # a container of the program's own (as nn.Sequential)
    def __init__(self, *layers):
        self._layers = list(layers)

    def __iter__(self):
        return iter(self._layers)

    def __len__(self):
        return len(self._layers)


class _Settings:   # settings served by __getattr__ off another object
    def __init__(self, **values):
        self._values = types.SimpleNamespace(**values)

    def __getattr__(self, name):
        return getattr(self._values, name)


class _Switch:
    def __init__(self):
        self.on, self.scale, self.keys = True, 1.0, ("g",)

    def __enter__(self):
        return self.scale

    def __exit__(self, *exc):
        return False

    def __bool__(self):
        return self.on

    def __contains__(self, key):
        return key in self.keys


class _Syntax:
    def __init__(self):
        self.seq, self.cfg, self.switch = _Layers(Layer(2.0)), _Settings(lr=1.0), _Switch()
        self.w, self.g = dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):   # each held object's dunder methods run by syntax
        put[1, 2, s](self.w, 0.0)
        for layer in self.seq:
            axpy[1, 2, s](1.0, layer(s, self.g), self.w)
        with self.switch as k:
            axpy[1, 2, s](k * self.cfg.lr, self.g, self.w)
        if self.switch:
            axpy[1, 2, s](10.0, self.g, self.w)
        if "g" in self.switch:
            axpy[1, 2, s](100.0 * len(self.seq), self.g, self.w)


def test_what_a_held_objects_dunder_methods_read_is_watched():
    m = _Syntax()
    before = m.step.cache_info().misses
    m.step()
    m.step()
    assert result(m.w) == [113.0, 113.0] and m.step.cache_info().misses == before + 1
    assert "self.seq._layers[0].out" in str(m.step.trace())   # an array in the container
    expected = [
        (lambda: setattr(m.seq._layers[0], "scale", 3.0), 114.0),
        (lambda: m.seq._layers.append(Layer(4.0)), 218.0),
        (lambda: setattr(m.cfg._values, "lr", 2.0), 219.0),
        (lambda: setattr(m.switch, "scale", 3.0), 223.0),
        (lambda: setattr(m.switch, "on", False), 213.0),
        (lambda: setattr(m.switch, "keys", ("h",)), 13.0)]
    for change, w in expected:
        change()
        m.step()
        assert result(m.w) == [w, w]


def _sgd(opt, s, g, w):   # a module's helper handed the optimizer
    axpy[1, 2, s](-_scaled(opt), g, w)


def _scaled(opt):   # and its helper
    return opt.lr * opt.gain


class _HelperSGD:
    def __init__(self):
        self.lr, self.gain = 1.0, 1.0

    def update(self, s, g, w):
        _sgd(self, s, g, w)


def test_what_a_helper_a_held_objects_method_hands_it_to_reads_is_watched():
    m = Model(_HelperSGD())
    m.step()
    m.opt.lr = 3.0
    m.step()
    assert result(m.w) == [-3.0, -3.0]
    m.opt.gain = 2.0
    m.step()
    assert result(m.w) == [-9.0, -9.0]


class _Gain:
    def __init__(self, a):
        self.a = a

    def apply(self, s, g, w):
        axpy[1, 2, s](self.a, g, w)


def _gain(layer, s, g, w):
    axpy[1, 2, s](layer.a, g, w)


def _gain_by(s, g, w, by):
    axpy[1, 2, s](by.a, g, w)


class _Via:   # a held object calling the function it holds
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, s, g, w):
        self.fn(s, g, w)


class _CallsHeld:
    def __init__(self, fn):
        self.fn, self.w, self.g = fn, dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        self.fn(s, self.g, self.w)


@pytest.mark.parametrize("bind, label", [
    (lambda gain: gain.apply, "self.fn.__self__"),
    (lambda gain: functools.partial(_gain, gain), "self.fn.args[0]"),
    (lambda gain: functools.partial(_gain_by, by=gain), "self.fn.keywords['by']"),
    (lambda gain: _Via(gain.apply), "self.fn.fn.__self__"),
    (lambda gain: [functools.partial(gain.apply)], "self.fn[0].func.__self__"),
    (lambda gain: gt.graph(gain.apply, backend="sim"), "self.fn.instance")])
def test_the_object_a_held_bound_method_or_partial_holds_is_watched(bind, label):
    gain = _Gain(1.0)
    fn = bind(gain)
    m = _CallsHeld(fn if type(fn) is not list else fn[0])
    m.step()
    gain.a = 3.0
    m.step()
    assert result(m.w) == [4.0, 4.0]
    m.fn = fn
    assert label in [label for label, *_ in held_objects(m)]


class _GainOn:   # adds self.a, and its array self.b
    def __init__(self):
        self.a, self.b = 1.0, dev(0, 0)

    def apply(self, s, g, w):
        axpy[1, 2, s](self.a, g, w)
        axpy[1, 2, s](1.0, self.b, w)


_GAIN_ON = _GainOn()
_APPLY = gt.graph(_GAIN_ON.apply, backend="sim")   # a method not decorated, bound


@gt.graph(backend="sim")
def _by_graph_of_method(s, g, w, how):
    if how == "inline":
        _APPLY(s, g, w)
    else:
        s.child(_APPLY, g, w)


@pytest.mark.parametrize("how", ["inline", "child"])
def test_what_a_graph_of_a_bound_method_called_by_name_reads_off_its_object_is_watched(how):
    """``APPLY = gt.graph(obj.apply)`` called by its global name in another graph:
    ``obj.a`` changed replayed the first value, and ``obj.b``, an array, was
    refused as reached by no name."""
    w, g = dev(0, 0), dev(1, 1)
    _GAIN_ON.a, _GAIN_ON.b = 1.0, dev(0, 0)
    _by_graph_of_method(g, w, how)   # 1
    _GAIN_ON.a = 2.0
    _by_graph_of_method(g, w, how)   # + 2
    _GAIN_ON.b = dev(10, 10)
    _by_graph_of_method(g, w, how)   # + 2 + 10
    assert result(w) == [15.0, 15.0]


class _Schedule:
    def __init__(self):
        self.lrs = [1.0, 2.0]   # numbers alone, read by the method: baked in
        self.coef = {"a": 1.0, "b": [10.0]}
        self.history = []   # state the trace keeps: not watched

    def apply(self, s, g, w):
        for lr in self.lrs:
            axpy[1, 2, s](lr, g, w)
        for _, c in self.coef.items():
            axpy[1, 2, s](c if type(c) is not list else sum(c), g, w)
        self.history.append(len(self.history))


class _Scheduled:
    def __init__(self):
        self.sched, self.w, self.g = _Schedule(), dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        put[1, 2, s](self.w, 0.0)
        self.sched.apply(s, self.g, self.w)


def test_lists_and_dicts_of_values_a_held_objects_method_reads_are_watched_by_value():
    m = _Scheduled()
    before = m.step.cache_info().misses
    for _ in range(3):
        m.step()
    assert result(m.w) == [14.0, 14.0] and m.step.cache_info().misses == before + 1
    assert m.sched.history == [0]   # the trace's own append: traced once
    expected = [
        (lambda: m.sched.lrs.__setitem__(1, 5.0), 17.0),
        (lambda: m.sched.lrs.append(2.0), 19.0),
        (lambda: m.sched.coef.__setitem__("a", 3.0), 21.0),
        (lambda: m.sched.coef["b"].append(100.0), 121.0),
        (lambda: m.sched.lrs.__setitem__(0, 1), 121.0),   # an int now: another graph
        (lambda: m.sched.lrs.__setitem__(0, float("nan")), None)]
    for change, w in expected:
        misses = m.step.cache_info().misses
        change()
        m.step()
        m.step()   # NaN is the same NaN: no trace anew
        assert m.step.cache_info().misses == misses + 1
        assert w is None or result(m.w) == [w, w]


class _Recorder:
    def __init__(self):
        self.losses, self.n = [], 0
        self.h = gt.pinned_empty(2, np.float64)

    def record(self, h):   # a host callback: runs between calls
        self.losses.append(float(h[0]))
        self.n += 1

    def update(self, s, w):   # hands it to s.host itself
        s.copy(self.h, w)
        s.host(self.record, self.h)


class _Records:
    def __init__(self):
        self.log, self.w, self.g = _Recorder(), dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        axpy[1, 2, s](1.0, self.g, self.w)
        self.log.update(s, self.w)


def test_state_a_callback_a_held_objects_method_hands_to_host_keeps_is_not_watched():
    m = _Records()
    before = m.step.cache_info().misses
    for _ in range(4):
        m.step()
    assert m.log.losses == [1.0, 2.0, 3.0, 4.0] and m.log.n == 4
    assert m.step.cache_info().misses == before + 1


class _NullWriter:   # a logger when logging is off: every method a no-op
    def __getattr__(self, name):
        return lambda *a, **k: None


class _Logged:
    def __init__(self):
        self.writer, self.g, self.w = _NullWriter(), dev(1.0, 1.0), dev(0.0, 0.0)
        self.h = gt.pinned_empty(2)

    @gt.graph(backend="sim")
    def step(self, s):
        axpy[1, 2, s](1.0, self.g, self.w)
        s.copy(self.h, self.w)
        s.host(self.writer.add_scalar, "w", self.h)


def test_an_object_answering_every_attribute_is_no_array():
    """A stub answering every name with a function was asked for the array
    interface and taken for an array: the call crashed."""
    m = _Logged()
    for _ in range(3):
        m.step()
    assert result(m.w) == [3.0, 3.0]


class _GroupsSGD:   # torch's optimizers keep settings beside the arrays they update
    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]

    def step(self, s, grads):
        for group in self.param_groups:
            for p, g in zip(group["params"], grads):
                axpy[1, 2, s](-group["lr"], g, p)


class _Normalizing:
    def __init__(self, lr):
        self.lr = lr

    def update(self, s, g, w):
        self.lr = float(self.lr)   # a setting made tidy, not state
        axpy[1, 2, s](-self.lr, g, w)


class _Grouped:
    def __init__(self):
        self.w, self.g = dev(0.0, 0.0), dev(1.0, 1.0)
        self.opt, self.tidy = _GroupsSGD([self.w], lr=1.0), _Normalizing(1)

    @gt.graph(backend="sim")
    def step(self, s):
        self.opt.step(s, [self.g])
        self.tidy.update(s, self.g, self.w)


def test_a_learning_rate_beside_the_arrays_in_param_groups_and_a_tidied_one_are_watched():
    """``param_groups = [{"params": [w], "lr": lr}]``: the values of a dict whose
    list holds the arrays were not keyed (only a container holding an array
    itself gave its values); ``self.lr = float(self.lr)`` was taken for state.
    A scheduler's ``group["lr"] = 3.0`` and ``m.tidy.lr = 2.0`` replayed the old values."""
    m = _Grouped()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        m.step()                                      # -2
        for group in m.opt.param_groups:
            group["lr"] = 3.0
        m.step()                                      # -4
        m.tidy.lr = 2.0
        m.step()                                      # -5
    assert result(m.w) == [-11.0, -11.0]


class _KeyedOpt:
    def __init__(self):
        self.state = {"lr": 1.0, "steps": 0}

    def update(self, s, g, w):
        axpy[1, 2, s](-self.state["lr"], g, w)


class _Keyed:
    def __init__(self):
        self.hp, self.opt = {"lr": 1.0, "loss": 0.0}, _KeyedOpt()
        self.w, self.g = dev(0.0, 0.0), dev(1.0, 1.0)

    @gt.graph(backend="sim")
    def step(self, s):
        axpy[1, 2, s](self.hp["lr"], self.g, self.w)
        self.opt.update(s, self.g, self.w)


def test_a_dict_read_by_constant_keys_is_keyed_by_those_alone():
    """A dict the code reads by constant keys (``self.hp["lr"]``) was keyed whole
    as well: a loop writing another key (``hp["loss"]``, ``opt.state["steps"]``)
    traced anew at every call."""
    m = _Keyed()
    for e in range(4):
        m.step()
        m.hp["loss"] = 0.1 * e
        m.opt.state["steps"] += 1
    assert _Keyed.step.cache_info().misses == 1
    m.hp["lr"], m.opt.state["lr"] = 3.0, 0.5
    m.step()
    assert _Keyed.step.cache_info().misses == 2 and result(m.w) == [2.5, 2.5]


class _Logger:
    def __init__(self):
        self.epoch, self.lines = 0, []

    def record(self, h):   # a host callback: reads self.epoch when it runs
        self.lines.append((self.epoch, float(h[0])))


class _Reported:
    def __init__(self):
        self.log, self.opt = _Logger(), SGD(1.0)
        self.g, self.w, self.h = dev(1.0, 1.0), dev(0.0, 0.0), gt.pinned_empty(2)

    @gt.graph(backend="sim")
    def step(self, s):
        self.opt.update(s, self.g, self.w)
        s.copy(self.h, self.w)
        s.host(self.log.record, self.h)


def test_what_a_held_objects_host_callback_reads_is_not_watched():
    """A held logger's method handed to s.host reads ``self.epoch`` when it runs:
    keyed, the loop setting ``m.log.epoch`` traced anew at every call. The
    optimizer's settings stay watched."""
    m = _Reported()
    for epoch in range(4):
        m.log.epoch = epoch
        m.step()
    assert _Reported.step.cache_info().misses == 1
    assert m.log.lines == [(0, -1.0), (1, -2.0), (2, -3.0), (3, -4.0)]
    m.opt.lr = 2.0
    m.step()
    assert _Reported.step.cache_info().misses == 2 and result(m.w) == [-6.0, -6.0]


class _SharedActivation:
    def __init__(self):
        self.a = 1.0

    def __call__(self, s, x, y):
        axpy[1, 2, s](self.a, x, y)


class _SharedAct:
    act = _SharedActivation()   # one activation every layer shares, held by the class


class _ClassHeld:
    opt = SGD(1.0)   # a default optimizer held by the class

    def __init__(self):
        self.layer, self.g, self.w = _SharedAct(), dev(1.0, 1.0), dev(0.0, 0.0)

    @gt.graph(backend="sim")
    def step(self, s):
        self.layer.act(s, self.g, self.w)
        self.opt.update(s, self.g, self.w)


def test_objects_a_class_holds_are_walked():
    """``class Model: opt = SGD(0.1)`` read as ``self.opt`` (or a layer's shared
    ``act``) was not walked: its settings were baked in."""
    m = _ClassHeld()
    m.step()                                   # 1 - 1 = 0
    _SharedAct.act.a = 3.0
    m.step()                                   # + 3 - 1
    _ClassHeld.opt.lr = 0.5
    m.step()                                   # + 3 - 0.5
    assert result(m.w) == [4.5, 4.5]


class _Config:
    def __init__(self):
        self.lr, self.sub = 1.0, types.SimpleNamespace(k=1.0)


@gt.graph(backend="sim")
def _configured(s, w, g, cfg, cfgs):
    axpy[1, 2, s](cfg.lr * cfg.sub.k + cfgs[0].lr, g, w)


def test_a_config_object_passed_as_an_argument_is_keyed_by_what_it_holds():
    """An object of the program's own passed as an argument was static by
    identity: ``cfg.lr = 3.0`` made in place replayed the old value (and the call
    shortcut launched at once)."""
    w, g, cfg, other = dev(0.0, 0.0), dev(1.0, 1.0), _Config(), _Config()
    _configured(w, g, cfg, [other])            # 2
    _configured(w, g, cfg, [other])            # 2: the same graph
    cfg.lr = 3.0
    _configured(w, g, cfg, [other])            # 4
    cfg.sub.k = 2.0
    _configured(w, g, cfg, [other])            # 7
    other.lr = 0.0
    _configured(w, g, cfg, [other])            # 6
    assert result(w) == [21.0, 21.0] and _configured.cache_info().misses == 4


class _KeepsHistory:
    def __init__(self):
        self.lr, self.losses, self.calls = 1.0, [], 0


@gt.graph(backend="sim")
def _trained(s, w, g, trainer):
    axpy[1, 2, s](trainer.lr, g, w)


def test_what_the_code_does_not_read_off_an_argument_object_is_not_keyed():
    """A loss history or counter the program keeps on an object it passes, and
    the graph does not read, traces nothing anew."""
    w, g, t = dev(0.0, 0.0), dev(1.0, 1.0), _KeepsHistory()
    for i in range(3):
        _trained(w, g, t)
        t.losses.append(float(i))
        t.calls += 1
    assert _trained.cache_info().misses == 1
    t.lr = 2.0
    _trained(w, g, t)
    assert _trained.cache_info().misses == 2 and result(w) == [5.0, 5.0]


class _Hook:
    def __init__(self, a=1.0):
        self.a = a

    def __call__(self, s, g, w):
        axpy[1, 2, s](self.a, g, w)


class _Hooked:
    def __init__(self, hooks):
        self.hooks, self.w, self.g = hooks, dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        for hook in self.hooks:
            (hook() if type(hook) is weakref.ref else hook)(s, self.g, self.w)


_CONTAINERS = {
    "deque": (lambda h: collections.deque([h]), lambda c: c[0]),
    "set": (lambda h: {h}, lambda c: next(iter(c))),
    "frozenset": (lambda h: frozenset([h]), lambda c: next(iter(c))),
    "dict values": (lambda h: {"a": h}.values(), lambda c: next(iter(c))),
    "chain map values": (lambda h: collections.ChainMap({"a": h}).values(),
                         lambda c: next(iter(c))),
    "weak references": (lambda h: [weakref.ref(h)], lambda c: c[0]())}


@pytest.mark.parametrize("kind", sorted(_CONTAINERS))
def test_objects_in_a_deque_a_set_or_other_containers_are_walked(kind):
    """An object held in a deque, a set, a frozenset or another container of the
    standard library was not walked: its settings changed replayed the old values."""
    make, first = _CONTAINERS[kind]
    hook = _Hook()
    m = _Hooked(make(hook))
    before = m.step.cache_info().misses
    m.step()
    m.step()
    first(m.hooks).a = 3.0
    m.step()
    assert result(m.w) == [5.0, 5.0]
    assert m.step.cache_info().misses == before + 2


_GLOBAL_HOOKS = collections.deque([_Hook()])


class _Hooks:
    def __init__(self, hooks):
        self.hooks = hooks


@gt.graph(backend="sim")
def _global_hooks(s, g, w, cfg):
    for hook in _GLOBAL_HOOKS:
        hook(s, g, w)
    for hook in cfg.hooks:
        axpy[1, 2, s](hook.a, g, w)


def test_objects_in_a_deque_a_global_or_an_argument_holds_are_walked():
    w, g, cfg = dev(0, 0), dev(1, 1), _Hooks({_Hook()})
    _global_hooks(g, w, cfg)                   # 2
    _GLOBAL_HOOKS[0].a = 3.0
    _global_hooks(g, w, cfg)                   # 4
    next(iter(cfg.hooks)).a = 2.0
    _global_hooks(g, w, cfg)                   # 5
    cfg.hooks = collections.deque([_Hook(0.5)])
    _global_hooks(g, w, cfg)                   # 3.5
    cfg.hooks[0].a = 1.5
    _global_hooks(g, w, cfg)                   # 4.5
    assert result(w) == [19.0, 19.0] and _global_hooks.cache_info().misses == 5


def _mix(coefs, s, g, w, alpha=1.0):
    for c in coefs:
        axpy[1, 2, s](c * alpha, g, w)


class _Mixes:
    def __init__(self, fn):
        self.fn, self.w, self.g = fn, dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        self.fn(s, self.g, self.w)


_MIX = functools.partial(_mix, [1.0], alpha=1.0)


@gt.graph(backend="sim")
def _mixed(s, g, w, fn):
    _MIX(s, g, w)
    fn(s, g, w)


def test_the_values_a_partial_holds_are_keyed_where_it_is_held_or_passed():
    """A partial's list or keywords dict changed in place was keyed by the
    partial's identity alone: the graph replayed the values first baked in."""
    coefs = [1.0, 1.0]
    m = _Mixes(functools.partial(_mix, coefs))
    m.step()                                   # 2
    coefs[1] = 5.0
    m.step()                                   # 6
    m.fn.keywords["alpha"] = 2.0
    m.step()                                   # 12
    assert result(m.w) == [20.0, 20.0]
    w, g, fn = dev(0, 0), dev(1, 1), functools.partial(_mix, [1.0])
    _mixed(g, w, fn)                           # 1 + 1
    _mixed(g, w, fn)                           # the same graph
    fn.args[0][0] = 3.0
    _mixed(g, w, fn)                           # 1 + 3
    _MIX.keywords["alpha"] = 2.0
    try:
        _mixed(g, w, fn)                       # 2 + 3
    finally:
        _MIX.keywords["alpha"] = 1.0
    assert result(w) == [13.0, 13.0] and _mixed.cache_info().misses == 3


def _record(history, h):
    history.append(float(h[0]))


class _RecordsByPartial:
    def __init__(self):
        self.w, self.g, self.h, self.history = dev(0, 0), dev(1, 1), \
            gt.pinned_empty(2, np.float64), []
        self.cb = functools.partial(_record, self.history)

    @gt.graph(backend="sim")
    def step(self, s):
        axpy[1, 2, s](1.0, self.g, self.w)
        s.copy(self.h, self.w)
        s.host(self.cb, self.h)


def test_a_partial_handed_to_host_is_not_keyed_by_the_history_it_keeps():
    m = _RecordsByPartial()
    for _ in range(3):
        m.step()
    assert m.history == [1.0, 2.0, 3.0] and m.step.cache_info().misses == 1


class _Rate:
    def __init__(self, a):
        self.a = a


_GAIN = 1.0
_RATE = _Rate(1.0)


def _by_gain(s, g, w):
    axpy[1, 2, s](_GAIN, g, w)


def _by_rate(s, g, w):
    axpy[1, 2, s](_RATE.a, g, w)


class _CallsFunctions:
    def __init__(self, cfg):
        self.w, self.g = dev(0, 0), dev(1, 1)
        self.fn = lambda s, g, w: axpy[1, 2, s](cfg.a, g, w)   # closes over a config
        self.fns = [_by_gain]
        self.layer = types.SimpleNamespace(acts={"rate": functools.partial(_by_rate)})

    @gt.graph(backend="sim")
    def step(self, s):
        self.fn(s, self.g, self.w)
        for f in self.fns:
            f(s, self.g, self.w)
        self.layer.acts["rate"](s, self.g, self.w)


def test_what_functions_self_or_a_held_object_holds_reach_by_name_is_watched():
    """A function held by an attribute (a lambda closing over a config object, a
    list of functions reading a global) was keyed by identity alone: what it
    reached by name was baked in and replayed when changed."""
    global _GAIN
    cfg = _Rate(1.0)
    m = _CallsFunctions(cfg)
    m.step()                                   # 1 + 1 + 1
    cfg.a = 2.0
    m.step()                                   # 2 + 1 + 1
    _GAIN = 3.0
    try:
        m.step()                               # 2 + 3 + 1
        _RATE.a = 4.0
        m.step()                               # 2 + 3 + 4
    finally:
        _GAIN, _RATE.a = 1.0, 1.0
    assert result(m.w) == [22.0, 22.0]
    m.step()                                   # 2 + 1 + 1: the graph of the first values
    assert result(m.w) == [26.0, 26.0] and m.step.cache_info().misses == 4


@gt.graph(backend="sim")
def _graph_by_gain(s, g, w):   # reads _GAIN, and the array _BIAS
    axpy[1, 2, s](_GAIN, g, w)
    axpy[1, 2, s](1.0, _BIAS, w)


_BIAS = dev(0, 0)


class _CallsGraphFunctions:
    def __init__(self):
        self.w, self.g = dev(0, 0), dev(1, 1)
        self.sub, self.subs = _graph_by_gain, [_graph_by_gain]

    @gt.graph(backend="sim")
    def step(self, s, how):
        (self.sub if how == "attribute" else self.subs[0])(s, self.g, self.w)


@pytest.mark.parametrize("how", ["attribute", "list"])
def test_what_a_graph_function_self_holds_reaches_by_name_is_watched(how):
    """A graph function held by self (``self.sub = inner``, or in a list) reading a
    global number replayed the first value; an array it reaches by a global name
    was refused as reached by no name of the method."""
    global _GAIN, _BIAS
    m = _CallsGraphFunctions()
    m.step(how)                                # 1
    _GAIN = 3.0
    try:
        m.step(how)                            # + 3
        _BIAS = dev(10, 10)
        m.step(how)                            # + 3 + 10
    finally:
        _GAIN, _BIAS = 1.0, dev(0, 0)
    assert result(m.w) == [17.0, 17.0]


class _Link:
    def __init__(self, child=None):
        self.child, self.a = child, 1.0

    def apply(self, s, g, w):
        if self.child is not None:
            self.child.apply(s, g, w)
        else:
            axpy[1, 2, s](self.a, g, w)


class _Chained:
    def __init__(self, n):
        self.root, self.w, self.g = _Link(), dev(0, 0), dev(1, 1)
        for _ in range(n):
            self.root = _Link(self.root)

    @gt.graph(backend="sim")
    def step(self, s):
        self.root.apply(s, self.g, self.w)


@gt.graph(backend="sim")
def _follows(s, g, w, link):
    while link.child is not None:
        link = link.child
    axpy[1, 2, s](link.a, g, w)


def test_an_object_deeper_than_the_walk_goes_is_named_in_a_warning():
    """An object more than _MAX_DEPTH levels deep was left unwatched silently:
    a change to its settings replayed the old values without a word."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.DepthWarning)
        _Chained(5).step()                     # walked whole: no warning
    m = _Chained(12)
    with pytest.warns(gt.DepthWarning, match=r"self\.root(\.child){9} lies more than 8") as rec:
        m.step()
    assert rec[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.DepthWarning)
        m.step()                               # said once
    link = _Link()
    for _ in range(12):
        link = _Link(link)
    with pytest.warns(gt.DepthWarning, match="an object argument link holds"):
        _follows(dev(1, 1), dev(0, 0), link)


class _Built:
    def __init__(self):
        self.built, self.a, self.w, self.g = False, 1.0, dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        if not self.built:   # a lazy build, done once
            self.built = True
        axpy[1, 2, s](self.a, self.g, self.w)


def test_a_flag_the_first_trace_sets_is_a_setting_not_state():
    """``self.built = True`` flipped by the first trace warned StateWarning though
    the graph replays correctly."""
    m = _Built()
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        for _ in range(3):
            m.step()
    assert result(m.w) == [3.0, 3.0] and m.step.cache_info().misses == 1
    m.a = 2.0
    m.step()
    assert result(m.w) == [5.0, 5.0] and m.step.cache_info().misses == 2


_TICKED = None


def _tick():
    _TICKED.ticks += 1   # host-side bookkeeping: runs at every launch


class _Ticked:
    def __init__(self):
        self.ticks, self.opt, self.w, self.g = 0, SGD(-1.0), dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        self.opt.update(s, self.g, self.w)
        s.host(_tick)


def test_what_a_global_function_handed_to_host_changes_on_self_is_not_watched():
    """A global function handed to s.host bumping a counter on the model was read
    as a helper of the method: the counter was keyed, and every call traced anew."""
    global _TICKED
    _TICKED = m = _Ticked()
    try:
        for _ in range(4):
            m.step()
    finally:
        _TICKED = None
    assert m.ticks == 4 and result(m.w) == [4.0, 4.0] and m.step.cache_info().misses == 1


class _EpochLog:
    def __init__(self):
        self.epoch, self.lines = 0, []

    def record(self, h):
        self.lines.append((self.epoch, float(h[0])))   # read when it runs


class _LogsEpochs:
    def __init__(self):
        self.log, self.w, self.g = _EpochLog(), dev(0, 0), dev(1, 1)
        self.h = gt.pinned_empty(2, np.float64)

    @gt.graph(backend="sim")
    def step(self, s):
        axpy[1, 2, s](1.0, self.g, self.w)
        s.copy(self.h, self.w)
        s.host(self.log.record, self.h)

    def record(self, h):   # a method of the model's own by the callback's name, never run
        return self.epoch


def test_a_callback_of_a_held_object_named_like_a_method_of_self_reads_nothing_of_self():
    """s.host(self.log.record, h) beside a Model.record: the model's record was
    followed as a method the graph calls, its names read off the logger, and the
    epoch the loop sets between calls made every call trace anew."""
    m = _LogsEpochs()
    for epoch in range(3):
        m.log.epoch = epoch
        m.step()
    assert m.log.lines == [(0, 1.0), (1, 2.0), (2, 3.0)] and m.step.cache_info().misses == 1


@cuda.jit
def _double(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = 2.0 * src[i]


class _PingPong:
    def __init__(self):
        self.u, self.v, self.lazy = dev(1.0, 1.0), dev(0.0, 0.0), None

    @gt.graph(backend="sim")
    def step(self, s):
        if self.lazy is None:
            self.lazy = self.v   # set from None: no swap of arrays in use
        _double[1, 2, s](self.u, self.v)
        self.u, self.v = self.v, self.u


U_BUF, V_BUF = dev(1.0, 1.0), dev(0.0, 0.0)


@gt.graph(backend="sim")
def _global_ping_pong(s):
    global U_BUF, V_BUF
    _double[1, 2, s](U_BUF, V_BUF)
    U_BUF, V_BUF = V_BUF, U_BUF


def test_arrays_a_trace_swaps_on_self_or_in_globals_are_named_in_a_warning():
    """Ping-pong buffers swapped inside the traced code swap once, when traced:
    the replays do not swap. Said, naming them (not an attribute set from None)."""
    m = _PingPong()
    with pytest.warns(gt.StateWarning, match=r"tracing step rebound self\.u, self\.v to other "
                      r"arrays") as got:
        m.step()
    assert not any("self.lazy" in str(w.message) for w in got)
    with pytest.warns(gt.StateWarning, match=r"rebound U_BUF, V_BUF to other arrays"):
        _global_ping_pong()


class _PingPongList:
    def __init__(self):
        self.bufs = [dev(1.0, 1.0), dev(0.0, 0.0)]
        self.named = {"u": self.bufs[0], "v": self.bufs[1]}

    @gt.graph(backend="sim")
    def step(self, s):
        _double[1, 2, s](self.bufs[0], self.bufs[1])
        self.bufs[0], self.bufs[1] = self.bufs[1], self.bufs[0]

    @gt.graph(backend="sim")
    def step_named(self, s):
        _double[1, 2, s](self.named["u"], self.named["v"])
        self.named["u"], self.named["v"] = self.named["v"], self.named["u"]


BUFS = [dev(1.0, 1.0), dev(0.0, 0.0)]


@gt.graph(backend="sim")
def _global_list_ping_pong(s):
    _double[1, 2, s](BUFS[0], BUFS[1])
    BUFS.reverse()


def test_arrays_a_trace_swaps_in_a_list_or_dict_held_by_self_or_a_global_are_named():
    """Ping-pong buffers in a list or dict held by self or a global name, swapped
    inside the traced code: the real container swaps once, when traced, and the
    replays do not. Said as for self.u, self.v, naming the items."""
    m = _PingPongList()
    with pytest.warns(gt.StateWarning, match=r"tracing step rebound self\.bufs\[0\], "
                      r"self\.bufs\[1\] to other arrays"):
        m.step()
    with pytest.warns(gt.StateWarning, match=r"rebound self\.named\['u'\], "
                      r"self\.named\['v'\] to other arrays"):
        m.step_named()
    with pytest.warns(gt.StateWarning, match=r"rebound BUFS\[0\], BUFS\[1\] to other arrays"):
        _global_list_ping_pong()

def _swap_in_list(s, bufs):
    _double[1, 2, s](bufs[0], bufs[1])
    bufs[0], bufs[1] = bufs[1], bufs[0]


def _swap_in_dict(s, st):
    _double[1, 2, s](st["u"], st["v"])
    st["u"], st["v"] = st["v"], st["u"]


def _rotate_nested(s, cfg):
    _double[1, 2, s](cfg["bufs"][0], cfg["bufs"][1])
    cfg["bufs"].reverse()


@pytest.mark.parametrize("fn, make, arrays, where", [
    (_swap_in_list, lambda u, v: [u, v], list, "bufs[0], bufs[1] = "),
    (_swap_in_dict, lambda u, v: {"u": u, "v": v}, lambda h: list(h.values()),
     'st["u"], st["v"] = '),
    (_rotate_nested, lambda u, v: {"bufs": [u, v]}, lambda h: list(h["bufs"]),
     "def _rotate_nested")])
def test_a_list_or_dict_argument_a_trace_changes_is_named_at_its_line(fn, make, arrays, where):
    """The traced function is handed a copy of each list and dict argument: a swap
    in it happens once, on the copy, and the caller's container never swaps.
    Said (StateWarning), at the line of the swap (the function's where the change
    is deeper than the argument itself); a replay says nothing again."""
    step = gt.graph(backend="sim")(fn)
    held = make(dev(1.0, 1.0), dev(0.0, 0.0))
    before = arrays(held)
    with pytest.warns(gt.StateWarning, match=r"changed its list or dict argument "
                      r"(bufs|st|cfg\['bufs'\]) .* the caller's container is not "
                      r"changed") as got:
        step(held)
    lines = inspect.getsource(fn).splitlines()
    at = inspect.getsourcelines(fn)[1] + next(i for i, t in enumerate(lines) if where in t)
    assert [(w.filename, w.lineno) for w in got] == [(__file__, at)]
    assert all(map(operator.is_, arrays(held), before))   # the caller's: not swapped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step(held)   # a replay: said once, when traced


def _options_filled_and_consumed(s, x, opts):
    opts.setdefault("block", 2)
    verbose = opts.pop("verbose", False)   # a host-only option, taken out
    _double[1, opts["block"], s](x, x) if not verbose else _double[1, 2, s](x, x)


def _static_scale_rebound(s, x, opts):
    opts["scale"] = opts["scale"] * 2       # the caller's next call would see 4
    _double[1, 2, s](x, x)


@pytest.mark.parametrize("fn, opts, warns", [
    (_options_filled_and_consumed, {"verbose": False}, False),
    (_options_filled_and_consumed, {"block": 2}, False),
    (_static_scale_rebound, {"scale": 2}, True)])
def test_a_dict_argument_given_a_default_or_losing_a_plain_value_is_not_said(fn, opts, warns):
    """A default filled in or a plain option taken out of a dict argument changes
    no work the graph does for the caller's dict (a later call with the same dict
    computes as eagerly); a plain value rebound to another is said, since an eager
    later call would see the new one."""
    step = gt.graph(backend="sim", static=("opts",))(fn)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        step(dev(1.0, 1.0), opts)
    said = [w for w in got if issubclass(w.category, gt.StateWarning)]
    assert bool(said) is warns, [str(w.message) for w in said]


class _Opt:
    def __init__(self, lr):
        self.lr = lr

    def update(self, s, g, w):
        axpy[1, 2, s](self.lr, g, w)

    def other(self, s, g, w):
        axpy[1, 2, s](self.lr, g, w)


class _UpdateMixin:
    def update(self, s, g, w):
        axpy[1, 2, s](self.lr, g, w)


class _CallsBase(_Opt):
    def update(self, s, g, w):
        _Opt.update(self, s, g, w)   # the base's version, called explicitly


class _CallsMixin(_Opt, _UpdateMixin):
    def update(self, s, g, w):
        _UpdateMixin.update(self, s, g, w)


class _CallsBaseByGetattr(_Opt):
    def update(self, s, g, w):
        getattr(_Opt, "update")(self, s, g, w)


class _CallsBaseOther(_Opt):
    def other(self, s, g, w):   # overridden: reads nothing
        pass

    def update(self, s, g, w):
        _Opt.other(self, s, g, w)   # the base's other, not this class's


def _closure_base():
    class Base:
        def __init__(self, lr):
            self.lr = lr

        def update(self, s, g, w):
            axpy[1, 2, s](self.lr, g, w)

    class Sub(Base):
        def update(self, s, g, w):
            Base.update(self, s, g, w)   # the base by a closure name

    return Sub


_EXPLICIT = {"Base.update": _CallsBase, "Mixin.update": _CallsMixin,
             "getattr(Base)": _CallsBaseByGetattr, "Base.other": _CallsBaseOther,
             "closure Base": _closure_base()}
_EXPLICIT_OPT = None


@gt.graph(backend="sim")
def _explicit_global_step(s, g, w):
    _EXPLICIT_OPT.update(s, g, w)


@pytest.mark.parametrize("where", ["held", "global"])
@pytest.mark.parametrize("how", list(_EXPLICIT))
def test_what_a_bases_method_called_explicitly_reads_off_a_held_object_is_watched(how, where):
    """An override calling its base's version as ``Base.update(self, ...)`` (a
    mixin's, by ``getattr``, another method the class overrides): what that reads
    off the object (``self.lr``) replayed its first value, by ``self.opt`` or a
    global name alike."""
    global _EXPLICIT_OPT
    opt = _EXPLICIT[how](0.5)
    if where == "held":
        m = Model(opt)
        call, w = m.step, m.w
    else:
        _EXPLICIT_OPT, g, w = opt, dev(1, 1), dev(1, 1)
        call = functools.partial(_explicit_global_step, g, w)
    try:
        call()
        assert result(w) == [1.5, 1.5]
        opt.lr = 2.0
        call()
        assert result(w) == [3.5, 3.5]
    finally:
        _EXPLICIT_OPT = None


class _StepBase:
    def __init__(self):
        self.a, self.w, self.g = 0.5, dev(0, 0), dev(1, 1)

    @gt.graph(backend="sim")
    def step(self, s):
        axpy[1, 2, s](self.a, self.g, self.w)

    def plain(self, s):
        axpy[1, 2, s](self.a, self.g, self.w)

    def other(self, s):
        axpy[1, 2, s](self.a, self.g, self.w)


class _StepGraph(_StepBase):   # a graph override calling the base's graph method
    @gt.graph(backend="sim")
    def step(self, s):
        _StepBase.step(self, s)


class _StepPlain(_StepBase):   # a plain override, called by a graph method
    def plain(self, s):
        _StepBase.plain(self, s)

    @gt.graph(backend="sim")
    def run(self, s):
        self.plain(s)


class _StepOther(_StepBase):
    def other(self, s):   # overridden: reads nothing
        pass

    @gt.graph(backend="sim")
    def run(self, s):
        _StepBase.other(self, s)   # the base's, not this class's


@pytest.mark.parametrize("cls, method", [(_StepGraph, "step"), (_StepPlain, "run"),
                                         (_StepOther, "run")])
def test_what_a_bases_method_called_explicitly_reads_off_self_is_watched(cls, method):
    """``Base.step(self, s)`` in a graph method or in a method it calls, as
    ``super().step(s)`` is: ``self.a`` changed replayed the first value."""
    m = cls()
    call = getattr(m, method)
    call()
    assert result(m.w) == [0.5, 0.5]
    m.a = 2.0
    call()
    assert result(m.w) == [2.5, 2.5]


_PICK_GAIN = 1.0


class _PicksUpdate:
    """Dispatches through a function of its own kept on itself, picked in ``__init__``."""

    def __init__(self, how):
        self.lr, self.calls, self.w, self.g = 0.5, 0, dev(0, 0), dev(1, 1)
        if how == "bound":
            self.fn = self.update
        elif how == "lambda":
            self.fn = lambda s: self.update(s)
        elif how == "partial":
            self.fn = functools.partial(_PicksUpdate.update, self)
        elif how == "partial of the bound method":
            self.fn = functools.partial(self.update)
        elif how == "lambda default":
            self.fn = lambda s, me=self: me.update(s)
        elif how == "dict":
            self.ops = {"sgd": self.update}
            self.fn = lambda s: self.ops["sgd"](s)
        else:
            self.fn = [self.update]

    def update(self, s):
        self.calls += 1   # state it keeps: not watched
        axpy[1, 2, s](self.lr * _PICK_GAIN, self.g, self.w)

    @gt.graph(backend="sim")
    def step(self, s):
        for fn in self.fn if type(self.fn) is list else [self.fn]:
            fn(s)


@pytest.mark.parametrize("how", ["bound", "lambda", "partial", "partial of the bound method",
                                 "lambda default", "dict", "list"])
def test_what_a_method_of_self_kept_on_self_reads_is_watched(how):
    """``self.fn = self.update`` (or a lambda, a partial, a dict or list of them)
    called by the graph method: ``self.lr`` and the global ``_PICK_GAIN`` that
    ``update`` reads replayed their first values; the counter it keeps is state."""
    global _PICK_GAIN
    m = _PicksUpdate(how)
    before = m.step.cache_info().misses
    m.step()
    m.step()
    assert result(m.w) == [1.0, 1.0] and m.step.cache_info().misses == before + 1
    m.lr = 2.0
    m.step()
    assert result(m.w) == [3.0, 3.0]
    _PICK_GAIN = 2.0
    try:
        m.step()
        assert result(m.w) == [7.0, 7.0]
    finally:
        _PICK_GAIN = 1.0


class _HandsOwnCallback:
    """Keeps a method of its own on itself and hands it to ``s.host``."""

    def __init__(self, how):
        self.n, self.x = 0, dev(1, 2)
        self.fn = {"bound": self.count, "lambda": lambda h: self.count(h)}.get(how)
        self.cbs = [self.count] if how == "list" else {"a": self.count}

    def count(self, h):   # a callback: its counter is its state, not a setting
        self.n += 1

    @gt.graph(backend="sim")
    def step(self, s, h):
        s.copy(h, self.x)
        if self.fn is not None:
            s.host(self.fn, h)
        elif type(self.cbs) is list:
            for cb in self.cbs:
                s.host(cb, h)
        else:
            s.host(self.cbs["a"], h)


@pytest.mark.parametrize("how", ["bound", "lambda", "list", "dict"])
def test_a_callback_of_self_kept_on_self_is_traced_once(how):
    """A method of self kept on self but handed to ``s.host``, also from a list
    or dict, reads (and counts) when it runs: its counter is not watched, so the
    graph is traced once and the callback runs at every call."""
    m, h = _HandsOwnCallback(how), gt.pinned_empty(2, np.float64)
    before = m.step.cache_info().misses
    for _ in range(4):
        m.step(h)
    assert m.n == 4 and m.step.cache_info().misses == before + 1


_TABLE_OPT = SGD(0.5)
_TABLE = {"sgd": _TABLE_OPT.update}
_HOOKS = [_TABLE_OPT.update]


@gt.graph(backend="sim")
def _table_step(s, g, w):
    _TABLE["sgd"](s, g, w)


@gt.graph(backend="sim")
def _hooks_step(s, g, w):
    for hook in _HOOKS:
        hook(s, g, w)


_ORDERED = collections.OrderedDict(sgd=_TABLE_OPT.update)
_NESTED = {"opt": {"sgd": _TABLE_OPT.update}}
_PAIRS = [("sgd", _TABLE_OPT.update)]
_PARTIAL = functools.partial(_TABLE_OPT.update)


@gt.graph(backend="sim")
def _ordered_step(s, g, w):
    _ORDERED["sgd"](s, g, w)


@gt.graph(backend="sim")
def _nested_step(s, g, w):
    _NESTED["opt"]["sgd"](s, g, w)


@gt.graph(backend="sim")
def _pairs_step(s, g, w):
    for _, fn in _PAIRS:
        fn(s, g, w)


@gt.graph(backend="sim")
def _partial_step(s, g, w):
    _PARTIAL(s, g, w)


@pytest.mark.parametrize("step", [_table_step, _hooks_step, _ordered_step, _nested_step,
                                  _pairs_step, _partial_step])
def test_what_bound_methods_in_a_global_dict_or_list_read_off_their_object_is_watched(step):
    """``TABLE["sgd"](s, g, w)``, ``for h in HOOKS: h(s, g, w)``: the optimizer's
    ``lr`` changed replayed the first value (as ``FN = OPT.update`` did not)."""
    g, w = dev(1, 1), dev(1, 1)
    try:
        step(g, w)
        assert result(w) == [0.5, 0.5]
        _TABLE_OPT.lr = 0.25
        step(g, w)
        assert result(w) == [0.25, 0.25]
    finally:
        _TABLE_OPT.lr = 0.5


_COUNTER = Log()
_CALLBACKS = [_COUNTER.record]


@gt.graph(backend="sim")
def _hands_listed_callbacks(s, x, h):
    s.copy(h, x)
    for cb in _CALLBACKS:
        s.host(cb, h)


def test_bound_callbacks_in_a_global_list_are_traced_once():
    x, h = dev(1, 2), gt.pinned_empty(2, np.float64)
    before, calls = _hands_listed_callbacks.cache_info().misses, _COUNTER.calls
    for _ in range(4):
        _hands_listed_callbacks(x, h)
    assert _COUNTER.calls == calls + 4
    assert _hands_listed_callbacks.cache_info().misses == before + 1


class _LossLogged:
    def __init__(self):
        self.last_loss = 0.0

    def log(self):
        return self.last_loss   # read by this class's log alone


class _LossLogsNothing(_LossLogged):
    def log(self):   # overridden: reads nothing
        return 0.0

    @gt.graph(backend="sim")
    def step(self, s, out):
        if isinstance(self, _LossLogged):   # names the base, calls no method of it
            self.log()
        put[1, 2, s](out, 1.0)


def test_naming_a_base_follows_only_the_methods_read_off_it():
    """Naming the base (isinstance) followed every same-named base method: Base.log
    reads self.last_loss, which the program sets after each step, and every call
    traced anew."""
    m, out = _LossLogsNothing(), dev(0.0, 0.0)
    for k in range(5):
        m.step(out)
        m.last_loss = float(k)
    assert m.step.cache_info().misses == 1


class _RegistrySink:
    def record(self, h):
        pass


class _RegistryOpt:
    def __init__(self):
        self.lr = 1.0

    def update(self, s, w):
        put[1, 2, s](w, self.lr)


REGISTRY = {"cb": _RegistrySink().record, "opt": _RegistryOpt()}


def test_a_dict_a_callback_is_taken_from_keeps_its_other_objects_watched():
    """cb = REGISTRY["cb"]; s.host(cb, h) took the whole dict for a holder of
    callbacks, and the optimizer it also holds went unwatched (stale lr)."""
    @gt.graph(backend="sim")
    def step(s, w, h):
        cb = REGISTRY["cb"]
        s.host(cb, h)
        REGISTRY["opt"].update(s, w)

    w, h = dev(0.0, 0.0), gt.pinned_empty(2)
    step(w, h)
    REGISTRY["opt"].lr = 7.0
    step(w, h)
    assert result(w) == [7.0, 7.0]
