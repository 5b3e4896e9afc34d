"""State a loop's body changes that a class or a module of the program's own
holds, and state that only a dict's order or a numpy object array holds.

A class used as a namespace (``Bufs.cur``), a counter kept on a class
(``Clock.t += 0.5``), a module's globals (``bufstate.cur``, swapped by its own
functions, ``pp.swap()``) and an object a module holds (``appstate.STATE.cur``)
hold Python state as an object does. Python runs a body once and the device
repeats that recording, so each program here ran every iteration on the
first one's arrays and numbers, where the same with a local or an object was
refused; now each is refused at the block's line. The programs beside them,
whose bodies change nothing of such state they read again, run as eagerly.
"""
import enum
import sys
import types

import numpy as np
import pytest

import graphtrace as gt
import loop_state_module as lsm
from flow_kernels import add, count, dev, host, shift
from graphtrace.owners import own_holder
from helpers import line_of
from loop_state_module import Stepper, pair, swap


class _Bufs:
    """Two arrays held by a class, used as a namespace."""
    cur = nxt = None

    @staticmethod
    def swap():
        _Bufs.cur, _Bufs.nxt = _Bufs.nxt, _Bufs.cur

    @classmethod
    def flip(cls):
        cls.cur, cls.nxt = cls.nxt, cls.cur

    @classmethod
    def pair(cls):
        return cls.cur, cls.nxt


class _Clock:
    """A time and a counter held by a class, and its classmethods changing them."""
    t, k = 0.0, 0

    @classmethod
    def tick(cls):
        cls.t += 0.5

    @classmethod
    def pick(cls, bufs):
        cls.k += 1
        return bufs[cls.k % 2], bufs[(cls.k + 1) % 2]


class _Base:
    cur = None


class _Derived(_Base):
    pass


def _swap_class():
    _Bufs.cur, _Bufs.nxt = _Bufs.nxt, _Bufs.cur


def _class_swap(s, a, b, n):
    _Bufs.cur, _Bufs.nxt = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # class swap
        shift[1, 4, body](_Bufs.cur, _Bufs.nxt)
        count[1, 1, body](n)
        _Bufs.cur, _Bufs.nxt = _Bufs.nxt, _Bufs.cur


def _class_swap_in_helper(s, a, b, n):
    _Bufs.cur, _Bufs.nxt = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # class swap in helper
        shift[1, 4, body](_Bufs.cur, _Bufs.nxt)
        count[1, 1, body](n)
        _swap_class()


def _class_staticmethod_swap(s, a, b, n):
    _Bufs.cur, _Bufs.nxt = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # class staticmethod swap
        shift[1, 4, body](_Bufs.cur, _Bufs.nxt)
        count[1, 1, body](n)
        _Bufs.swap()


def _classmethod_swap(s, a, b, n):
    _Bufs.cur, _Bufs.nxt = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # classmethod swap
        src, dst = _Bufs.pair()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        _Bufs.flip()


def _inherited_attribute(s, a, b, n):
    _Base.cur = a
    if "cur" in vars(_Derived):
        del _Derived.cur
    with s.while_loop(gt.cond(n) < 3) as body:   # inherited attribute
        shift[1, 4, body](_Derived.cur, b)
        count[1, 1, body](n)
        _Derived.cur = b


def _class_counter(s, a, b, n):
    _Clock.t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # class counter
        _Clock.t += 0.5
        add[1, 4, body](a, _Clock.t)
        count[1, 1, body](n)


def _classmethod_counter(s, a, b, n):
    _Clock.t = 0.0
    with s.while_loop(gt.cond(n) < 3) as body:   # classmethod counter
        _Clock.tick()
        add[1, 4, body](a, _Clock.t)
        count[1, 1, body](n)


def _class_counter_read_through_an_object(s, a, b, n):
    _Clock.t, clock = 0.0, _Clock()
    with s.while_loop(gt.cond(n) < 3) as body:   # class counter read through an object
        _Clock.t += 0.5
        add[1, 4, body](a, clock.t)
        count[1, 1, body](n)


def _classmethod_picks(s, a, b, n):
    _Clock.k, bufs = 0, [a, b]
    with s.while_loop(gt.cond(n) < 3) as body:   # classmethod picks
        src, dst = _Clock.pick(bufs)
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)


def _module_swap(s, a, b, n):
    lsm.cur, lsm.nxt = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # module swap
        shift[1, 4, body](lsm.cur, lsm.nxt)
        count[1, 1, body](n)
        lsm.cur, lsm.nxt = lsm.nxt, lsm.cur


def _module_functions_swap(s, a, b, n):
    lsm.init(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # module functions swap
        src, dst = lsm.pair()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        lsm.swap()


def _module_functions_by_name(s, a, b, n):
    lsm.init(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # module functions by name
        src, dst = pair()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        swap()


def _module_function_picks(s, a, b, n):
    lsm.init(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # module function picks
        src, dst = lsm.next_pair()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)


def _module_function_counter(s, a, b, n):
    lsm.init(a, b)
    with s.while_loop(gt.cond(n) < 3) as body:   # module function counter
        lsm.tick()
        lsm.launch_t(body, a)
        count[1, 1, body](n)


def _module_object_swap(s, a, b, n):
    lsm.OBJ.cur, lsm.OBJ.nxt = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # module object swap
        shift[1, 4, body](lsm.OBJ.cur, lsm.OBJ.nxt)
        count[1, 1, body](n)
        lsm.OBJ.cur, lsm.OBJ.nxt = lsm.OBJ.nxt, lsm.OBJ.cur


def _held_by_object(held):
    """A program reaching a class or a module only through an object's attribute."""
    def program(s, a, b, n):
        held.kind.cur, held.kind.nxt = a, b
        with s.while_loop(gt.cond(n) < 3) as body:   # held by object
            shift[1, 4, body](held.kind.cur, held.kind.nxt)
            count[1, 1, body](n)
            held.kind.cur, held.kind.nxt = held.kind.nxt, held.kind.cur
    return program


def _class_in_body_function_closure(s, a, b, n):
    bufs = _Bufs
    bufs.cur, bufs.nxt = a, b

    def sweep(body):
        shift[1, 4, body](bufs.cur, bufs.nxt)
        count[1, 1, body](n)
        bufs.flip()
    s.while_loop(gt.cond(n) < 3, body=sweep)   # class in body function closure


class _Solver:
    """A method whose body swaps the arrays of a class its object holds."""

    def __init__(self):
        self.bufs = _Bufs

    def run(self, s, a, b, n):
        self.bufs.cur, self.bufs.nxt = a, b
        with s.while_loop(gt.cond(n) < 3) as body:   # class held by self
            shift[1, 4, body](self.bufs.cur, self.bufs.nxt)
            count[1, 1, body](n)
            self.bufs.cur, self.bufs.nxt = self.bufs.nxt, self.bufs.cur


def _class_held_by_self(s, a, b, n):
    _Solver().run(s, a, b, n)


@pytest.mark.parametrize("program, marker, named", [
    (_class_swap, "class swap", "`_Bufs.cur` and `_Bufs.nxt`"),
    (_class_swap_in_helper, "class swap in helper", "`_Bufs.cur` and `_Bufs.nxt`"),
    (_class_staticmethod_swap, "class staticmethod swap", "`_Bufs.cur` and `_Bufs.nxt`"),
    (_classmethod_swap, "classmethod swap", "`_Bufs.cur` and `_Bufs.nxt`"),
    (_inherited_attribute, "inherited attribute", "_Derived.cur"),
    (_class_counter, "class counter", "`_Clock.t`,"),
    (_classmethod_counter, "classmethod counter", "`_Clock.t`,"),
    (_class_counter_read_through_an_object, "class counter read through an object",
     "`clock.t`,"),
    (_classmethod_picks, "classmethod picks", "`_Clock.k`,"),
    (_module_swap, "module swap", "`lsm.cur` and `lsm.nxt`"),
    (_module_functions_swap, "module functions swap", "changes `lsm.CUR` and `lsm.NXT`,"),
    (_module_functions_by_name, "module functions by name", "changes `lsm.CUR` and `lsm.NXT`,"),
    (_module_function_picks, "module function picks", "`lsm.K`,"),
    (_module_function_counter, "module function counter", "`lsm.T`,"),
    (_module_object_swap, "module object swap", "`lsm.OBJ.cur` and `lsm.OBJ.nxt`"),
    (_held_by_object(types.SimpleNamespace(kind=_Bufs)), "held by object",
     "changes `held.kind.cur` and `held.kind.nxt`,"),
    (_held_by_object(types.SimpleNamespace(kind=lsm)), "held by object",
     "changes `held.kind.cur` and `held.kind.nxt`,"),
    (_class_in_body_function_closure, "class in body function closure",
     "`bufs.cur` and `bufs.nxt`"),
    (_class_held_by_self, "class held by self", "`self.bufs.cur` and `self.bufs.nxt`"),
])
def test_state_a_class_or_module_holds_that_a_body_changes_and_reads_again_is_refused(
        program, marker, named):
    _refused_at(program, marker, named)


def _refused_at(program, marker, named):
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert named in str(e) and "Python runs the body once" in str(e), str(e)


def _classmethods_of_an_imported_class(s, a, b, n):
    with s.while_loop(gt.cond(n) < 3) as body:   # classmethods of an imported class
        src, dst = Stepper.pair()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        Stepper.swap()


def _methods_of_an_object(s, a, b, n):
    st = Stepper()
    with s.while_loop(gt.cond(n) < 3) as body:   # methods of an object
        src, dst = st.pair()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        st.flip()


@pytest.mark.parametrize("program, marker", [
    (_classmethods_of_an_imported_class, "classmethods of an imported class"),
    (_methods_of_an_object, "methods of an object"),
])
def test_module_globals_a_body_swaps_by_methods_called_through_an_attribute_are_refused(
        program, marker):
    """``Stepper.swap()`` and ``st.flip()`` swap the globals of the module their
    class is defined in (``global CUR, NXT``), which the program reaches by no
    name of its own: the globals of a method the body calls are watched as a
    helper's called by name are."""
    f = gt.graph(program, backend="sim")
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    lsm.init(a, b)
    with pytest.raises(gt.ArgumentError) as info:
        f(a, b, n)
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert "changes `CUR` and `NXT`," in str(e) and "Python runs the body once" in str(e), str(e)


class _Counting:
    """A property whose code counts its reads."""

    def __init__(self, a):
        self.a, self.reads = a, 0

    @property
    def src(self):
        self.reads += 1
        return self.a


def test_looking_for_the_helpers_a_body_calls_runs_no_property_of_the_program():
    """The helpers a body calls through an attribute (``st.step()``) are looked
    up without running the program's code: a property the body reads runs once,
    as Python runs the body once, not again when the block is entered or closed."""
    reads = []

    @gt.graph(backend="sim")
    def f(s, a, b, n):
        st = _Counting(a)
        with s.while_loop(gt.cond(n) < 3) as body:
            shift[1, 4, body](st.src, b)
            count[1, 1, body](n)
        reads.append(st.reads)

    f(dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    assert reads == [1]


class _Settings:
    """Settings a body reads, a counter it only counts, arrays fixed for the loop."""
    inc, trips, bufs = 1.0, 0, None

    @classmethod
    def bump(cls):
        cls.trips += 1

    @classmethod
    def pair(cls):
        return cls.bufs


def test_state_of_classes_and_modules_fixed_for_the_loop_or_only_counted_runs_as_eagerly():
    """A class's and a module's settings read, counters only counted on them
    (``_Settings.bump()``, ``lsm.K += 1``, ``lsm.tick()`` with no work taking
    ``T``), arrays a classmethod returns that the body leaves as they are, and
    a module's attribute set before the body reads it: each eager iteration
    does the same."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        lsm.init(a, b)
        _Settings.bufs = (a, b)
        with s.while_loop(gt.cond(n) < 3) as body:
            add[1, 4, body](a, _Settings.inc)
            src, dst = _Settings.pair()
            shift[1, 4, body](src, dst)
            lsm.cur = b
            add[1, 4, body](lsm.cur, 1.0)
            count[1, 1, body](n)
            _Settings.bump()
            lsm.K += 1
            lsm.tick()

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [3, 4, 5, 6] and host(b) == [5, 6, 7, 8] and host(n) == [3]


class _Phase(enum.Enum):
    RUN = 1


def test_only_classes_and_modules_of_the_program_are_walked_for_what_they_hold():
    """numpy, the standard library's modules and classes, enums and bags of
    attributes hold no state of the program's: their attributes are not read."""
    assert own_holder(_Bufs) and own_holder(lsm) and own_holder(_Derived)
    for v in (np, sys, types, enum, np.ndarray, dict, types.SimpleNamespace, _Phase, gt):
        assert not own_holder(v), v
    assert not own_holder(_Bufs()) and not own_holder(lsm.OBJ)


def _dict_reordered(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:   # dict reordered
        src, dst = d.values()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _object_array_reversed(s, a, b, n):
    bufs = np.empty(2, dtype=object)
    bufs[0], bufs[1] = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # object array reversed
        shift[1, 4, body](bufs[0], bufs[1])
        count[1, 1, body](n)
        bufs[:] = bufs[::-1].copy()


def _object_array_2d_swap(s, a, b, n):
    bufs = np.empty((1, 2), dtype=object)
    bufs[0, 0], bufs[0, 1] = a, b
    with s.while_loop(gt.cond(n) < 3) as body:   # object array 2d swap
        shift[1, 4, body](bufs[0, 0], bufs[0, 1])
        count[1, 1, body](n)
        bufs[0, 0], bufs[0, 1] = bufs[0, 1], bufs[0, 0]


@pytest.mark.parametrize("program, marker, named", [
    (_dict_reordered, "dict reordered", "changes the order of `d`,"),
    (_object_array_reversed, "object array reversed", "`bufs[0]` and `bufs[1]`"),
    (_object_array_2d_swap, "object array 2d swap", "`bufs[0, 0]` and `bufs[0, 1]`"),
])
def test_a_dicts_order_or_a_numpy_object_arrays_items_a_body_changes_is_refused(
        program, marker, named):
    _refused_at(program, marker, named)


def test_a_dict_reordered_read_by_key_or_an_object_array_left_alone_runs_as_eagerly():
    """A dict the body reorders but reads by key, and one that grows where the
    body reads the same keys; a numpy object array of arrays it only reads."""
    @gt.graph(backend="sim")
    def f(s, a, b, n):
        d, grown = {"a": a, "b": b}, {"a": a, "b": b}
        bufs = np.empty(2, dtype=object)
        bufs[0], bufs[1] = a, b
        with s.while_loop(gt.cond(n) < 3) as body:
            shift[1, 4, body](d["a"], d["b"])
            add[1, 4, body](grown["a"], 1.0)
            add[1, 4, body](bufs[1], 1.0)
            count[1, 1, body](n)
            d["a"] = d.pop("a")
            grown[len(grown)] = 0

    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    f(a, b, n)
    assert host(a) == [3, 4, 5, 6] and host(b) == [4, 5, 6, 7] and host(n) == [3]
