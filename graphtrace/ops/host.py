"""Host callbacks: ``s.host(fn, *args)`` runs a Python function inside the graph.

The graph calls ``fn(*args)`` on a driver thread once everything it depends
on is done. Array arguments must be host memory (numpy arrays); they take
part in dependency inference like any other access (read and written unless
wrapped in ``gt.In``/``gt.Out``). The callback must not call CUDA.
"""
from __future__ import annotations

import warnings
from functools import partial
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType

from ..arrays import as_buffer, is_array
from ..buffers import Buffer, unwrap_intent
from .._guards import raised_at
from .._host_guard import plain
from ..context import in_callback
from ..errors import (ArgumentError, GraphtraceError, IntentError,
                      format_source, user_frame, user_frame_object)
from ..chains import MISSING, chain, value_chains
from ..names import _methods_named, attribute_names, name_chains
from ..owners import _attr, _attributes, _followed, _has, _library, class_held, class_of, \
    held_attributes, own_holder, own_object
from ..scalar import Scalar
from ..temporary import held_temporaries, holder_of, is_temporary, is_virtual
from ..tree import leaves, tree_map
from ._held_changes import may_change, may_change_argument
from ._host_held import held_argument_error
from ._host_calls import Calls
from ._host_uses import _reaches_by, _used_in, _uses, as_method, method_codes
from .base import Op, bound_arguments, callable_name, changed, read_only_bytes, record_args

__all__ = ["record_host", "host_value", "reached_arrays", "HOST_CALLBACK"]


def record_host(stream, fn, args, opaque=None):
    """Record a host callback ``fn(*args)`` on a proxy stream (``Stream.host``).

    In data mode host callbacks run in the order they were recorded (each reads
    and writes ``Tracer.host_order``), and one handed no memory and reaching
    none (a progress report, a "done" signal) is opaque unless ``opaque=False``:
    it runs after the work recorded before it and before the work recorded
    after it, as it would one after another. In streams mode their streams
    order them, as any node."""
    t = stream.tracer()
    if not callable(fn):
        raise ArgumentError(
            f"s.host takes the function to run first, and was given {_not_callable(t, fn)}: "
            "s.host(fn, *args) calls fn(*args) when the graph runs; pass the function, "
            "then its arguments (s.host(fn, h))")
    if _attr(fn, "_graphtrace_graph", False) is True:
        raise ArgumentError(
            f"s.host({_name(fn)}, ...): {_name(fn)} is a graph function, which a host "
            "callback cannot launch (the driver runs callbacks where no GPU work may be "
            f"issued); call {_name(fn)}(s, ...) to record its ops into this graph, or "
            f"s.child({_name(fn)}, ...) for a child graph")
    _warn_copies(fn, args)
    _refuse_passed(t, fn)
    rec, accesses = record_args(t, args, lambda i: "rw", _host_only(fn))
    held = [(f"argument {i}'s {what}", v, True) for i, a in enumerate(args)
            for what, v in _object_attributes(a)]   # an object passed as itself
    accesses = list(accesses) + _reached(t, fn, bool(opaque), held)
    data = t.mode_of(stream.scope) == "data"   # (streams: their order alone)
    attrs = None
    if opaque is None:   # handed no memory: ordered as written, with everything (a
        opaque = data and not accesses   # barrier in its scope alone: it touches no
        attrs = {"barrier": True} if opaque else None   # memory, which a child of it
    if data and not opaque:                              # does not either: touches_any)
        accesses.append((t.host_order(), "rw"))
    for i, a in enumerate(args):   # an object that holds a temporary would keep it
        tmp = holder_of(a, t)
        if tmp is not None:
            raise ArgumentError(f"argument {i} of host callback {_name(fn)} holds "
                                f"temporary {tmp._life.where()}{_TEMPORARY}")
    return t.record(HOST_CALLBACK, fn, rec, tuple(accesses), stream=stream.index,
                    scope=stream.scope, opaque=opaque, attrs=attrs)


def _not_callable(t, v) -> str:
    """What a program handed ``s.host`` in place of the callback, as it wrote it."""
    if isinstance(v, Scalar):
        return f"the number {v.name}"
    if _is_array_quietly(v):
        buf = t.cached_buffer(v)
        named = f" {buf.label}" if buf is not None and buf.label else ""
        return f"the {'host' if _is_host(v) else 'device'} array{named}"
    if isinstance(v, str):
        return f"the string {v!r} (pass the function itself, not its name)"
    if v is None or isinstance(v, (bool, int, float, complex)):
        return repr(v) if v is None else f"the number {v!r}"
    return f"an object of class {type(v).__qualname__}, which is not callable"


def _reached(t, fn, opaque: bool, more=()) -> list:
    """The accesses of host arrays of this trace that ``fn`` reaches by its own
    global names (read and written, unless the callback is opaque: ordered with
    all); an error for an argument's host array (or a view of one) that it holds
    (closure, ``partial``, a bound method's or callable object's attributes, an
    object passed to it: ``more``), which a later call with new arrays rebinds
    without tracing again: the callback would keep the first one; a warning for
    a list or dict argument it holds (the copy the graph function was handed).
    An error too for device memory it holds or reads (``_refuse_device``)."""
    out, loaded = [], []
    for name, v, held in (*_names_of(fn), *more):
        if held and id(v) in t.copies and may_change(fn, name, v):
            _warn_held_copy(fn, name, t.copies[id(v)], t.name)
        if held:   # a closure, partial or bound object keeping one
            _refuse_temporary(t, fn, name, v, loaded)
        number = next((x for x in leaves(v) if isinstance(x, Scalar)), None) if held else None
        if number is not None:   # the graph's placeholder: each call's number is other
            raise ArgumentError(
                f"host callback {_name(fn)} holds the number {number.name} of this graph by "
                f"{name}: it would receive a placeholder, not each call's number; pass it "
                f"to s.host as an argument, which the callback receives as a parameter: "
                f"s.host(fn, {number.name})")
        _refuse_device(t, fn, name, v, held, loaded)
        for x, buf in ((x, b) for x in leaves(v) if is_array(x) for b in _host_buffers(t, x)):
            if held and t.is_argument(buf) and id(x) not in t.callback_arrays:
                raise held_argument_error(t, _name(fn), fn, name, x, buf)
            if not opaque:
                out.append((buf, "rw"))
    return out


def _refuse_device(t, fn, name: str, v, held: bool, used: list) -> None:
    """Refuse a device array callback ``fn`` holds by ``name`` (a closure, default or
    ``partial`` argument, as ``s.host(fn, d)`` is), reads by a global name (``D``,
    ``STATE.d``), or holds or reaches as an object's attribute (``self.d``), where
    its code uses it (``_used``): the graph cannot order it after the kernels
    writing it, nor rebind it, and a callback may make no CUDA call; one in a
    list, tuple or dict held so too (``partial(cb, [d])``), or whose items its code
    reads off, indexes or hands to a call (``held[0].copy_to_host()``). ``used``:
    those names, found at the first device array."""
    d = next((x for x in leaves(v) if _is_device(x)), None)
    if d is None:
        return
    if not used:
        used.append(_used(fn))
    if not name.startswith(("partial argument", "default argument")) and \
            not _uses(name, used[0], item=d is not v, keys=_device_keys(v)):
        return   # one its code never names, or only moves (a swap of buffers)
    buf = t.cached_buffer(d)
    raise ArgumentError(
        f"host callback {_name(fn)} {'holds' if held else 'reads'} device memory "
        f"({buf.label if buf is not None and buf.label else 'a device array'}) by "
        f"{name}: {_DEVICE}, and pass that to s.host as an argument, which the callback "
        f"receives as a parameter: s.host(fn, h)")


def _refuse_temporary(t, fn, name: str, v, used: list) -> None:
    """Refuse a temporary callback ``fn`` holds by ``name``, itself or in what ``v``
    holds (``self.model.a`` of a bound method's object), where its code reaches it,
    as ``_refuse_device`` refuses a device array: always by a ``partial`` or default
    argument; else where its code, or a method it names, uses the path to it
    (``self.model.a``, ``held[0]``), or the attributes reaching it past the last
    container (a method of the object holding it reading ``self.a``). One its code
    never reaches (an activation a layer caches for its backward) is left alone.
    ``used``: ``_used(fn)``, found at the first temporary or device array."""
    if holder_of(v, t) is None:
        return
    for steps, tmp in held_temporaries(v, t):
        if not used:
            used.append(_used(fn))
        if name.startswith(("partial argument", "default argument")) or \
                _reaches_by(name, steps, used[0]):
            at = "".join(f".{k}" if how == "attr" else "[...]" if k is None else
                         f"[{max(k)!r}]" for how, k in steps)
            raise ArgumentError(f"host callback {_name(fn)} holds temporary "
                                f"{tmp._life.where()} by {name}{f' ({at})' if at else ''}"
                                f"{_TEMPORARY}")


def _device_keys(v):
    """The keys (indexes) of a dict (list, tuple) ``v`` whose items hold device
    arrays; None for another value (any item read counts)."""
    if isinstance(v, dict):
        return {k for k, x in v.items() if any(_is_device(y) for y in leaves(x))}
    if isinstance(v, (list, tuple)):   # held[-1] too
        return {k for i, x in enumerate(v) if any(_is_device(y) for y in leaves(x))
                for k in (i, i - len(v))}
    return None


def _is_device(x) -> bool:
    """Whether ``x`` is a device array (a temporary is refused as such elsewhere)."""
    if is_temporary(x) or not _is_array_quietly(x):
        return False
    try:
        return not as_buffer(x).is_host
    except ArgumentError:
        return False


def _used(fn) -> frozenset:
    """The load paths (``_used_in``) callback ``fn``'s code, and that of the methods
    it names of its bound object's class and of the program's own objects it
    reaches, loads and uses: reads off, indexes or hands to a call; not those it
    only compares, stores or moves (``self.a, self.b = self.b, self.a``)."""
    classes = {type(v) for _, v, _ in _names_of(fn) if own_object(v)}
    while isinstance(fn, partial):
        fn = fn.func
    owner = _attr(fn, "__self__")
    if owner is None and not _has(fn, "__code__"):   # a callable object
        owner, fn = fn, _attr(type(fn), "__call__")
    codes: list = []
    for c in classes | {class_of(owner) if owner is not None else object}:   # (helpers too)
        attribute_names(fn, c, into=codes)
    methods = set() if owner is None else \
        method_codes(classes | {class_of(owner)}) | {_attr(_attr(fn, "__func__", fn), "__code__")}
    return frozenset(n for c in set(codes) for n in
                     (as_method(c, _used_in(c)) if c in methods else _used_in(c)))


def _refuse_passed(t, fn) -> None:
    """Refuse a callback the graph function was passed by an argument that it does
    not hand to ``s.host`` itself (a helper does) and that reads host arrays of
    its own: the cache key holds how those share memory with a call's arrays only
    for the callbacks it hands there, so a later call handing the graph one of
    them could reuse a graph where the callback runs before the node writing it."""
    inner = fn
    while isinstance(inner, partial):
        inner = inner.func
    name = t.passed_callbacks.get(id(fn), t.passed_callbacks.get(id(inner)))
    frame = user_frame_object()
    if name is None or frame is not None and frame.f_code in t.own_codes:
        return   # (a line of its own the key does not follow: as any callback's)
    found = reached_arrays(fn, f"argument {name}")
    if found:
        raise ArgumentError(
            f"host callback {_name(fn)} is argument {name} of {t.name}, handed to s.host "
            f"by other code than {t.name}'s own, and it reads host arrays itself "
            f"({found[0][0]}): the graph would not know to order it after a node writing "
            f"one of them that a later call passes; hand it to s.host in {t.name} itself "
            f"(s.host({name})), or pass those arrays to s.host as arguments, which the "
            f"callback receives as parameters: s.host(fn, buf)")


def reached_arrays(fn, label: str) -> list:
    """``(label, array)`` for the host arrays callback ``fn`` reaches itself
    (``_names_of``: what it holds, its globals, the attributes of the objects
    they name), each once: where a call hands the graph function ``fn``
    (``label``: the parameter), the cache key holds how they share memory with
    the call's arrays (``Holdings.argument_callbacks``)."""
    out, seen, kept = [], set(), _kept(fn)
    for name, v, _ in _names_of(fn):
        if name in kept and not is_array(v):
            continue   # a history it appends to (as Reach.callbacks leaves out)
        for x in leaves(v):
            if id(x) not in seen and _is_array_quietly(x) and _is_host(x):
                seen.add(id(x))
                out.append((f"{name} of {label}", x))
    return out


def _kept(fn) -> set:
    """The labels (as ``_names_of`` gives them) of what callback ``fn``'s own code
    changes in place as a whole (``HISTORY.append(h)``, ``self.hist.append(h)``, a
    closure's or a ``partial`` argument's list): what it keeps, not what it reads."""
    given: dict = {}
    while isinstance(fn, partial):
        given.update({len(given) + i: f"partial argument {i}" for i in range(len(fn.args))})
        given.update({k: f"partial argument {k}" for k in fn.keywords})
        fn = fn.func
    bound = _has(fn, "__self__") or not _has(fn, "__code__")
    fn = _attr(fn, "__func__", fn) if _has(fn, "__code__") or _has(fn, "__func__") \
        else _attr(type(fn), "__call__")
    code = _attr(_attr(fn, "__func__", fn), "__code__")
    if code is None:
        return set()
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    positions = {p: i - bound for i, p in enumerate(params)}
    out = set()
    for head, steps in value_chains(code, roots=frozenset(params))[1]:
        if bound and head == params[0] and len(steps) == 1 and steps[0][0] == "attr":
            out.add(f"attribute {steps[0][1]!r}")
        elif not steps:
            out |= {f"global name {head!r}", f"closure name {head!r}",
                    given.get(head, given.get(positions.get(head)))}
    return out


def _is_host(x) -> bool:
    try:
        return as_buffer(x).is_host
    except ArgumentError:
        return False


def raised_in(exc: BaseException, source: tuple) -> tuple:
    """The innermost line of the user's code in ``exc``'s traceback (``source`` if
    none): graphtrace's and the libraries' frames are skipped."""
    return raised_at(exc) or source


def _host_buffers(t, x) -> list:
    """The trace's Buffers of host array ``x``: its own (a view it has not seen:
    made now, in the array holding it); where ``x`` reaches past the arrays of the
    trace (a global staging array of which the graph is given a view), each array
    of the trace lying in it, whole; none for device memory, or for host memory
    no array of this trace shares."""
    if t.written is not None:   # a reached array's guard view (written_hosts.py)
        x = t.written.unguarded(x)
    buf = t.cached_buffer(x)
    if buf is not None:
        return [buf] if buf.is_host else []
    try:
        made = as_buffer(x)
    except ArgumentError:
        return []
    if not made.is_host:
        return []
    if t.root_holding(made.lo) is not None:
        try:
            buf = t.buffer(x)
            return [buf] if buf.is_host else []
        except ArgumentError:   # it reaches past the array holding its start
            pass
    return [r for r in t.roots_overlapping(made.lo, made.hi) if r.is_host]


def _names_of(fn, depth: int = 0, seen=None, more=None):
    """``(name, value, held)`` for what ``fn`` holds (held: its closure cells,
    default arguments, ``partial`` arguments, a bound method's object's
    attributes, a callable object's attributes; functions held are looked into
    too) and the global names and attributes of globals its code loads (not
    held; the helper functions so reached are looked into as well). ``more(code,
    globals)``: ``(name, value)`` of other globals each code walked reads (a captured
    region's ``globals()["W"]``: ``_region_reach.Reads``)."""
    seen = set() if seen is None else seen
    given = []   # a partial's arguments: objects whose methods it may call, as self's
    while isinstance(fn, partial):
        given += [(f"partial argument {i}", v) for i, v in enumerate(fn.args)]
        given += [(f"partial argument {k}", v) for k, v in fn.keywords.items()]
        fn = fn.func
    yield from ((label, v, True) for label, v in given)
    owner = _attr(fn, "__self__")   # a bound method: its object's attributes
    if owner is None and not _has(fn, "__code__") and \
            (_has(fn, "__dict__") or _has(type(fn), "__slots__")):
        owner, fn = fn, _attr(type(fn), "__call__")   # a callable object
    bound = owner is not None and depth < 4 and \
        (not isinstance(owner, type) or own_holder(owner))   # (a classmethod's class)
    held = _held_by(owner) if bound else []
    for k, v in held:
        yield k, v, True
    fn = _attr(fn, "__func__", fn)
    code, scope = _attr(fn, "__code__"), _attr(fn, "__globals__")
    if code is None or scope is None or id(fn) in seen:
        return
    seen.add(id(fn))
    for label, v in given:   # partial(Sink.notify, sink) reading sink.buf
        yield from _object_reads(code, v, label, depth, seen, more)
    if bound:   # self.inner(), and self.sink.read() of an object self holds (there too)
        methods = [method for _, method, _ in _methods_named(code, class_of(owner))]
        for method in methods:
            yield from _names_of(method, depth + 1, seen, more)
        for k, v in held:
            for c in [code] + [m.__code__ for m in methods]:
                yield from _object_reads(c, v, k, depth, seen, more)
    for i, v in enumerate((fn.__defaults__ or ()) + tuple((fn.__kwdefaults__ or {}).values())):
        yield f"default argument {i}", v, True
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            v = cell.cell_contents
        except ValueError:   # an empty cell
            continue
        if callable(v) and depth < 4 and not is_array(v):   # a function it calls
            yield from ((n, x, True) for n, x, _ in _names_of(v, depth + 1, seen, more))
        else:
            yield f"closure name {name!r}", v, True
            yield from _object_reads(code, v, f"closure name {name!r}", depth, seen, more)
    for name, v in _global_loads(code, scope) + (more(code, scope) if more else []):
        helper = _followed(v) if depth < 4 else None
        if helper is not None:   # a helper it calls by a global name
            yield from _names_of(helper, depth + 1, seen, more)
        else:
            yield f"global name {name!r}", v, False
            yield from _object_reads(code, v, f"global name {name!r}", depth, seen, more)
    yield from _item_reads(fn, code, depth, seen, more)


def _held_by(owner) -> list:
    """``(label, value)`` of what a bound method's object holds, as its code reads
    it off ``self`` (``cls``): an object's attributes, a class's own and its bases'
    (a classmethod's ``cls.BUF``), a namedtuple's fields, and the items of a list,
    tuple or dict of a class of its own (``self[0]`` of ``class Sink(list)``)."""
    if isinstance(owner, type):
        return [(f"attribute {k!r}", v) for k, v in held_attributes(owner)]
    fields = _attr(type(owner), "_fields") if isinstance(owner, tuple) else None
    named = list(zip(fields, owner)) if isinstance(fields, tuple) else []   # a namedtuple's
    held = [(f"attribute {k!r}", v) for k, v in _attributes(owner) + named + class_held(owner)]
    if not named and isinstance(owner, (list, tuple, dict)):   # (its __dict__ and its
        items = owner.items() if isinstance(owner, dict) else enumerate(owner)   # slots; its
        n = None if isinstance(owner, dict) else len(owner)   # class's: self.BUF); self[-1]
        held += [(f"item {k!r}" if n is None else f"item {k!r} (or {k - n!r})", v)
                 for k, v in list(items)]
    return held


def _object_reads(code, obj, label: str, depth: int, seen, more=None):
    """``(name, value, False)`` for what ``code`` reads through an object of the
    program's own it reaches by a name (``label``) when it runs: its attributes
    (``SINK.read()`` reads ``SINK.buf``), and what the methods of its class that
    the code names reach (``lambda: self.report()``, reading a global)."""
    for what, x in _object_attributes(obj):
        yield f"{what} of {label}", x, False
    if depth < 4 and not isinstance(obj, _NOT_OBJECTS) and not _library(type(obj)):
        for _, method, _ in _methods_named(code, type(obj)):
            yield from _names_of(method, depth + 1, seen, more)


def _item_reads(fn, code, depth: int, seen, more=None):
    """What ``code`` reads through an object of the program's own it reaches by
    constant items of a global's or closure's container (``HOLDER["sink"].read()``,
    ``LST[0].read()``), as ``_object_reads`` for an attribute's (``NS.sink.read()``)."""
    for head, steps in value_chains(code)[0]:
        if any(how == "item" for how, _ in steps):
            label = chain(head, steps)
            v = label.read(fn)
            if v is not MISSING:
                kind = "closure name" if head in code.co_freevars else "global name"
                yield from _object_reads(code, v, f"{kind} {label!r}", depth, seen, more)


_NOT_OBJECTS = (type, ModuleType, partial, FunctionType, MethodType, BuiltinFunctionType,
                list, tuple, dict)


def _object_attributes(obj, depth: int = 0):
    """``(what, value)`` for the attributes of an object of a class of the program's
    own (and of the objects they hold, two levels deep), which a callback handed
    the object, or calling its methods, may read: not of arrays, containers,
    functions, classes or modules."""
    if depth > 2 or isinstance(obj, _NOT_OBJECTS) or _library(type(obj)) or \
            _is_array_quietly(obj) is not False:
        return
    for k, v in _attributes(obj):   # its __dict__ and its slots
        if any(_is_array_quietly(x) is None for x in leaves(v)):
            continue   # an object that answers no question about itself: not an array
        yield f"attribute {k!r}", v
        yield from ((f"attribute {k!r}.{w[len('attribute '):]}", x)
                    for w, x in _object_attributes(v, depth + 1))


def _is_array_quietly(x) -> bool | None:
    """``is_array(x)``, or None for an object whose attribute lookup raises other
    than AttributeError (a ``__getattr__`` backed by a dict raises KeyError)."""
    try:
        return is_array(x)
    except Exception:  # noqa: BLE001  (the object's own lookup, whatever it raises)
        return None


def _global_loads(code, scope) -> list:
    """``(name, value)`` of the globals ``code`` (and code nested in it) loads, and
    of the attributes it reads of them (``STATE.buf``)."""
    out: dict = {}
    for name, v in name_chains(code, scope):
        if v is not MISSING:
            out.setdefault(name, v)
    return list(out.items())


def _holds_values(v) -> bool:
    """Whether a container holds arrays or dynamic numbers (what rebinding renews)."""
    return any(is_array(x) or isinstance(x, Scalar)
               for x in (unwrap_intent(x, "rw")[0] for x in leaves(v)))


def _warn_copies(fn, args) -> None:
    """A list or dict of constants handed to a callback looks like a place for results."""
    mutable = [i for i, a in enumerate(args) if isinstance(a, (list, dict)) and
               not _holds_values(a) and may_change_argument(fn, i, a)]
    if mutable:
        file, line = user_frame(3)
        warnings.warn_explicit(
            f"host callback {_attr(fn, '__name__', fn)} receives argument {mutable[0]} as a "
            "list or dict that the graph rebuilds for every launch: what the callback "
            "appends or assigns to it is lost to the caller; keep results in a pinned "
            "numpy array, or in an object of your own class (passed as itself)",
            UserWarning, file, line)


def _warn_held_copy(fn, name: str, label: str, graph: str) -> None:
    """A callback holding (closure, ``partial``) a list or dict argument of the graph
    function holds the copy it was handed: its appends never reach the caller."""
    file, line = user_frame()
    warnings.warn_explicit(
        f"host callback {_name(fn)} holds argument {label} of {graph} by {name}: {graph} "
        "was handed a copy of that list or dict, made when traced, so what the callback "
        "appends or assigns to it is lost to the caller (every launch changes that same "
        "copy); keep results in a pinned numpy array, or in an object of your own class "
        "(passed as itself)", UserWarning, file, line)


_DEVICE = "a callback cannot touch the GPU; copy it to pinned host memory with s.copy first"
_TEMPORARY = (", the graph's own device memory: a callback takes host memory, and "
              "would keep what exists only inside the graph; s.copy it into pinned host "
              "memory (gt.pinned_empty) and pass that")


def _name(fn) -> str:
    if isinstance(fn, partial):
        return f"partial({_name(fn.func)}, ...)"
    return callable_name(fn)


def _host_only(fn):
    def check(i, buf):
        if is_virtual(buf):
            raise ArgumentError(f"argument {i} of host callback {_name(fn)} is temporary "
                                f"{buf.label}{_TEMPORARY}")
        if not buf.is_host:
            raise ArgumentError(
                f"argument {i} of host callback {_attr(fn, '__name__', fn)} is device "
                f"memory ({buf.label or 'array'}): {_DEVICE} and pass that")
    return check


def host_array(b: Buffer, owner=None):
    """The callback's array for host view ``b``: the traced object (an argument as
    the ordinary array it is), or one at its new address holding ``owner`` (the
    array now bound there), which a callback may keep past the call."""
    return plain(b.obj) if b.obj is not None else b.host_array(owner)


def host_value(v, value_of, owner_of=None):
    """Recorded callback arguments as the callback receives them now: an argument
    rebound as the array now bound (``owner_of``: the binding's), a view of one as a
    view keeping that array alive."""
    def now(x):
        if not isinstance(x, Buffer):
            return value_of(x)
        owner = owner_of(x) if owner_of is not None else None
        if owner is not None and x.base is x and is_array(owner):
            return plain(owner)   # the argument itself, as the first call passed it
        return host_array(value_of(x), owner)
    return tree_map(now, v)


class HostOp(Op):
    """A host callback: ``target`` the Python callable, ``args`` its recorded
    arguments (array arguments are host Buffers). It rebinds without the
    driver: ``gpu.state`` keeps the callback's ``Calls``, whose arguments an
    update replaces."""

    kind = "host"
    refused_in_conditional = "host callbacks"
    driver_update = False

    def describe(self, node, namer) -> str:
        before, after = bound_arguments(node.target)   # partial(print, "tag"): print("tag", h)
        return f"{callable_name(node.target)}(" \
            f"{', '.join([*before, *(namer.value(a) for a in node.args), *after])})"

    def emit(self, gpu, node, parent):
        calls = Calls(node.target, host_value(node.args, gpu.value_of, gpu.owner_of),
                      gpu.clock, gpu.failed, node.source)
        gpu.state[node.index] = calls
        return parent.callback(calls)

    def update(self, gpu, node) -> None:
        gpu.state[node.index].rebind(host_value(node.args, gpu.value_of, gpu.owner_of))

    def simulate(self, sim, node) -> None:
        """Run the callback; with ``sim.check``, prove what it was given to only read
        (``gt.In``) stays so."""
        kept = read_only_bytes(sim, node)
        try:
            with in_callback():
                node.target(*sim.value(node.args))
        except GraphtraceError:
            raise
        except Exception as e:   # the callback's own error, as it is (a program may
            at = format_source(raised_in(e, node.source))   # catch it), with its node
            if hasattr(e, "add_note"):   # Python 3.11 on
                e.add_note(f"graphtrace: raised at {at} by host callback "
                           f"{_name(node.target)}, recorded at {format_source(node.source)}, "
                           "on the simulator; the nodes before it in the graph have run")
            raise
        wrote = changed(sim, kept)
        if wrote is not None:
            raise IntentError(
                f"host callback {_name(node.target)} wrote to {wrote.label or 'an array'}, "
                "which it was declared to only read (gt.In): pass it bare, or as "
                "gt.InOut(...) or gt.Out(...)", source=node.source)


HOST_CALLBACK = HostOp()
