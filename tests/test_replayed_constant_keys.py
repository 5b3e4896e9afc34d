"""A flag kept in a dict under a key the code reads by a name (an enum member,
``ST[Phase.A]``; a module's constant, ``ST[KEY]``; a class's, ``ST[Keys.INIT]``)
is read and set as one under a literal key (``ST["init"]``) is: the graph is keyed
by the value the trace read, and each replay sets it again as the traced Python
did (``replayed_stores``). The dict was taken for state the code changes and
left out of the key, silently: the first call's work replayed at every call, or,
after a reset, never ran again and the flag stayed lowered."""
import collections
import dataclasses
import enum
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from graphtrace.chains import chain, value_chains
from graphtrace.first_reads import read_first


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def dev():
    return cuda.to_device(np.zeros(2))


def first(x):
    return float(x.copy_to_host()[0])


class Phase(enum.Enum):
    A = 1
    B = 2


class Keys:
    INIT = "init"


KEY = "init"

# the key each form reads, and the code that reads it
_KEYS = {"enum member": Phase.A, "module constant": KEY, "class constant": Keys.INIT}
ST = {k: False for k in _KEYS.values()}
HAS: dict = {}
GONE: dict = {}


@gt.graph(backend="sim")
def _by_enum(s, x):
    if not ST[Phase.A]:
        add[1, 2, s](x, 100.0)   # the first call's work alone
        ST[Phase.A] = True
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _by_module_constant(s, x):
    if not ST[KEY]:
        add[1, 2, s](x, 100.0)
        ST[KEY] = True
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _by_class_constant(s, x):
    if not ST[Keys.INIT]:
        add[1, 2, s](x, 100.0)
        ST[Keys.INIT] = True
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _tested_in(s, x):
    if Phase.A not in HAS:
        add[1, 2, s](x, 100.0)
        HAS[Phase.A] = True
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _read_by_get(s, x):
    if not HAS.get(Keys.INIT, False):
        add[1, 2, s](x, 100.0)
        HAS[Keys.INIT] = True
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _deleted(s, x):
    if KEY in GONE:
        add[1, 2, s](x, 100.0)
        del GONE[KEY]
    add[1, 2, s](x, 1.0)


def _mark(s, x):   # a helper the graph calls by name: its stores are the graph's
    if not ST[Phase.A]:
        add[1, 2, s](x, 100.0)
        ST[Phase.A] = True


@gt.graph(backend="sim")
def _in_a_helper(s, x):
    _mark(s, x)
    add[1, 2, s](x, 1.0)


def _closure():
    state = {Phase.B: False}

    @gt.graph(backend="sim")
    def step(s, x):
        if not state[Phase.B]:
            add[1, 2, s](x, 100.0)
            state[Phase.B] = True
        add[1, 2, s](x, 1.0)
    return step, state


_CLOSED, _CLOSED_STATE = _closure()

_GLOBAL_FORMS = {
    "enum member": (_by_enum, lambda: ST.__setitem__(Phase.A, False), lambda: ST[Phase.A]),
    "module constant": (_by_module_constant, lambda: ST.__setitem__(KEY, False),
                        lambda: ST[KEY]),
    "class constant": (_by_class_constant, lambda: ST.__setitem__(Keys.INIT, False),
                       lambda: ST[Keys.INIT]),
    "in test": (_tested_in, lambda: HAS.pop(Phase.A), lambda: HAS[Phase.A]),
    ".get": (_read_by_get, lambda: HAS.pop(Keys.INIT), lambda: HAS[Keys.INIT]),
    "del": (_deleted, lambda: GONE.__setitem__(KEY, True), lambda: KEY not in GONE),
    "in a helper": (_in_a_helper, lambda: ST.__setitem__(Phase.A, False),
                    lambda: ST[Phase.A]),
    "closure": (_CLOSED, lambda: _CLOSED_STATE.__setitem__(Phase.B, False),
                lambda: _CLOSED_STATE[Phase.B]),
}


def _nine_calls_with_resets(step, reset, flag):
    """Nine calls, the flag reset before the fourth and the seventh: eager code runs
    the first call's work at calls 0, 3 and 6, and leaves the flag set."""
    x = dev()
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # (nothing to say: every call is exact)
        for i in range(9):
            if i in (3, 6):
                reset()
            step(x)
            assert flag() is True
    assert first(x) == 3 * 100.0 + 9 * 1.0


@pytest.mark.parametrize("form", sorted(_GLOBAL_FORMS))
def test_a_flag_under_a_key_read_by_a_name_reset_by_the_user_runs_the_work_once_more(form):
    """The dict was left out of the key: the first call's work ran at every call
    (909), and the flag was never set again after a reset."""
    ST.update({k: False for k in _KEYS.values()})
    HAS.clear()
    GONE.clear()
    GONE[KEY] = True
    _CLOSED_STATE[Phase.B] = False
    step, reset, flag = _GLOBAL_FORMS[form]
    _nine_calls_with_resets(step, reset, flag)
    # a key tested, read by .get or deleted, never read as ST[k] first, costs one
    # trace more, as under a literal key: the first graph is keyed before the key
    # is known to decide work
    assert step.cache_info().misses == (3 if form in ("in test", ".get", "del") else 2)


class _Cfg:
    def __init__(self, key):
        self.state = {key: False}


OPT = _Cfg(Phase.A)


class _Model:
    def __init__(self, key):
        self.state = {key: False}
        self.cfg = _Cfg(key)

    @gt.graph(backend="sim")
    def on_self(self, s, x):
        if not self.state[Phase.A]:
            add[1, 2, s](x, 100.0)
            self.state[Phase.A] = True
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def through_a_local(self, s, x):
        st = self.state
        if not st[KEY]:
            add[1, 2, s](x, 100.0)
            st[KEY] = True
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def one_deeper(self, s, x):
        if not self.cfg.state[Keys.INIT]:
            add[1, 2, s](x, 100.0)
            self.cfg.state[Keys.INIT] = True
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def one_deeper_literal(self, s, x):
        if not self.cfg.state["init"]:
            add[1, 2, s](x, 100.0)
            self.cfg.state["init"] = True
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def on_a_held_object(self, s, x):
        if not OPT.state[Phase.A]:
            add[1, 2, s](x, 100.0)
            OPT.state[Phase.A] = True
        add[1, 2, s](x, 1.0)


_METHODS = {"self.state[Phase.A]": ("on_self", Phase.A, lambda m: m.state),
            "st = self.state; st[KEY]": ("through_a_local", KEY, lambda m: m.state),
            "self.cfg.state[Keys.INIT]": ("one_deeper", Keys.INIT, lambda m: m.cfg.state),
            "self.cfg.state['init']": ("one_deeper_literal", "init", lambda m: m.cfg.state),
            "OPT.state[Phase.A]": ("on_a_held_object", Phase.A, lambda m: OPT.state)}


@pytest.mark.parametrize("form", sorted(_METHODS))
def test_a_flag_kept_on_self_or_a_held_object_under_a_named_key_is_set_again(form):
    """Left out of the key (or, one level deeper, kept as state with a warning):
    after the reset the first call's graph replayed at every call, or never."""
    method, key, where = _METHODS[form]
    m = _Model(key)
    OPT.state[Phase.A] = False
    d = where(m)
    _nine_calls_with_resets(getattr(m, method), lambda: d.__setitem__(key, False),
                            lambda: d[key])


P = Phase   # another name of the enum
TWO = {"init": False, Phase.A: False}


@gt.graph(backend="sim")
def _read_by_a_name_set_by_a_literal(s, x):
    if not TWO[KEY]:
        add[1, 2, s](x, 100.0)
        TWO["init"] = True
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _read_by_a_literal_set_by_a_name(s, x):
    if not TWO["init"]:
        add[1, 2, s](x, 100.0)
        TWO[Keys.INIT] = True
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _set_by_an_alias(s, x):
    if not TWO[Phase.A]:
        add[1, 2, s](x, 100.0)
        TWO[P.A] = True
    add[1, 2, s](x, 1.0)


class _Spelled:
    def __init__(self):
        self.state = {"init": False}
        self.cfg = _Cfg("init")

    @gt.graph(backend="sim")
    def on_self(self, s, x):
        if not self.state[KEY]:
            add[1, 2, s](x, 100.0)
            self.state["init"] = True
        add[1, 2, s](x, 1.0)

    @gt.graph(backend="sim")
    def one_deeper(self, s, x):
        if not self.cfg.state["init"]:
            add[1, 2, s](x, 100.0)
            self.cfg.state[Keys.INIT] = True
        add[1, 2, s](x, 1.0)


_SPELLED = _Spelled()
_TWO_SPELLINGS = {
    "TWO[KEY], TWO['init']": (_read_by_a_name_set_by_a_literal, "init", TWO),
    "TWO['init'], TWO[Keys.INIT]": (_read_by_a_literal_set_by_a_name, "init", TWO),
    "TWO[Phase.A], TWO[P.A]": (_set_by_an_alias, Phase.A, TWO),
    "self.state[KEY], self.state['init']": (_SPELLED.on_self, "init", _SPELLED.state),
    "self.cfg.state['init'], [Keys.INIT]": (_SPELLED.one_deeper, "init", _SPELLED.cfg.state)}


@pytest.mark.parametrize("form", sorted(_TWO_SPELLINGS))
def test_a_flag_read_and_set_by_two_spellings_of_its_key_is_keyed_and_set_again(form):
    """A key read by a name may be any other key of the dict: the read under one
    spelling and the store under the other are one flag's."""
    step, key, d = _TWO_SPELLINGS[form]
    d[key] = False
    _nine_calls_with_resets(step, lambda: d.__setitem__(key, False), lambda: d[key])


class _Run:
    def __init__(self):
        self.d, self.t = {}, {("a", 1): False}


@gt.graph(backend="sim")
def _on_an_argument(s, x, run):
    if Phase.A not in run.d:
        add[1, 2, s](x, 100.0)
        run.d[Phase.A] = True
    add[1, 2, s](x, 1.0)


@gt.graph(backend="sim")
def _by_a_tuple_on_an_argument(s, x, run):
    if not run.t[("a", 1)]:
        add[1, 2, s](x, 100.0)
        run.t[("a", 1)] = True
    add[1, 2, s](x, 1.0)


def test_a_flag_under_a_named_key_of_an_argument_object_is_set_again():
    """Only an argument object's items under string and int keys were read before
    and after a trace: the flag was neither keyed nor set again."""
    run = _Run()
    _nine_calls_with_resets(lambda x: _on_an_argument(x, run), run.d.clear,
                            lambda: run.d[Phase.A])
    _nine_calls_with_resets(lambda x: _by_a_tuple_on_an_argument(x, run),
                            lambda: run.t.__setitem__(("a", 1), False),
                            lambda: run.t[("a", 1)])


TOGGLE = {Phase.A: False}


@gt.graph(backend="sim")
def _toggled(s, x):
    add[1, 2, s](x, 1.0 if TOGGLE[Phase.A] else 10.0)
    TOGGLE[Phase.A] = not TOGGLE[Phase.A]


def test_a_flag_toggled_under_a_named_key_alternates_between_two_graphs():
    """Left out of the key, the first graph (10.0) replayed at every call and the
    flag stayed where the trace left it."""
    TOGGLE[Phase.A] = False
    x = dev()
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(7):
            _toggled(x)
            seen.append(TOGGLE[Phase.A])
    assert first(x) == 4 * 10.0 + 3 * 1.0
    assert seen == [True, False] * 3 + [True]
    assert _toggled.cache_info().misses == 2


FLAGS = {"a": False, "b": False}
WHICH = "a"


@gt.graph(backend="sim")
def _by_a_rebound_name(s, x):
    if not FLAGS[WHICH]:
        add[1, 2, s](x, 100.0)
        FLAGS[WHICH] = True
    add[1, 2, s](x, 1.0)


def test_a_key_name_rebound_between_calls_reads_and_sets_the_other_flag():
    global WHICH
    FLAGS.update(a=False, b=False)
    WHICH = "a"
    x = dev()
    for i in range(4):
        if i == 2:
            WHICH = "b"
        _by_a_rebound_name(x)
    assert first(x) == 2 * 100.0 + 4 * 1.0 and FLAGS == {"a": True, "b": True}


BUFS = {"buf": cuda.to_device(np.zeros(2)), Phase.A: False}


@gt.graph(backend="sim")
def _beside_an_array(s, x):
    if not BUFS[Phase.A]:
        add[1, 2, s](x, 100.0)
        BUFS[Phase.A] = True
    add[1, 2, s](BUFS["buf"], 1.0)
    add[1, 2, s](x, 1.0)


def test_a_named_key_beside_an_array_in_the_dict_is_keyed_and_not_warned_of():
    """The dict, holding an array, is among the values a trace is checked for
    changing unseen (``unkeyed``): its flag, keyed under its name, is no such value."""
    BUFS[Phase.A] = False
    _nine_calls_with_resets(_beside_an_array, lambda: BUFS.__setitem__(Phase.A, False),
                            lambda: BUFS[Phase.A])


COUNTS = {Phase.A: 0}


@gt.graph(backend="sim")
def _counted(s, x):
    add[1, 2, s](x, float(COUNTS[Phase.A]))
    COUNTS[Phase.A] += 1   # marker: counted


def test_a_counter_under_a_named_key_is_state_said_at_the_call():
    """As under a literal key: a count the trace moved on is state, said once."""
    COUNTS[Phase.A] = 0
    with pytest.warns(gt.StateWarning, match=r"COUNTS\[Phase.A\]") as caught:
        _counted(dev())   # the call
    said = [w for w in caught if issubclass(w.category, gt.StateWarning)]
    assert len(said) == 1 and said[0].filename == __file__


CFG = {Phase.A: 1.0, "lr": 1.0}


@gt.graph(backend="sim")
def _reads_a_setting(s, x):
    add[1, 2, s](x, CFG[Phase.A])


def test_a_setting_read_under_a_named_key_and_changed_by_the_user_traces_anew():
    x = dev()
    for i in range(4):
        CFG[Phase.A] = float(i)
        _reads_a_setting(x)
    CFG["lr"] = 2.0   # not read: traces nothing
    _reads_a_setting(x)
    assert first(x) == 0.0 + 1.0 + 2.0 + 3.0 + 3.0
    assert _reads_a_setting.cache_info().misses == 4


def test_the_chain_under_a_named_key_is_labelled_by_the_name_and_read_first():
    """The key's name labels the chain (``ST[Phase.A]``, ``HAS.get(Keys.INIT)``), and
    the bytecode's reads of it are found by that name, before the store."""
    def labels(fn):
        reads, changed = value_chains(fn.__wrapped__.__code__)
        return ({str(chain(h, steps)) for h, steps in reads},
                {str(chain(h, steps)) for h, steps in changed})
    assert "HAS.get(Keys.INIT)" in labels(_read_by_get)[0]
    reads, changed = labels(_by_enum)
    assert "ST[Phase.A]" in reads and changed == {"ST[Phase.A]"}   # (not ST whole)
    assert read_first([_by_enum.__wrapped__], "ST[Phase.A]")
    assert read_first([_tested_in.__wrapped__], "HAS[Phase.A]")
    assert not read_first([_toggled.__wrapped__], "TOGGLE[Phase.B]")


_Pt = collections.namedtuple("_Pt", "a b")


@dataclasses.dataclass(frozen=True)
class _FrozenKey:
    a: int


_ODD_KEYS = {"numpy integer": np.int64(0), "namedtuple": _Pt(1, 2),
             "frozen dataclass": _FrozenKey(3), "builtin class": float}
K_ODD = None
T_ODD: dict = {}


@gt.graph(backend="sim")
def _reads_by_odd_key(s, x):
    add[1, 2, s](x, T_ODD[K_ODD])


@pytest.mark.parametrize("form", sorted(_ODD_KEYS))
def test_a_setting_read_by_a_name_holding_any_value_key_is_read_at_each_call(form):
    """Such a key read as no key at all: the chain read nothing, and the user's new
    setting was never seen (the first call's value replayed)."""
    global K_ODD, T_ODD
    K_ODD, T_ODD = _ODD_KEYS[form], {_ODD_KEYS[form]: 1.0}
    _reads_by_odd_key.clear_cache()
    x = dev()
    for i in range(6):
        if i == 3:
            T_ODD[K_ODD] = 5.0
        _reads_by_odd_key(x)
    assert first(x) == 1.0 * 3 + 5.0 * 3


_S_BUILTIN = {float: 1.0}


@gt.graph(backend="sim")
def _reads_by_builtin(s, x):
    add[1, 2, s](x, _S_BUILTIN[float])


def test_a_setting_read_by_a_builtin_name_key_is_read_at_each_call():
    x = dev()
    for i in range(4):
        _S_BUILTIN[float] = float(i)
        _reads_by_builtin(x)
    assert first(x) == 0.0 + 1.0 + 2.0 + 3.0
