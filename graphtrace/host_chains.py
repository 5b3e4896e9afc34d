"""What a graph function's code hands to ``s.host(...)`` as the callback, found
in its bytecode: the names (``host_callbacks``), attribute chains
(``host_chains``, ``host_chain_names``), methods (``host_methods``,
``self_callbacks``) and parameters (``host_parameters``) it passes there,
also through ``partial``. A callback reads what it reads when it runs, not
when the graph is traced, so nothing it reads is baked into the graph:
``holding.py``, ``held.py``, ``names.py`` and ``reach.py`` leave it out of
what they watch. The code objects handed there (``chains.callback_codes``)
are found beside the value chains, which leave them out too.
"""
from __future__ import annotations

import dis
import types

from .chains import NAME_LOADS, _through_partial, callback_codes, nested_codes

__all__ = ["host_callbacks", "host_chain_names", "host_chains", "host_methods",
           "host_parameters", "self_callbacks"]


def host_callbacks(code) -> set:
    """The names ``code`` (and the code nested in it) hands to ``.host(...)`` as the
    callback (``s.host(fn, ...)``, ``s.host(partial(fn, ...), ...)``): host
    callbacks read what they read when they run, so nothing of it is baked into
    the graph (their settings and numbers are not watched)."""
    out, codes = set(), [code]
    while codes:
        c = codes.pop()
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        after = 0   # 1: just after .host; 2: after .host(partial or functools.partial
        for ins in dis.get_instructions(c):
            if after and _through_partial(ins):
                after = 2
                continue
            if after and ins.opname in NAME_LOADS:
                out.add(ins.argval)
            after = 1 if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and \
                ins.argval == "host" else 0
    return out


def host_chain_names(code) -> frozenset:
    """The attribute names on the way to each callback ``code`` (and the code
    nested in it) hands to ``.host(...)`` (``s.host(self.log.record, h)``: log and
    record; also through ``partial``): those of ``host_chains``."""
    return frozenset(step for _, steps in host_chains(code) for step in steps)


def host_chains(code) -> frozenset:
    """``(head, attributes)`` of each callback ``code`` (and the code nested in it)
    hands to ``.host(...)`` as a name's attribute chain (``s.host(self.log.record,
    h)``: ``("self", ("log", "record"))``; also through ``partial``)."""
    return frozenset((head, tuple(i.argval for i in steps))
                     for c in nested_codes(code) for head, steps in _host_chain_loads(c))


def host_methods(code) -> frozenset:
    """The attribute names ``code`` (and the code nested in it) names only as the
    last step of a chain it hands to ``.host(...)`` (``s.host(rec.add, h)``: add),
    nowhere else (no call, read or string of that name): methods that read what
    they read when they run."""
    hosted, other = set(), set()
    for c in nested_codes(code):
        last = {steps[-1].offset for _, steps in _host_chain_loads(c)}
        for ins in dis.get_instructions(c):
            if type(ins.argval) is str:
                (hosted if ins.offset in last else other).add(ins.argval)
    return frozenset(hosted - other)


def _host_chain_loads(c):
    """``(head, [attribute loads])`` of each callback code object ``c`` hands to
    ``.host(...)`` as a name's attribute chain (``host_chains``)."""
    after, head, steps = 0, None, []   # after: 1 just after .host, 2 after the head
    for ins in dis.get_instructions(c):
        op = ins.opname
        if after == 1 and _through_partial(ins):
            continue
        if after == 1 and (op.startswith("LOAD_FAST") or op in NAME_LOADS):
            after, head, steps = 2, ins.argval, []
            continue
        if after == 2 and op in ("LOAD_ATTR", "LOAD_METHOD"):
            steps.append(ins)
            continue
        if after == 2 and steps:
            yield head, steps
        after = 1 if op in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval == "host" else 0


def self_callbacks(code, self_param: str) -> frozenset:
    """The attributes of ``self_param`` that ``code`` (and the code nested in it)
    hands to ``.host(...)`` as the callback (``s.host(self.report, h)``, also
    through ``partial``): methods that read what they read when they run."""
    out, codes = set(), [code]
    while codes:
        c = codes.pop()
        codes.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        after = 0   # 1: just after .host (or its partial); 2: after self, the object
        for ins in dis.get_instructions(c):
            op = ins.opname
            if after == 1 and _through_partial(ins):
                continue
            if after == 1 and (op.startswith("LOAD_FAST") or op == "LOAD_DEREF") and \
                    ins.argval == self_param:   # (a cell where a lambda holds self)
                after = 2
                continue
            if after == 2 and op in ("LOAD_ATTR", "LOAD_METHOD"):
                out.add(ins.argval)
            after = 1 if op in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval == "host" else 0
    return frozenset(out)


def host_parameters(code, params) -> frozenset:
    """The parameters of ``params`` that ``code`` (and the code nested in it) hands
    to ``.host(...)`` as the callback (``s.host(cb)``, also through ``partial``;
    ``s.host(cbs["log"])``), or that a function it hands there loads
    (``s.host(lambda: cb(h))``): callbacks a call passes. A local taking its
    value off a parameter counts as that parameter (``_taken_from``)."""
    out, codes = set(), nested_codes(code)
    for c in codes:
        after = False   # just after .host (or its partial)
        for ins in dis.get_instructions(c):
            if after and _through_partial(ins):
                continue
            if after and (ins.opname.startswith("LOAD_FAST") or ins.opname == "LOAD_DEREF"):
                out.update(ins.argval if isinstance(ins.argval, tuple) else (ins.argval,))
            after = ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval == "host"
        for k in callback_codes(c):
            out.update(k.co_freevars)
    taken = _taken_from(codes, frozenset(params))
    return frozenset(taken.get(n, n) for n in out) & frozenset(params)


# What may come between a parameter's load and the store of a local taking its
# value (or an item of it) off it: for cb in cbs (.values(), .items(),
# enumerate(cbs)), a, b = cbs, cb = cbs[0]
# (enumerate(cbs, start=1): KW_NAMES on 3.11 and 3.12, CALL_KW on 3.13)
_TAKING = frozenset({"GET_ITER", "FOR_ITER", "UNPACK_SEQUENCE", "UNPACK_EX", "PRECALL",
                     "CALL", "KW_NAMES", "CALL_KW", "LOAD_CONST", "BINARY_SUBSCR", "CACHE",
                     "NOP", "EXTENDED_ARG", "PUSH_NULL"})


def _taken_from(codes, params) -> dict:
    """local -> parameter of ``params`` for each local of ``codes`` that takes its
    value off a parameter (or off such a local): a loop target over it or its
    ``.values()``/``.items()``, a name it is unpacked to, an item of it."""
    out: dict = {}
    for c in codes:
        source = None
        for ins in dis.get_instructions(c):
            op, names = ins.opname, ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            if op.startswith("LOAD_FAST") or op == "LOAD_DEREF":
                source = source or next((n if n in params else out[n] for n in names
                                         if n in params or n in out), None)
            elif source is not None and (op.startswith("STORE_FAST") or op == "STORE_DEREF"):
                out.update((n, source) for n in names if n not in params)
            elif not (op in _TAKING or op in ("LOAD_ATTR", "LOAD_METHOD") and
                      ins.argval in ("values", "items")):
                source = None
    return out
