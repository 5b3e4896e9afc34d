"""The global names a function reads and stores through its module's namespace
by constant keys (``by_globals``): ``globals()["A"]``, ``globals().get("B")``,
``"C" in globals()``, and the same through the module object itself,
``vars(ME).get("B")`` (``ME = sys.modules[__name__]``),
``getattr(sys.modules[__name__], "B", 1.0)``, ``sys.modules[__name__].B``; a
name not defined yet is watched as any global name is (``names._global_names``).
"""
from __future__ import annotations

import dis
from collections import namedtuple

__all__ = ["by_globals"]

_KEYED_CALLS = {"get": False, "setdefault": True, "pop": True}   # (True: stores it too)
_SKIPPED = ("CACHE", "PRECALL", "PUSH_NULL", "NOP", "EXTENDED_ARG")
_NAMES = ("LOAD_GLOBAL", "LOAD_NAME")

_Ins = namedtuple("_Ins", "opname argval arg")
_OWN = _Ins("OWN_MODULE", None, None)   # sys.modules[__name__]: the function's module
_GLOBALS = (_Ins("LOAD_GLOBAL", "globals", None), _Ins("CALL", None, 0))   # globals()
# vars(ME) of a global name: globals() where ME is the function's module, read only
# (of another object, the name it reads is watched for nothing: no state is told)
_VARS = (_Ins("LOAD_GLOBAL", "globals", None), _Ins("CALL", "vars", 0))


def _named(i, name: str) -> bool:
    return i.opname in _NAMES and i.argval == name


def _subscript(i) -> bool:
    return i.opname == "BINARY_SUBSCR" or i.opname == "BINARY_OP" and i.argrepr == "[]"


def _instructions(code) -> list:
    """The instructions of ``code`` (not those only the interpreter needs), with
    ``sys.modules[__name__]`` one ``_OWN``, and ``vars(...)`` of it or of a global
    name (``vars(ME)``, ``ME = sys.modules[__name__]``: a module of the program's
    holds itself by a name) ``globals()``."""
    out: list = []
    for i in dis.get_instructions(code):
        if i.opname in _SKIPPED:
            continue
        out.append(i)
        if _subscript(i) and len(out) >= 4 and _named(out[-4], "sys") and \
                out[-3].opname == "LOAD_ATTR" and out[-3].argval == "modules" and \
                _named(out[-2], "__name__"):
            out[-4:] = [_OWN]
        elif i.opname == "CALL" and i.arg == 1 and len(out) >= 3 and \
                _named(out[-3], "vars") and (out[-2] is _OWN or out[-2].opname in _NAMES):
            out[-3:] = _GLOBALS if out[-2] is _OWN else _VARS
    return out


def by_globals(code) -> tuple:
    """``(read, stored)``: the global names ``code`` itself reads and stores through
    ``globals()`` by constant keys (``globals()["A"]``, ``globals().get("B")``,
    ``"C" in globals()``; ``globals()["A"] = v``, ``del globals()["A"]``), or
    through its module (``_instructions``: ``vars(ME).get("B")``,
    ``getattr(sys.modules[__name__], "B", 1.0)``, ``sys.modules[__name__].B``)."""
    ins = _instructions(code)
    read, stored = set(), set()
    for n, i in enumerate(ins[:-1]):
        if i is _OWN:   # getattr(sys.modules[__name__], "B"), hasattr, .B
            after = ins[n + 1]
            if after.opname == "LOAD_CONST" and type(after.argval) is str and n and \
                    ins[n - 1].opname in _NAMES and ins[n - 1].argval in ("getattr", "hasattr"):
                read.add(after.argval)
            elif after.opname in ("LOAD_ATTR", "LOAD_METHOD") and type(after.argval) is str:
                read.add(after.argval)
            continue
        if i.opname not in _NAMES or i.argval != "globals" or \
                not ins[n + 1].opname.startswith("CALL") or ins[n + 1].arg:
            continue
        before, after = ins[n - 1] if n else None, ins[n + 2:n + 5]
        stores = stored if ins[n + 1].argval != "vars" else set()
        if before is not None and before.opname == "LOAD_CONST" and \
                type(before.argval) is str and after and after[0].opname == "CONTAINS_OP":
            read.add(before.argval)   # "C" in globals()
        if len(after) >= 2 and after[0].opname == "LOAD_CONST" and type(after[0].argval) is str:
            op = after[1].opname   # globals()["A"], = v, del
            (stores if op in ("STORE_SUBSCR", "DELETE_SUBSCR") else read).add(after[0].argval)
        elif len(after) >= 2 and after[0].opname in ("LOAD_METHOD", "LOAD_ATTR") and \
                after[0].argval in _KEYED_CALLS and after[1].opname == "LOAD_CONST" and \
                type(after[1].argval) is str:
            read.add(after[1].argval)   # globals().get("B"), .setdefault, .pop
            if _KEYED_CALLS[after[0].argval]:
                stores.add(after[1].argval)
    return read, stored
