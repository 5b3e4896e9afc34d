"""What does a block's work, and what a while loop's condition reads, for
``_loop_state.py``, ``_loop_slots.py`` and ``_loop_after.py``.

A kernel, a helper or a child graph's function held in a slot (``kern = add``,
``step = add_step``, ``m.k``, ``ops[0]``) is work the body records by running
it once, when it is recorded. A body that sets the slot to another one
(``kern = mul`` after ``kern[1, 4, body](x)``) would, run eagerly, launch that
other one in the next iteration, or after a branch not taken run the first:
``work_callable`` tells the values ``_slots`` keeps such a slot of, by their
identity; ``loads_on`` tells where the code loads one on a line that recorded
work (a launch, a call of a helper that recorded some, ``body.launch(k, ...)``,
``body.child(g, x)``); one loaded on another line into a value such a line
calls (``go = kern[1, 4, body]`` then ``go(x)``) is ``_Region.calls_by``'s.

A while loop's condition (the call's first argument, or its ``condition=``
keyword) is written on the ``with`` line, outside the body's code, and is
tested again before each iteration: ``condition_reads`` tells the slots its
expression reads (``lim`` of ``gt.cond(c) > lim``, ``c``), which a body
changing them would have tested against other values each iteration;
``condition_frames`` follows a condition a function of the program's hands on
(``def loop(s, cond, fn): s.while_loop(cond, body=fn)``) to the call in its
caller that wrote it (``loop(s, gt.cond(c) > lim, step)``).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import types
from functools import partial

from ..bytecode import instructions
from ..owners import _graph_class
from ._adapter import ADAPTERS, Adapter
from ._loop_callees import _method_load
from ._loop_flow import _Stored
from ._loop_operands import _CALLS, _ENTERS, _parameters, _read_by, _taken
from ._loop_stack import _ATTR_LOADS, _LOADS, _begin, _chain

_CONTEXTLIB = contextlib.__file__
_FUNCTIONS = (types.FunctionType, types.MethodType, partial)


def work_callable(v) -> bool:
    """Whether ``v`` is a kernel graphtrace launches (numba's, a cupy RawKernel, a
    cuda.core Kernel, one ``gt.kernel`` declares), a function, a bound method, a
    partial or a ``@gt.graph`` function: held by a slot compared by identity."""
    t = type(v)
    if isinstance(v, _FUNCTIONS) or _graph_class(t) or isinstance(v, Adapter):
        return True
    if t is type or isinstance(v, type):
        return False
    for accepts, _ in ADAPTERS:
        try:
            if accepts(v):
                return True
        except Exception:  # noqa: BLE001  (an object's own lookup raising: not a kernel)
            continue
    return False


@functools.lru_cache(maxsize=256)
def code_instructions(code) -> tuple:
    """``code``'s instructions, read once per code (a helper's, at each block)."""
    return instructions(code)


def loads_on(code, lo: int, hi: int, path: tuple, lines: set, keep=None) -> bool:
    """Whether the instructions of ``code`` strictly between the offsets ``lo`` and
    ``hi`` (``keep``: of those offsets only) load the slot at ``path`` on one of
    ``lines`` (those that recorded work)."""
    code_ins = code_instructions(code)
    return any(lo < ins.offset < hi and (keep is None or ins.offset in keep) and
               ins.positions is not None and
               ins.positions.lineno in lines and _chain(code_ins, k) == path
               for k, ins in enumerate(code_ins))


def _call_at(code_ins: list, lasti: int):
    """The index of the call instruction a frame standing at ``lasti`` runs (3.11:
    its PRECALL), or None where it stands at no call."""
    k = max((k for k, ins in enumerate(code_ins) if ins.offset <= lasti),
            default=None)   # (3.11: f_lasti may stand on the call's caches)
    if k is None or code_ins[k].opname not in _CALLS and \
            code_ins[k].opname != "CALL_FUNCTION_EX":
        return None
    if k > 0 and code_ins[k - 1].opname == "PRECALL":   # (3.11: the PRECALL is the call's)
        k -= 1
    return k


def _is_while_loop(frame, callee) -> bool:
    """Whether the instruction ``callee`` loads the ``while_loop`` method of a
    stream: ``s.while_loop``, or a name holding it (``loop = s.while_loop``)."""
    if callee is None:
        return False
    if callee.opname in _ATTR_LOADS:
        return callee.argval == "while_loop"
    if callee.opname not in _LOADS or isinstance(callee.argval, tuple):
        return False
    try:
        held = frame.f_globals.get(callee.argval) if callee.opname == "LOAD_GLOBAL" \
            else frame.f_locals.get(callee.argval, frame.f_globals.get(callee.argval))
        return type(held) is types.MethodType and \
            getattr(held.__func__, "__name__", None) == "while_loop"
    except Exception:  # noqa: BLE001  (a frame's locals unreadable: not known)
        return False


def condition_reads(frame) -> set:
    """The slots (paths) the condition of the ``s.while_loop(...)`` call ``frame``
    stands at reads: its first argument's code, or its ``condition=`` keyword's
    (``gt.cond(c) > lim``: ``c``, ``lim``; not ``max_iterations``). The call is
    the one running, whatever its name (``loop = s.while_loop`` then
    ``loop(cnd)``), never another ``s.while_loop`` of the same function; one the
    code does not show to be the stream's (``functools.partial``, ``*args``)
    reads what all its arguments read."""
    code_ins = code_instructions(frame.f_code)
    i = _call_at(code_ins, frame.f_lasti)
    if i is None:
        return set()
    n = _taken(code_ins[i])
    if code_ins[i].opname == "CALL_FUNCTION_EX":
        return _read_by(code_ins, i, n, _Stored(), {})
    j = _begin(code_ins, i, n)[0]
    exact = _is_while_loop(frame, code_ins[j - 1] if j > 0 else None)
    out: set = set()
    for key, end in _parameters(code_ins, i, n):
        if not exact or key in (0, "condition", None):   # (None: keywords unknown)
            out |= _read_by(code_ins, end, 1, _Stored(), {})
    return out


def _entered(frame):
    """``(the frame, the index of the call)`` that made the generator ``frame``
    runs where a ``with`` statement enters it through ``contextlib.contextmanager``
    (``with looping(s, gt.cond(c) > lim) as body``); None otherwise."""
    back = frame.f_back
    if not frame.f_code.co_flags & inspect.CO_GENERATOR or back is None or \
            back.f_code.co_filename != _CONTEXTLIB:
        return None
    gen = getattr(back.f_locals.get("self"), "gen", None)
    if getattr(gen, "gi_frame", None) is not frame:
        return None
    while back is not None and back.f_code.co_filename == _CONTEXTLIB:
        back = back.f_back
    if back is None:
        return None
    code_ins = code_instructions(back.f_code)
    k = max((k for k, ins in enumerate(code_ins) if ins.offset <= back.f_lasti), default=None)
    if k is None or k == 0 or code_ins[k].opname not in _ENTERS:
        return None
    i = _call_at(code_ins, code_ins[k - 1].offset)
    return (back, i) if i is not None else None


def condition_frames(frame, depth: int = 4) -> list:
    """``(frame, what its code reads for the condition)`` of the
    ``s.while_loop(...)`` call ``frame`` stands at (``condition_reads``), and,
    where that condition is a parameter of the frame's function (``def loop(s,
    cond, fn): s.while_loop(cond, body=fn)``), of the call handing it in each
    caller (``loop(s, gt.cond(c) > lim, step)``: ``c``, ``lim``; a
    ``@contextmanager`` helper's, ``with looping(s, gt.cond(c) > lim)``),
    ``depth`` frames up; so is an attribute or an item of a parameter it reads
    (``gt.cond(c) > st.lim``: what the caller hands for ``st``), where a body
    may change it, but not a parameter it reads whole (``def loop(s, c, lim,
    fn)`` testing ``gt.cond(c) > lim``): that holds what the caller handed,
    whatever the caller's names hold later."""
    out: list = []
    reads = condition_reads(frame)
    while reads:
        out.append((frame, reads))
        code = frame.f_code
        params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        whole = len({p[0] for p in reads}) == 1 and \
            all(k == "*" for p in reads for k, _ in p[1:])   # s.while_loop(cond, ...)
        handed = {p[0] for p in reads if p[0] in params and (
            whole or any(k in (".", "[]") for k, _ in p[1:]))}
        entered = _entered(frame)
        frame, depth = frame.f_back if entered is None else entered[0], depth - 1
        if not handed or frame is None or depth <= 0:
            break
        reads = _handed(frame, code, handed, None if entered is None else entered[1])
    return out


def _handed(frame, callee, names: set, k=None) -> set:
    """What the arguments the call ``frame`` stands at (``k``: the call at that
    index of its code) hands to the parameters ``names`` of ``callee`` (its code)
    read."""
    code_ins = code_instructions(frame.f_code)
    if k is None:
        k = _call_at(code_ins, frame.f_lasti)
    if k is None or code_ins[k].opname not in _CALLS:
        return set()
    n = _taken(code_ins[k])
    j = _begin(code_ins, k, n)[0]
    skip = 1 if j > 0 and _method_load(code_ins[j - 1]) else 0   # obj.loop(...): self
    positional = callee.co_varnames[:callee.co_argcount]
    out: set = set()
    for key, end in _parameters(code_ins, k, n):
        name = key if type(key) is str else positional[key + skip] \
            if type(key) is int and key + skip < len(positional) else None
        if name in names or key is None:   # (keywords unknown: any)
            out |= _read_by(code_ins, end, 1, _Stored(), {})
    return out
