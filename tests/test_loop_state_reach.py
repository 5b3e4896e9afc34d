"""State a while loop's body changes and reaches its work by ways the code does
not spell as a read of it: an attribute or item set from it first, a property
computing from it, a list popped or an iterator advanced, a helper deciding
by it. Python runs a body once and the device repeats that recording, so each
of these ran every iteration on the first one's arrays and numbers; now each
is refused at the block's line. The programs beside them, whose bodies reach
through the same ways only what stays fixed for the loop, run as eagerly.
"""
import collections
import types

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host, shift
from helpers import line_of


class _Pair:
    """Two arrays and which of them is read: properties computing from it."""

    def __init__(self, a, b):
        self.bufs, self.i, self.trips = [a, b], 0, 0

    @property
    def src(self):
        return self.bufs[self.i]

    @property
    def dst(self):
        return self.bufs[1 - self.i]

    @property
    def first(self):
        return self.bufs[0]

    @property
    def label(self):
        return f"trip {self.trips}"

    def pick(self):
        return self.bufs[self.i], self.bufs[1 - self.i]

    def flip(self):
        self.i = 1 - self.i

    def head(self):
        return self.bufs[0]


def _attribute_from_counter(s, a, b, n):
    st, it = types.SimpleNamespace(w=0.0), 0
    with s.while_loop(gt.cond(n) < 3) as body:   # attribute from counter
        st.w = 1.0 / (it + 1)
        add[1, 4, body](a, st.w)
        count[1, 1, body](n)
        it += 1


def _setattr_from_counter(s, a, b, n):
    st, it = types.SimpleNamespace(w=1.0), 0   # (its first value: what it held)
    with s.while_loop(gt.cond(n) < 3) as body:   # setattr from counter
        setattr(st, "w", 1.0 / (it + 1))
        add[1, 4, body](a, st.w)
        count[1, 1, body](n)
        it += 1


def _item_from_counter(s, a, b, n):
    cfg, it = {"w": 0.0}, 0
    with s.while_loop(gt.cond(n) < 3) as body:   # item from counter
        cfg["w"] = it * 0.5 + 1.0
        add[1, 4, body](a, cfg["w"])
        count[1, 1, body](n)
        it += 1


def _property_pick(s, a, b, n):
    st = _Pair(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # property pick
        shift[1, 4, body](st.src, st.dst)
        count[1, 1, body](n)
        st.i = 1 - st.i


def _method_pick(s, a, b, n):
    st = _Pair(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # method pick
        src, dst = st.pick()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        st.flip()


def _list_pop(s, a, b, n):
    stack = [a, b, a, b]
    with s.while_loop(gt.cond(n) < 3) as body:   # list pop
        x = stack.pop()
        add[1, 4, body](x, 1.0)
        count[1, 1, body](n)


def _deque_popleft(s, a, b, n):
    queue = collections.deque([a, b, a, b])
    with s.while_loop(gt.cond(n) < 3) as body:   # deque popleft
        add[1, 4, body](queue.popleft(), 1.0)
        count[1, 1, body](n)


def _iterator_next(s, a, b, n):
    arrays = iter([a, b, a, b])
    with s.while_loop(gt.cond(n) < 3) as body:   # iterator next
        add[1, 4, body](next(arrays), 1.0)
        count[1, 1, body](n)


def _alternate(a, b):
    while True:
        yield a
        yield b


def _generator_next(s, a, b, n):
    arrays = _alternate(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # generator next
        add[1, 4, body](next(arrays), 1.0)
        count[1, 1, body](n)


def _ordered(body, a, b, k):
    if k % 2:
        shift[1, 4, body](b, a)
    else:
        shift[1, 4, body](a, b)


def _helper_decides(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # helper decides
        _ordered(body, a, b, k)
        count[1, 1, body](n)
        k += 1


def _helper_star_args(s, a, b, n):
    k = 0
    with s.while_loop(gt.cond(n) < 3) as body:   # helper star args
        args = (a, b, k)
        _ordered(body, *args)
        count[1, 1, body](n)
        k += 1


def _repeated(body, a, times):
    for _ in range(times):
        add[1, 4, body](a, 1.0)


def _helper_loops(s, a, b, n):
    k = 1
    with s.while_loop(gt.cond(n) < 3) as body:   # helper loops
        _repeated(body, a, k)
        count[1, 1, body](n)
        k += 1


class _Stepper:
    def __init__(self, a, b):
        self.a, self.b, self.k = a, b, 0

    def step(self, body):
        if self.k % 2:
            shift[1, 4, body](self.b, self.a)
        else:
            shift[1, 4, body](self.a, self.b)


def _method_decides(s, a, b, n):
    st = _Stepper(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # method decides
        st.step(body)
        count[1, 1, body](n)
        st.k += 1


PAIR, TURN = [], 0


def _next_pair():
    global TURN
    TURN += 1
    return PAIR[(TURN - 1) % 2], PAIR[TURN % 2]


def _global_picker(s, a, b, n):
    global TURN
    PAIR[:], TURN = [a, b], 0
    with s.while_loop(gt.cond(n) < 3) as body:   # global picker
        src, dst = _next_pair()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)


def _picker(bufs):
    k = 0

    def pick():
        nonlocal k
        k += 1
        return bufs[(k - 1) % 2], bufs[k % 2]
    return pick


def _closure_picker(s, a, b, n):
    pick = _picker([a, b])
    with s.while_loop(gt.cond(n) < 3) as body:   # closure picker
        src, dst = pick()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)


class _Picks:
    """Which array is read, given three calls deep (a property reading a method
    that reads another), by an item (``st[0]``, its ``__getitem__``) and by an
    attribute its ``__getattr__`` answers (``st.cur``)."""

    def __init__(self, a, b):
        self.bufs, self.i, self.trips = [a, b], 0, 0

    def index(self):
        return self.i

    def current(self):
        return self.index()

    @property
    def src(self):
        return self.bufs[self.current()]

    def __getitem__(self, k):
        return self.bufs[(self.i + k) % 2]

    def __getattr__(self, name):
        if name == "cur":
            return self.bufs[self.i]
        raise AttributeError(name)


class _PicksBase:
    @property
    def src(self):
        return self.bufs[self.i]


class _PicksBySuper(_PicksBase):
    def __init__(self, a, b):
        self.bufs, self.i = [a, b], 0

    @property
    def src(self):
        return super().src


def _super_property(s, a, b, n):
    st = _PicksBySuper(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # super property
        add[1, 4, body](st.src, 1.0)
        count[1, 1, body](n)
        st.i = 1 - st.i


def _deep_property(s, a, b, n):
    st = _Picks(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # deep property
        add[1, 4, body](st.src, 1.0)
        count[1, 1, body](n)
        st.i = 1 - st.i


def _own_item(s, a, b, n):
    st = _Picks(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # own item
        add[1, 4, body](st[0], 1.0)
        count[1, 1, body](n)
        st.i = 1 - st.i


def _own_item_by_name(s, a, b, n):
    st, k = _Picks(a, b), 0
    with s.while_loop(gt.cond(n) < 3) as body:   # own item by name
        add[1, 4, body](st[k], 1.0)
        count[1, 1, body](n)
        st.i = 1 - st.i


def _own_getattr(s, a, b, n):
    st = _Picks(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # own getattr
        add[1, 4, body](st.cur, 1.0)
        count[1, 1, body](n)
        st.i = 1 - st.i


def test_the_same_deep_reads_of_what_stays_fixed_run_as_eagerly():
    """The same property, item and ``__getattr__`` reads where the body changes
    only a count they do not read: each iteration records the same work."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        st = _Picks(a, b)
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](st.src, 1.0)
            add[1, 4, body](st[1], 2.0)
            add[1, 4, body](st.cur, 4.0)
            count[1, 1, body](n)
            st.trips += 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [15, 16, 17, 18] and host(b) == [6, 6, 6, 6]


class _DictSettings:
    """Settings kept in a dict and read as attributes (``cfg.dt``)."""

    def __init__(self, **kw):
        object.__setattr__(self, "_d", dict(kw))

    def __getattr__(self, k):
        try:
            return self._d[k]
        except KeyError:
            raise AttributeError(k) from None

    def __setattr__(self, k, v):
        self._d[k] = v


class _Proxy:
    """An object forwarding what it lacks to another."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)


def test_what_a_getattr_answers_through_is_read_for_that_attribute_alone():
    """Settings read through a ``__getattr__`` (a dict of them, a proxy forwarding
    to an object) beside a count the body keeps in the same dict or object: the
    work takes the same array and number each iteration. They were refused, the
    dict or the inner object taken as read whole."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        cfg = _DictSettings(x=a, dt=0.5, trips=0)
        inner = types.SimpleNamespace(src=b, trips=0)
        proxy = _Proxy(inner)
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](cfg.x, cfg.dt)
            add[1, 4, body](proxy.src, 2.0)
            count[1, 1, body](n)
            cfg.trips += 1
            inner.trips += 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [1.5, 2.5, 3.5, 4.5] and host(b) == [6, 6, 6, 6]


_Sel = collections.namedtuple("_Sel", "i")
_Buffers = collections.namedtuple("_Buffers", "src dst")


def _namedtuple_replaced(s, a, b, n):
    bufs, sel = [a, b], _Sel(0)
    with s.while_loop(gt.cond(n) < 3) as body:   # namedtuple replaced
        add[1, 4, body](bufs[sel.i], 1.0)
        count[1, 1, body](n)
        sel = sel._replace(i=1 - sel.i)


def _namedtuple_indexed(s, a, b, n):
    bufs, sel = [a, b], _Sel(0)
    with s.while_loop(gt.cond(n) < 3) as body:   # namedtuple indexed
        add[1, 4, body](bufs[sel[0]], 1.0)
        count[1, 1, body](n)
        sel = sel._replace(i=1 - sel.i)


class _Chosen(collections.namedtuple("_ChosenFields", "bufs i trips")):
    """A namedtuple whose property picks an array by a field."""

    @property
    def buf(self):
        return self.bufs[self.i]


def _namedtuple_property(s, a, b, n):
    sel = _Chosen([a, b], 0, 0)
    with s.while_loop(gt.cond(n) < 3) as body:   # namedtuple property
        add[1, 4, body](sel.buf, 1.0)
        count[1, 1, body](n)
        sel = sel._replace(i=1 - sel.i)


def _namedtuple_swapped(s, a, b, n):
    st = _Buffers(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # namedtuple swapped
        shift[1, 4, body](st.src, st.dst)
        count[1, 1, body](n)
        st = _Buffers(st.dst, st.src)


@pytest.mark.parametrize("program, marker, named", [
    (_deep_property, "deep property", "st.i"),
    (_own_item, "own item", "st.i"),
    (_own_item_by_name, "own item by name", "st.i"),
    (_super_property, "super property", "st.i"),
    (_own_getattr, "own getattr", "st.i"),
    (_namedtuple_replaced, "namedtuple replaced", "sel.i"),
    (_namedtuple_swapped, "namedtuple swapped", "st.src"),
    (_namedtuple_indexed, "namedtuple indexed", "sel.i"),
    (_namedtuple_property, "namedtuple property", "sel.i"),
    (_attribute_from_counter, "attribute from counter", "changes `it`,"),
    (_item_from_counter, "item from counter", "changes `it`,"),
    (_setattr_from_counter, "setattr from counter", "changes `it`,"),
    (_property_pick, "property pick", "st.i"),
    (_method_pick, "method pick", "st.i"),
    (_list_pop, "list pop", "len(stack)"),
    (_deque_popleft, "deque popleft", "len(queue)"),
    (_iterator_next, "iterator next", "the position of iterator `arrays`"),
    (_generator_next, "generator next", "the position of iterator `arrays`"),
    (_helper_decides, "helper decides", "changes `k`,"),
    (_helper_loops, "helper loops", "changes `k`,"),
    (_helper_star_args, "helper star args", "changes `k`,"),
    (_method_decides, "method decides", "st.k"),
    (_global_picker, "global picker", "changes `TURN`,"),
    (_closure_picker, "closure picker", "changes `pick.<k>`,"),
])
def test_state_a_body_reaches_its_work_by_otherwise_and_changes_is_refused(
        program, marker, named):
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert named in str(e) and "Python runs the body once" in str(e), str(e)


_Settings = collections.namedtuple("_Settings", "dt trips")


def test_a_namedtuple_of_settings_replaced_only_for_a_count_runs_as_eagerly():
    """A namedtuple of settings whose number the work takes stays fixed, and a
    count in it the body replaces reaches no work: each iteration records the
    same work."""
    @gt.graph(backend="sim")
    def f(s, a, n):
        cfg = _Settings(dt=0.5, trips=0)
        with s.while_loop(gt.cond(n) < 4) as body:
            add[1, 4, body](a, cfg.dt)
            count[1, 1, body](n)
            cfg = cfg._replace(trips=cfg.trips + 1)

    a, n = dev(0, 1, 2, 3), dev(0, dtype=np.int32)
    f(a, n)
    assert host(a) == [2, 3, 4, 5] and host(n) == [4]


def test_a_namedtuple_read_by_position_replaced_for_a_count_runs_as_eagerly():
    """A namedtuple's field read by position (bufs[sel[0]]), where the body
    replaces only a count it does not read: each iteration records the same work."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        bufs, sel = [a, b], _Settings(dt=1, trips=0)
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](bufs[sel[0]], 1.0)
            count[1, 1, body](n)
            sel = sel._replace(trips=sel.trips + 1)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [0, 1, 2, 3] and host(b) == [3, 3, 3, 3]


def test_a_namedtuple_property_replaced_for_a_count_runs_as_eagerly():
    """A namedtuple's property reading a field (ch.buf), where the body replaces
    only a count it does not read: each iteration records the same work."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        ch = _Chosen([a, b], 1, 0)
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](ch.buf, 2.0)
            count[1, 1, body](n)
            ch = ch._replace(trips=ch.trips + 1)

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [0, 1, 2, 3] and host(b) == [6, 6, 6, 6]


def test_an_item_by_a_name_fixed_for_the_loop_runs_as_eagerly():
    """st[k], k fixed for the loop, through a __getitem__ picking by st.i, where the
    body changes only a count it does not read: the same array each iteration."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        st, k = _Picks(a, b), 1
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](st[k], 1.0)
            count[1, 1, body](n)
            st.trips += 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [0, 1, 2, 3] and host(b) == [3, 3, 3, 3]


def _mode(body, a, b, mode):
    if mode == "forward":
        shift[1, 4, body](a, b)
    else:
        shift[1, 4, body](b, a)


def _labeler():
    k = 0

    def label():
        nonlocal k
        k += 1
        return ["x", "y"][k % 2]
    return label


def test_the_same_ways_reaching_only_what_stays_fixed_run_as_eagerly():
    """An attribute and an item set each iteration from numbers fixed for the
    loop, a property and a method reading attributes the body leaves alone (and
    a property reading a counter, only reported), a list popped and an iterator
    advanced only for labels, a closure's counter a helper changes only for a
    label, a helper deciding by a setting fixed for the loop: each eager
    iteration records the same work."""
    labels, log = ["c", "b", "a", "z"], []
    scale = 2.0

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        st, cfg, pair, it = types.SimpleNamespace(w=0.0), {"w": 0.0}, _Pair(a, b), 0
        names, label = iter(["x", "y", "z", "w"]), _labeler()
        with s.while_loop(gt.cond(n) < 3) as body:
            st.w = scale * 0.5                    # 1.0 each iteration
            cfg["w"] = scale                      # 2.0 each iteration
            add[1, 4, body](pair.head(), st.w)
            add[1, 4, body](pair.first, cfg["w"])
            _mode(body, a, b, "forward")
            count[1, 1, body](n)
            log.append((labels.pop(), next(names), pair.label, label()))
            pair.trips += 1
            it += 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [9, 10, 11, 12]             # three trips of + 1.0 + 2.0
    assert host(b) == [10, 11, 12, 13] and host(n) == [3]
    assert log == [("z", "x", "trip 0", "y")]     # the Python ran once


class _Fields:
    """Arrays fixed for the loop, given by a property and a method that also read a
    counter the body bumps, for a log line and an assert: not for what they give."""

    def __init__(self, a, b):
        self._u, self._v, self.it, self.max_it, self.lines = a, b, 100, 10 ** 6, []

    @property
    def u(self):
        self.lines.append(f"read u at {self.it}")
        return self._u

    @property
    def v(self):
        assert self.it < self.max_it
        return self._v

    def field(self, name):
        self.lines.append(f"it={self.it} field {name}")
        return {"u": self._u, "v": self._v}[name]


def _substeps(body, x, cfg):
    for _ in range(cfg.n_sub):
        add[1, 4, body](x, cfg.dt)


def _flagged(body, x, cfg):
    if cfg.flag:
        add[1, 4, body](x, cfg.dt)


def test_a_counter_only_logged_by_what_reaches_the_work_runs_as_eagerly():
    """A property and a method reading a counter the body bumps for a log line or
    an assert, and helpers handed an object holding it that read only its
    settings (range(cfg.n_sub), if cfg.flag, cfg.dt): each iteration gives the
    work the same arrays and numbers."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        fl = _Fields(a, b)
        cfg = types.SimpleNamespace(n_sub=1, flag=True, dt=0.25, it=100)
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](fl.u, 0.5)
            add[1, 4, body](fl.v, 0.5)
            shift[1, 4, body](fl.field("u"), fl.field("v"))
            _substeps(body, a, cfg)
            _flagged(body, a, cfg)
            count[1, 1, body](n)
            fl.it += 1
            cfg.it += 1

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    x, y = np.array([0.0, 1, 2, 3]), np.zeros(4)
    for _ in range(3):
        x += 0.5
        y += 0.5
        y[:] = x + 1
        x += 0.5
    assert host(a) == x.tolist() and host(b) == y.tolist() and host(n) == [3]
