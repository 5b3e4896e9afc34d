"""A dict read whole (``if D:``, ``if "done" in D``) that the traced code changes by
an item of a constant key (``D["init"] = True``, ``D.setdefault("done", True)``,
``D.pop("k")``, ``del D["k"]``) is changed as ``D.update(init=True)`` changes it:
a flag where the change sits on one side of a test reading it (the graph keyed by
its items), whether a global, a closure's or ``self``'s. Before, the store was
watched as the key ``D["init"]`` alone, never read first, and the first graph was
replayed in silence. A memo filled by key stays silent."""
import textwrap
import warnings

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


class _Eager:   # the same code run eagerly on a numpy array
    def __getitem__(self, launch):
        return self

    def __call__(self, x, a):
        x += a


A1, A10 = "add[1, 2, s](x, 1.0)", "add[1, 2, s](x, 10.0)"
CASES = {   # name: (the container's first value, the body reading it as C)
    "else_store": ("{}", f"if C:\n    {A10}\nelse:\n    C['init'] = True\n    {A1}"),
    "else_setdefault": ("{}", f"if C:\n    {A10}\nelse:\n    C.setdefault('init', True)\n"
                              f"    {A1}"),
    "return_store": ("{}", f"if C:\n    return\nC['done'] = True\n{A1}"),
    "return_setdefault": ("{}", f"if C:\n    return\nC.setdefault('done', True)\n{A1}"),
    "not_store": ("{}", f"if not C:\n    C['x'] = 1\n    {A1}\n{A10}"),
    "pop": ("{'k': True}", f"if C:\n    C.pop('k')\n    {A1}\nelse:\n    {A10}"),
    "del": ("{'k': True}", f"if C:\n    del C['k']\n    {A1}\nelse:\n    {A10}"),
    "return_pop": ("{'k': True}", f"if not C:\n    return\nC.pop('k')\n{A1}"),
    "len_store": ("{'a': 1}", f"if len(C) > 1:\n    {A10}\nelse:\n    C['init'] = True\n"
                              f"    {A1}"),
    "in_return": ("{}", f"if 'done' in C:\n    return\nC['done'] = True\n{A1}"),
    "get_return": ("{}", f"if C.get('done'):\n    return\nC['done'] = True\n{A1}"),
    "stored_after": ("{}", f"if C:\n    {A10}\nC['init'] = True\n{A1}"),
    "memo": ("{}", "if 'w' not in C:\n    C['w'] = 2.0\nadd[1, 2, s](x, C['w'])"),
    "memo_get": ("{}", "v = C.get('w')\nif v is None:\n    v = C['w'] = 2.0\n"
                       "add[1, 2, s](x, v)"),
}


def _made(where, init, body, launch):
    """The body as a function of ``(s, x)`` reading the container as a global, a
    closure's or ``self.d``, and a way to read the container."""
    if where == "self":
        src = f"class M:\n    def __init__(self):\n        self.d = {init}\n" \
              f"    def body(self, s, x):\n" + textwrap.indent(body.replace("C", "self.d"), " " * 8)
        scope = {"add": launch}
        exec(src, scope)
        return scope["M"]
    if where == "global":
        src = f"C = {init}\ndef body(s, x):\n" + textwrap.indent(body, " " * 4)
        scope = {"add": launch}
        exec(src, scope)
        return scope["body"]
    src = f"def outer():\n    C = {init}\n    def body(s, x):\n" + \
        textwrap.indent(body, " " * 8) + "\n    return body\n"
    scope = {"add": launch}
    exec(src, scope)
    return scope["outer"]()


def _calls(where, init, body, graph, n=5):
    made = _made(where, init, body, add if graph else _Eager())
    x = cuda.to_device(np.zeros(2)) if graph else np.zeros(2)
    if where == "self":
        if graph:
            made.body = gt.graph(backend="sim")(made.body)
        m = made()
        call = m.body if graph else (lambda x: made.body(m, None, x))
    else:
        call = gt.graph(backend="sim")(made) if graph else (lambda x: made(None, x))
    for _ in range(n):
        call(x)
    return float(x.copy_to_host()[0]) if graph else float(x[0])


@pytest.mark.parametrize("where", ["global", "closure", "self"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_dict_changed_by_an_item_computes_what_eager_code_does(where, name):
    init, body = CASES[name]
    eager = _calls(where, init, body, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gt.StateWarning)
        assert _calls(where, init, body, True) == eager


D = {}


@gt.graph(backend="sim")
def _flag_in_else(s, x):
    if D:
        add[1, 2, s](x, 10.0)
    else:
        D["init"] = True
        add[1, 2, s](x, 1.0)


def test_a_dict_flag_emptied_by_the_user_runs_the_first_call_work_again():
    D.clear()
    _flag_in_else.clear_cache()
    x = cuda.to_device(np.zeros(2))
    for i in range(6):
        if i == 3:
            D.clear()
        _flag_in_else(x)
    assert float(x.copy_to_host()[0]) == 42.0 and D == {"init": True}


COUNTS = {}


@gt.graph(backend="sim")
def _counted(s, x):   # a count kept in a dict read whole: state, named
    if COUNTS:
        add[1, 2, s](x, 10.0)
    COUNTS["n"] = COUNTS.get("n", 0) + 1
    add[1, 2, s](x, 1.0)


def test_a_count_stored_in_a_dict_read_whole_is_named_as_state():
    COUNTS.clear()
    _counted.clear_cache()
    x = cuda.to_device(np.zeros(2))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            _counted(x)
    assert any(issubclass(q.category, gt.StateWarning) and "COUNTS" in str(q.message)
               for q in w)
