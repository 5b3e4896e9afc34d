"""A temporary (or a dynamic scalar) left in a global of a helper module of the
program's own is refused at the trace, as one left in the function's own global
is: ``helper.CACHE = t`` was not, and the program kept an address the graph
reuses for other temporaries (or the number of the first call)."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
import kept_module
from helpers import line_of

F = __file__


@pytest.fixture(autouse=True)
def _clean():
    kept_module.clear()
    yield
    kept_module.clear()


def _set_attribute(s):
    kept_module.CACHE = s.empty(4)                   # kept-attr


def _set_item(s):
    kept_module.TABLE["t"] = [s.empty(4)]            # kept-item


def _imported_inside(s):
    import kept_module as km
    km.CACHE = s.empty(4)                            # kept-inside


def _by_its_function(s):
    kept_module.keep(s.empty(4))                     # kept-call


def _in_its_module(s):
    kept_module.SUB.CACHE = s.empty(4)               # kept-sub


def _appended_by_its_function(s):
    kept_module.remember(s.empty(4))                 # kept-append


def _set_by_a_computed_name(s):
    setattr(kept_module, "".join(["CA", "CHE"]), s.empty(4))   # kept-setattr


def _by_a_factory_s_function(s):
    kept_module.stash(s.empty(4))                    # kept-closure


def _by_a_partial(s):
    kept_module.stash_partial(s.empty(4))            # kept-partial


def _helper(s):
    kept_module.CACHE = s.empty(4)                   # kept-helper


def _through_helper(s):
    _helper(s)


CASES = [(_set_attribute, "kept-attr", "kept_module.CACHE"),
         (_set_item, "kept-item", "kept_module.TABLE"),
         (_imported_inside, "kept-inside", "kept_module.CACHE"),
         (_by_its_function, "kept-call", "kept_module.CACHE"),
         (_in_its_module, "kept-sub", "kept_module_sub.CACHE"),
         (_through_helper, "kept-helper", "kept_module.CACHE"),
         (_appended_by_its_function, "kept-append", "kept_module.KEPT"),
         (_set_by_a_computed_name, "kept-setattr", "kept_module.CACHE"),
         (_by_a_factory_s_function, "kept-closure", "kept_module.STORE"),
         (_by_a_partial, "kept-partial", "kept_module.PARTIAL_STORE")]


@pytest.mark.parametrize("body, marker, where", CASES, ids=[m for _, m, _ in CASES])
def test_a_temporary_left_in_a_helper_module_s_global_is_refused(body, marker, where):
    f = gt.graph(body)
    with pytest.raises(gt.TraceError) as e:
        f.trace()
    assert e.value.source == (F, line_of(F, marker)), str(e.value)
    assert f"kept by global {where} after the trace" in str(e.value)
    assert "s.copy it into an array passed in" in str(e.value)


def test_a_later_call_finding_the_refused_temporary_says_where_it_is_kept():
    """The refused temporary stays where the program put it: a later call finds
    it there, told where it is kept and what to do, and runs once it is dropped."""
    @gt.graph
    def f(s, x):
        kept_module.stash(s.empty(4))                # kept-later
        s.memset(x, 0)
    x = cuda.to_device(np.ones(4))
    with pytest.raises(gt.TraceError, match="kept by global kept_module.STORE after"):
        f(x)
    with pytest.raises(gt.TraceError) as e:
        f(x)                                         # kept-again
    assert "still kept by global kept_module.STORE, which f reaches as store[0]" \
        in str(e.value), str(e.value)
    assert "drop it from there" in str(e.value)
    assert e.value.source[1] == line_of(F, "kept-again")
    kept_module.STORE.clear()
    with pytest.raises(gt.TraceError) as e:
        f(x)   # traced again, refused again
    assert "kept by global kept_module.STORE after" in str(e.value)
    assert e.value.source == (F, line_of(F, "kept-later"))


def test_a_dynamic_scalar_left_in_a_helper_module_s_global_is_refused():
    @gt.graph
    def f(s, a):
        kept_module.CACHE = a
    with pytest.raises(gt.TraceError, match="kept_module.CACHE"):
        f(2.0)


def test_a_helper_module_holding_no_temporary_is_not_refused():
    kept_module.CACHE, kept_module.TABLE["n"] = np.zeros(3), 1.0

    @gt.graph
    def f(s):
        t = s.empty(4)
        kept_module.TABLE["m"] = t.shape             # its geometry: numbers
    f.trace()


def test_a_helper_module_s_globals_the_trace_leaves_alone_are_not_walked(monkeypatch):
    """A table of a helper module that the traced code never names nor rebinds
    cannot hold a temporary of its trace: it is not walked (a large one made
    every trace slow)."""
    import graphtrace.temporary as temporary
    walked, held_one = [], temporary.held_one

    def spy(value, *rest):
        walked.append(value)
        return held_one(value, *rest)
    monkeypatch.setattr(temporary, "held_one", spy)

    @gt.graph
    def f(s):
        t = s.empty(4)
        kept_module.TABLE["m"] = t.shape
    f.trace()
    assert any(v is kept_module.TABLE for v in walked)
    assert not any(v is kept_module.VOCAB for v in walked)


def test_a_helper_module_s_global_keyed_by_no_name_is_left_alone():
    @gt.graph
    def f(s):
        t = s.empty(4)
        kept_module.note_by_number(7)
        s.memset(t, 0)
    f.trace()

    @gt.graph
    def g(s):
        s.empty(4)
        kept_module.note_by_number(8)
        raise KeyError("the program's own error")
    with pytest.raises(KeyError, match="the program's own error"):
        g.trace()
