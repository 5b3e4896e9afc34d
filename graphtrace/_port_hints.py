"""What to write on the proxy stream instead of numba's eager spelling.

Code ported from eager numba keeps numba's calls: ``x.copy_to_device(h,
stream=s)``, ``cuda.to_device(h, stream=s)``, ``cuda.device_array(n,
stream=s)``, ``ev.record(s)``, ``y[:] = 0``. ``_guards`` refuses them inside a
trace; this module reads the user's line to say the proxy stream's spelling
with the user's own names (``s.copy(x, h)``), or with placeholders where the
line does not say them (a call spread over several lines). It runs only when
an error is raised.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import linecache

import numpy as np

from .arrays import is_array
from .errors import _PKG_DIR, user_frame, user_frame_object
from .probe import _ABSENT

__all__ = ["proxy_call", "setitem_hint", "event_hint", "stream_keyword_hint",
           "stored_attribute", "branch_hint", "imported_module", "import_hint"]


def _line_tree(source):
    """The parsed statement at the user's line, or None where it does not parse alone."""
    text = linecache.getline(*source).strip()
    if text.endswith(":"):   # with ...: / if ...:
        text += " pass"
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _text(node, default: str) -> str:
    return default if node is None else ast.unparse(node)


def _call(tree, names):
    """The first call on the line to a function or method named in ``names``, and the
    name its result is assigned to (None)."""
    if tree is None:
        return None, None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name in names:
                stmt = tree.body[0] if tree.body else None
                target = None
                if isinstance(stmt, ast.Assign) and stmt.value is node and \
                        len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    target = stmt.targets[0].id
                return node, target
    return None, None


def _arg(call, i: int, keyword: str):
    """The call's argument at position ``i`` or by ``keyword`` (None: not given)."""
    if call is None:
        return None
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    return call.args[i] if len(call.args) > i else None


def _keyword(call, keyword: str):
    return next((kw.value for kw in call.keywords if kw.arg == keyword), None)


def _receiver(call):
    return call.func.value if call is not None and isinstance(call.func, ast.Attribute) \
        else None


_PINNED = " (host memory pinned: gt.pinned_empty, passed as an argument)"


def _copy_to_device(call, target, s):
    return f"{s}.copy({_text(_receiver(call), 'x')}, {_text(_arg(call, 0, 'ary'), 'h')})" \
        + _PINNED


def _copy_to_host(call, target, s):
    return f"{s}.copy({_text(_arg(call, 0, 'ary'), 'h')}, " \
        f"{_text(_receiver(call), 'y')})" + _PINNED


def _to_device(call, target, s):
    h, d = _text(_arg(call, 0, "obj"), "h"), target or "d"
    return f"{d} = {s}.empty({h}.shape, {h}.dtype); {s}.copy({d}, {h})" + _PINNED + \
        ", or pass the device array as an argument"


def _device_array(call, target, s):
    shape = _text(_arg(call, 0, "shape"), "shape")
    dtype = _arg(call, 1, "dtype")
    made = f"{s}.empty({shape}" + (f", {ast.unparse(dtype)})" if dtype is not None else ")")
    return f"{target} = {made}" if target else made


def _device_array_like(call, target, s):
    a = _text(_arg(call, 0, "ary"), "a")
    made = f"{s}.empty({a}.shape, {a}.dtype)"
    return f"{target} = {made}" if target else made


_SPELLINGS = {"copy_to_device": _copy_to_device, "to_device": _to_device,
              "copy_to_host": _copy_to_host, "device_array": _device_array,
              "device_array_like": _device_array_like}
_DRIVER = {"host_to_device": "s.copy(device_array, host)" + _PINNED,
           "device_to_host": "s.copy(host, device_array)" + _PINNED,
           "device_to_device": "s.copy(dst, src)", "device_memset": "s.memset(dst, value)"}


def proxy_call(name: str, proxy_name: str | None = None) -> str:
    """The proxy stream's op for numba's call ``name`` given the proxy stream, read
    off the user's line where it says the call (numba-cuda's driver functions are
    called by numba's methods: the user's line names the method)."""
    source = user_frame(2)
    call, target = _call(_line_tree(source), _SPELLINGS)
    if call is None:
        return _DRIVER.get(name, "the op of the proxy stream (s.copy, s.memset, s.empty)")
    s = _text(_keyword(call, "stream"), proxy_name or "s")
    spell = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
    return _SPELLINGS[spell](call, target, s)


def setitem_hint() -> str:
    """For ``y[...] = v`` on a device array: fill it in the graph instead."""
    tree = _line_tree(user_frame(2))
    stmt = next((n for n in ast.walk(tree) if isinstance(n, ast.Assign)), None) \
        if tree is not None else None
    if stmt is not None and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Subscript):
        sub = stmt.targets[0]
        y, v = ast.unparse(sub.value), ast.unparse(stmt.value)
        idx = sub.slice
        if isinstance(idx, ast.Slice) and idx.lower is idx.upper is idx.step is None:
            view = y
        elif isinstance(idx, ast.Slice):
            view = f"{y}[{ast.unparse(idx)}]"
        else:
            return f"; to write {y} in the graph, launch a kernel on the proxy stream"
        if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, (int, float)):
            return f"; to fill {view} in the graph, write s.memset({view}, {v}) (s the proxy " \
                   "stream) or launch a kernel"
        return f"; to write {view} in the graph, s.copy({view}, src) or launch a kernel"
    return "; to write a device array in the graph, s.memset(y, value), s.copy(y, src) " \
           "or a kernel on the proxy stream"


def event_hint(method: str, proxy_name: str | None) -> str:
    """For numba's ``ev.record(s)`` / ``ev.wait(t)`` given a proxy stream."""
    call, _ = _call(_line_tree(user_frame(2)), {method})
    ev = _text(_receiver(call), "ev")
    given = _text(_arg(call, 0, "stream"), proxy_name or "s")
    spelled = ast.unparse(call) if call is not None else f"{ev}.{method}({given})"
    s, t = (given, "t") if method == "record" else ("s", given)
    return (f"{spelled} is numba's event on a proxy stream: numba's events are not "
            "recorded into a graph, so the order it stands for would be lost (a race). "
            f"Order proxy streams with their own calls: {t}.join({s}) makes {t}'s later "
            f"work wait for {s}'s work so far; {s}.record({ev}) and {t}.wait({ev}) do the "
            "same through an event (a cuda.core Event, Device().create_event(), on a GPU; "
            "numba's events cannot be put in a graph). With deps=\"data\" (the default) "
            "the data already orders the work: no call is needed")


def stream_keyword_hint(name: str) -> str:
    """For a call of graph function ``name`` given a stream as its first positional
    argument (``g(st, 2.0, x, y)``): how to run it on that stream, with the user's
    own names where the line says the call (``g(2.0, x, y, stream=st)``)."""
    call, _ = _call(_line_tree(user_frame(2)), {name})
    if call is None or not call.args or any(isinstance(a, ast.Starred) for a in call.args):
        return "; to run it on that stream, pass it as stream=: " \
            f"{name}(..., stream=st)"
    st = ast.unparse(call.args[0])
    fixed = ast.Call(call.func, call.args[1:], call.keywords + [
        ast.keyword("stream", call.args[0])])
    return f"; to run it on stream {st}, pass it as stream={st}: {ast.unparse(fixed)}"


def stored_attribute(name: str) -> str | None:
    """The attribute the user's line stores the result of a call of ``name`` in
    (``self.buf`` for ``self.buf = cuda.device_array(2)``), or None."""
    tree = _line_tree(user_frame(2))
    call, _ = _call(tree, {name})
    stmt = tree.body[0] if tree is not None and tree.body else None
    if call is None or not isinstance(stmt, ast.Assign) or stmt.value is not call or \
            len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Attribute):
        return None
    return ast.unparse(stmt.targets[0])


def _branch_test(source):
    """``(kind, test)`` of the ``while``, ``if`` or ``elif`` statement, or the
    conditional expression, at the user's line (None where there is none)."""
    text = linecache.getline(*source).strip()
    if text.startswith("elif "):
        text = text[2:]
    tree = None
    for whole in (text, text + "\n pass"):   # a header's body on a line of its own
        try:
            tree = ast.parse(whole)
            break
        except SyntaxError:
            continue
    if tree is None:
        return None
    stmt = tree.body[0] if tree.body else None
    if isinstance(stmt, (ast.While, ast.If)):
        return ("while" if isinstance(stmt, ast.While) else "if"), stmt.test
    found = next((n for n in ast.walk(tree) if isinstance(n, ast.IfExp)), None)
    return ("if", found.test) if found is not None else None


# The test of a device loop or branch where the user's line is not one element of a
# 1-d device array by a constant index compared with a host value: a placeholder no
# one takes for their own names.
_GENERIC_COND = "gt.cond(<one-element device view>) > <bound>"
# Calls around an element read that only convert it: ``float(m[0]) > tol`` is
# ``gt.cond(m[0:1]) > tol``; int() only of an integer array's element (it truncates).
_CONVERSIONS = {"float": "fc", "bool": "biufc", "int": "biu"}


def _value(node, frame):
    """The value a name or attribute chain (``m``, ``self.state.m``) stands for in the
    user's frame, read without running the program's code (``_ABSENT``: none, or not
    such a chain)."""
    if isinstance(node, ast.Attribute):
        owner = _value(node.value, frame)
        try:
            return _ABSENT if owner is _ABSENT else \
                inspect.getattr_static(owner, node.attr, _ABSENT)
        except Exception:  # noqa: BLE001  (an object whose own lookup raises)
            return _ABSENT
    if not isinstance(node, ast.Name) or frame is None:
        return _ABSENT
    for names in (frame.f_locals, frame.f_globals, frame.f_builtins):
        if node.id in names:
            return names[node.id]
    return _ABSENT


def _is_device(v) -> bool:
    try:
        return v is not _ABSENT and is_array(v) and not isinstance(v, np.ndarray)
    except Exception:  # noqa: BLE001  (an object whose own lookup raises)
        return False


def _index(node):
    """The constant int index of a subscript (``0``, ``-1``), or None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        i = _index(node.operand)
        return None if i is None else -i
    v = node.value if isinstance(node, ast.Constant) else None
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _read(node, frame):
    """The element read inside calls that only convert it (``float(m[0])``,
    ``m[0].item()``), or None where a call does more."""
    while isinstance(node, ast.Call) and not node.keywords:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "item" and not node.args:
            node = f.value
            continue
        if not isinstance(f, ast.Name) or len(node.args) != 1 or \
                f.id not in _CONVERSIONS or _value(f, frame) is not getattr(builtins, f.id):
            return None
        array = _value(node.args[0].value, frame) \
            if isinstance(node.args[0], ast.Subscript) else _ABSENT
        if not _is_device(array) or np.dtype(array.dtype).kind not in _CONVERSIONS[f.id]:
            return None
        node = node.args[0]
    return node


def _element_cond(node, frame):
    """``gt.cond(m[i:i+1])`` for a read of one element of a 1-d device array by a
    constant index (``m[0]``, ``self.m[-1]``, ``float(m[0])``, ``m[0].item()``), or None."""
    node = _read(node, frame)
    if not isinstance(node, ast.Subscript):
        return None
    array, i = _value(node.value, frame), _index(node.slice)
    shape = getattr(array, "shape", None) if _is_device(array) else None
    if i is None or not isinstance(shape, tuple) or len(shape) != 1 or \
            not -shape[0] <= i < shape[0]:
        return None
    stop = None if i == -1 else ast.Constant(i + 1)
    view = ast.Subscript(node.value, ast.Slice(ast.Constant(i), stop))
    return ast.Call(ast.Attribute(ast.Name("gt"), "cond"), [view], [])


def _on_host(node, frame) -> bool:
    """Whether no name or attribute chain in ``node`` stands for a device array (nor
    for nothing the frame holds): a bound the host may compute."""
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Attribute)):
            v = _value(n, frame)
            if isinstance(n, ast.Name) and v is _ABSENT or _is_device(v):
                return False
    return True


_COND_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)   # what gt.cond compares by


def _as_cond(test, frame) -> str:
    """The user's test as a device condition, where it is one element read compared
    with a host value (either side) or the element alone; else the placeholder."""
    cond = _element_cond(test, frame)
    if cond is None and isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.ops[0], _COND_OPS):   # (not in, is: no device condition)
        left, right = test.left, test.comparators[0]
        cond = _element_cond(left, frame)
        if cond is not None and _on_host(right, frame):
            cond = ast.Compare(cond, test.ops, [right])
        elif cond is None and _on_host(left, frame):
            cond = _element_cond(right, frame)
            cond = None if cond is None else ast.Compare(left, test.ops, [cond])
        else:
            cond = None
    return _GENERIC_COND if cond is None else ast.unparse(cond)


def branch_hint(proxy_name: str | None = None) -> str:
    """For device data read on the host in a ``while``/``if`` test at the user's
    line: the device loop or branch that decides on the GPU instead."""
    frame = user_frame_object(2)
    found = None if frame is None else _branch_test(
        (frame.f_code.co_filename, frame.f_lineno))
    if found is None:
        return ""
    kind, test = found
    cond = _as_cond(test, frame)
    s = proxy_name or "s"
    shape = "" if cond != _GENERIC_COND else \
        " (the condition: a one-element view of a 1-d device array, alone or compared " \
        "with a host number)"
    if kind == "while":
        return (f". To loop on device data, loop on the device: with {s}.while_loop({cond}) "
                f"as body:{shape}, launching the loop's work on body (kern[grid, block, body]"
                "(...)); the condition is tested on the GPU before each iteration "
                "(max_iterations= bounds the trip count)")
    return (f". To branch on device data, branch on the device: with {s}.if_then({cond}) "
            f"as then:{shape}, launching the branch's work on then (kern[grid, block, then](...)); "
            f"{s}.if_else(...) as (then, otherwise) for both branches")


def imported_module() -> str | None:
    """The name of the module whose top level the user's line is, where the traced
    code imports it for the first time (``import helpers`` inside the graph
    function, its body making a device array): None where the line is a function's,
    or a module's imported otherwise than from the traced code."""
    f = user_frame_object(2)
    while f is not None and not f.f_code.co_filename.startswith(_PKG_DIR):
        back = f.f_back
        if f.f_code.co_name == "<module>" and back is not None and \
                back.f_code.co_filename.startswith("<frozen importlib"):
            name = f.f_globals.get("__name__")
            return name if isinstance(name, str) else None
        f = back
    return None


def import_hint(module: str) -> str:
    """For work refused at the top level of ``module``, imported inside the trace:
    import it before, binding the array the line makes to a global name of the
    graph function's file (``from helpers import SCRATCH``, the name read off the
    line), since an attribute of a module read in the graph function is refused."""
    tree = _line_tree(user_frame(2))
    stmt = tree.body[0] if tree is not None and tree.body else None
    target = stmt.targets[0].id if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], ast.Name) else "<name>"
    return (f"; this line is the top level of module {module}, run now because the "
            "graph function imports it for the first time. Import it at the top of the "
            "file, outside the graph function, so that it runs once, before any trace, "
            f"and bind its array to a global name there, from {module} import {target}, "
            f"for the graph function to read ({module}.{target} read there is an "
            "attribute of a module, which graphtrace does not watch), or pass the array "
            "as an argument")
