"""The attributes a method's code sets on its ``self`` where no ``self.x = v``
says so: by ``setattr``/``delattr`` with a constant name (``setattr(self,
"started", True)``), on its class (``type(self).started = True``,
``self.__class__.n += 1``), or through its attributes' dict by a constant key
(``self.__dict__.pop("pending")``, ``del vars(self)["pending"]``). Told from the
bytecode, for ``names.self_chains``.
"""
from __future__ import annotations

import dis

from .chains import NAME_LOADS as _NAME_LOADS

__all__ = ["set_by_name"]


def set_by_name(code, param: str) -> list:
    """The attribute names ``code`` sets on its local ``param`` by ``setattr`` or
    ``delattr`` with a constant name (``setattr(self, "started", True)``), or on its
    class (``type(self).started = True``, ``self.__class__.n += 1``), which reads
    off ``self`` find too."""
    out, seen = [], []
    ins = [i for i in dis.get_instructions(code)
           if i.opname not in ("PUSH_NULL", "CACHE", "EXTENDED_ARG", "NOP", "PRECALL")]
    for at, i in enumerate(ins):
        seen = ins[max(0, at - 2):at + 1]
        if len(seen) == 3 and seen[0].opname in _NAME_LOADS and \
                seen[0].argval in ("setattr", "delattr") and \
                seen[1].opname.startswith("LOAD_FAST") and seen[1].argval == param and \
                seen[2].opname == "LOAD_CONST" and isinstance(seen[2].argval, str):
            out.append(seen[2].argval)
        if _its_class(seen, param):
            out += _stored_on(ins[at + 1:at + 8])
        elif _its_class(seen, param, "__dict__", "vars"):   # self.__dict__.pop("pending")
            out += _stored_in(ins[at + 1:at + 3])
    return out


def _its_class(seen, param: str, attr="__class__", function="type") -> bool:
    """Whether the instructions ``seen`` end by making ``param``'s class: ``type(self)``
    or ``self.__class__`` (or its ``attr`` or ``function`` of it: ``vars(self)``)."""
    if len(seen) < 2 or not (seen[-2].opname.startswith("LOAD_FAST") and
                             seen[-2].argval == param):
        return False
    if seen[-1].opname == "LOAD_ATTR":
        return seen[-1].argval == attr
    return len(seen) == 3 and seen[-1].opname == "CALL" and seen[-1].arg == 1 and \
        seen[0].opname in _NAME_LOADS and seen[0].argval == function


def _stored_in(after) -> list:
    """The key of a constant name the instructions ``after`` the making of a dict
    store or take away (``.pop("k")``, ``.setdefault("k", v)``, ``del d["k"]``)."""
    if len(after) < 2:
        return []
    a, b = after
    if a.opname in ("LOAD_ATTR", "LOAD_METHOD") and a.argval in ("pop", "setdefault") and \
            b.opname == "LOAD_CONST" and isinstance(b.argval, str):
        return [b.argval]
    return [a.argval] if a.opname == "LOAD_CONST" and isinstance(a.argval, str) and \
        b.opname in ("STORE_SUBSCR", "DELETE_SUBSCR") else []


def _stored_on(after) -> list:
    """The attribute the instructions ``after`` the making of an object store on it at
    once (``type(self).started = True``, ``del type(self).k``), or read, change and
    store (``type(self).n += 1``)."""
    if after and after[0].opname in ("STORE_ATTR", "DELETE_ATTR"):
        return [after[0].argval]
    if len(after) >= 2 and after[0].opname == "COPY" and after[1].opname == "LOAD_ATTR":
        name = after[1].argval
        if any(i.opname == "STORE_ATTR" and i.argval == name for i in after[2:]):
            return [name]
    return []
