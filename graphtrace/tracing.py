"""The trace of one call of a graph function: ``Tracing``, from which
``GraphFunction`` (``function.py``) takes ``_trace`` (the call's arguments made
leaves, its lists and dicts handed as copies, the function run on a proxy
stream under a ``Tracer``), ``_label_closure`` (the arrays it reaches by name,
named for the tracer) and ``_inline`` (its ops recorded into another graph's
trace, where it is called with that trace's proxy stream); and what is refused
once a trace is over: a result returned, a temporary kept.
"""
from __future__ import annotations

import ast
import dis
import inspect
import textwrap

import numpy as np

from ._guards import CupyFence, raised_at, translate
from ._host_guard import guarded
from .arguments import Call, changed_copies, copies, path_str, walk
from .arrays import is_array
from .backend import is_stream
from .errors import ArgumentError, TraceError, user_frame
from .module_places import ModuleBindings
from .names import named_values
from .probe import _has
from .ops._structured import dropped_value, record_child
from .ops.kernel import cupy_call_refusal, stream_refusal
from .scalar import Scalar
from .stream import Stream
from .temporary import dead_temporary, held_one, holder_of, returned
from .trace import Tracer
from .tree import leaves
from .type_calls import refuse_type_calls
from .written_hosts import WrittenHosts

__all__ = ["Tracing"]


class Tracing:
    """The trace of a call (mixed into ``GraphFunction``: ``self`` is the
    decorated function)."""

    def _launch_advice(self) -> str:
        """How to launch the graph on a stream of the caller's: ``f(..., stream=st)``,
        unless ``f`` has a parameter ``stream`` of its own, which that keyword fills."""
        name = self.__name__
        if "stream" not in self._own_keywords:
            return f"to launch the graph on a stream of yours, pass it as {name}(..., stream=...)"
        return (f"its parameter stream is {name}'s own, so {name}(..., stream=...) fills "
                f"it and cannot say where the graph runs: rename or remove that "
                f"parameter, then launch on a stream of yours with {name}(..., stream=st), "
                f"or keep it, pass it no stream, and launch with "
                f"{name}.compile(...).launch(st)")

    def _trace(self, args, kwargs, key=None):
        """``(Graph, arrays, scalars, changed)``: the IR, the argument leaves it uses,
        and the paths of the list and dict arguments the trace changed (the copies
        it was handed: ``arguments.changed_copies``); ``key``: the call's cache key
        (``Call.key``), found when asked where not given."""
        tracer = Tracer(self.__name__, self.params, self.deps)
        tracer.key = (lambda: key) if key is not None else \
            (lambda: Call(self, self._bind(args, kwargs)).key)
        bound = self._bind(args, kwargs)
        arrays, scalars = [], []

        def leaf(kind, path, v):
            if kind == "array":   # a numpy array: its values refuse to be read now
                v = guarded(v)
                arrays.append(tracer.add_argument(path_str(path), v))
                return v
            if kind == "scalar":
                s = Scalar(path_str(path), v, len(scalars), path[0], self.__name__)
                scalars.append(s)
                return s
            if is_stream(v):   # f(stream, x, y), as eager launches take one first
                raise ArgumentError(
                    f"argument {path_str(path)} of {self.__name__} is a stream "
                    f"({type(v).__name__}): graphtrace passes the proxy stream "
                    f"{self._stream_param} itself; {self._launch_advice()}", user_frame())
            return v

        handed: list = []   # the lists and dicts the function is handed: copies
        tracer.given = dict(bound.arguments)   # (where an array they hold is: roots.py)
        tracer.self_param = self.self_param if self._lead else None
        bindings = ModuleBindings(self.fn)   # (what the trace may keep there: _places)
        try:
            with tracer, CupyFence():
                for k in self.params:
                    if k is not self.self_param:
                        bound.arguments[k] = walk(bound.arguments[k], (k,), k in self.static, leaf)
                        copies(bound.arguments[k], (k,), handed)
                tracer.copies.update((id(c), path_str(path)) for path, c, _ in handed)
                tracer.mark_arguments()
                if scalars:   # type(a) of one: the stand-in's type, refused at its line
                    refuse_type_calls(self.fn, self.__name__, bound.arguments)
                self._label_closure(tracer, bound.arguments)
                bound.arguments[self._stream_param] = Stream(tracer)
                try:
                    result = self.fn(*bound.args, **bound.kwargs)
                except RuntimeError as e:   # a library refused a transfer while fenced
                    refusal = translate(e) or cupy_call_refusal(e, raised_at(e))
                    if refusal is None:
                        raise
                    raise refusal from None
                except TypeError as e:      # a library took the proxy stream for a handle
                    refusal = stream_refusal(e, raised_at(e))
                    if refusal is None:
                        raise
                    raise refusal from None
                finally:
                    if tracer.written is not None:   # its names hold their own arrays again
                        tracer.written.restore()
        except BaseException as e:   # a temporary the program keeps past a failed
            _note_kept(tracer, self._places(args, kwargs, bindings), e)   # trace: where,
            #                                                        and what to do
            raise
        _refuse_result(self.__name__, result, self.fn)
        ir = tracer.graph()
        if ir.temporaries or scalars:
            places = self._places(args, kwargs, bindings)
            if ir.temporaries:
                _refuse_kept(tracer, places)
            if scalars:
                _refuse_kept_scalar(self, places, scalars)
        return ir, arrays, scalars, changed_copies(handed, (self.fn,) + tuple(
            self._holdings.reach.walked) if handed else ())

    def _places(self, args, kwargs, bindings) -> list:
        """``(label, value)`` of where the program may keep what a trace made past it:
        the arguments, what a method's class holds (``Model.last = t``), the global
        and closure names the function reads, and the globals of the program's own
        modules it reads that the trace may have stored into (``helper.CACHE = t``:
        ``ModuleBindings``, made before the trace)."""
        arguments = self._bind(args, kwargs).arguments
        places = [(f"argument {k}", v) for k, v in arguments.items()]
        if self._lead:
            owner = type(arguments[self.self_param])
            places += [(f"class attribute {owner.__name__}.{k}", v)
                       for k, v in vars(owner).items() if not k.startswith("__")
                       and not callable(v) and not _has(type(v), "__get__")]
        named = named_values(self.fn)
        return places + [(f"global or closure name {name}", v) for name, v in named] + \
            bindings.places(named, self._holdings.reach.walked)

    def _label_closure(self, tracer: Tracer, arguments) -> None:
        """Name the arrays the function reaches by name (its own and its helpers'),
        and those of ``self`` for a method."""
        reached = self._holdings.reached(arguments)
        for label, a in reached:   # one an ended trace left there: where, what to do
            dead = dead_temporary(a, label, self.__name__)
            if dead is not None:
                raise dead
        tracer.add_arguments(reached)
        hosts = [(tracer.cached_buffer(a), a) for _, a in reached if isinstance(a, np.ndarray)]
        holdings = self._holdings
        if hosts:   # guarded where a node writes them (written_hosts.py)
            tracer.written = WrittenHosts(hosts, [self.fn, *holdings.reach.walked],
                                          list(arguments.values()), tracer)
        tracer.callback_arrays = frozenset(id(a) for _, a in holdings.callback_arrays(
            arguments[self.self_param] if self._lead else None) +
            holdings.argument_callbacks(arguments))
        tracer.passed_callbacks = holdings.passed_callables(arguments)
        tracer.own_codes = holdings.own_codes
        tracer.regional = holdings.regional

    def _inline(self, args, kwargs, stream, backend):
        """``g(s, ...)`` inside another trace: record g's ops into that graph.

        Its ops take part in the enclosing graph's dependency inference like
        any other, so they run concurrently with the caller's work where the
        data allow; static parameters must receive static values there.
        """
        lead = self._lead
        if len(args) > lead and isinstance(args[lead], Stream):
            s, args = args[lead], args[:lead] + args[lead + 1:]
        else:
            s = kwargs.pop(self._stream_param)
        s.tracer()   # raises outside its trace
        if stream is not None or backend is not None:
            raise TraceError(f"{self.__name__}(s, ...) inside a trace runs in the enclosing "
                             "graph: it takes no stream= or backend=")
        bound = self._bind(args, kwargs)
        for k in self.static:   # the caller's dynamic scalar, in a list too
            v = next((x for x in leaves(bound.arguments[k]) if isinstance(x, Scalar)), None)
            if v is not None:
                v.refuse_static(self.__name__, k)
        refuse_type_calls(self.fn, self.__name__, bound.arguments)   # type(a) of a Scalar
        bound.arguments[self._stream_param] = s
        t = s.tracer()
        if self.deps == "data" and t.mode_of(s.scope) == "streams":
            # its data order would be lost among the caller's streams: one child-graph
            # node, in stream order there, whose nodes are ordered by their data
            record_child(s, self, args[lead:], kwargs, user_frame(), lead=args[:lead])
            return
        depth = t.inlined.get(self, 0)
        t.nested, t.inlined[self] = t.nested + 1, depth + 1
        try:
            result = self.fn(*bound.args, **bound.kwargs)
        except RecursionError as e:
            endless = None if depth else _endless(self.__name__, self.fn, e)
            if endless is None:
                raise
            raise endless from None
        finally:
            t.nested -= 1
            if depth:
                t.inlined[self] = depth
            else:   # a tracer kept past its trace (by a temporary) holds no function
                del t.inlined[self]
        _refuse_result(self.__name__, result, self.fn)


def _endless(name: str, fn, e: RecursionError):
    """The error for a graph function that calls itself with the proxy stream
    without end (Python's recursion limit stopped it, its code many times on the
    stack), at the line of its first call of itself; None for another recursion."""
    code = getattr(inspect.unwrap(getattr(fn, "__func__", fn)), "__code__", None)
    frames = []
    tb = e.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            frames.append(tb)
        tb = tb.tb_next
    if len(frames) < 8:
        return None
    return TraceError(
        f"{name} calls itself with the proxy stream {len(frames)} calls deep, where "
        "Python's recursion limit stopped the trace (each call records its ops into the "
        "graph again): give the recursion an end decided while tracing (a static "
        f"parameter counting down, @graph(static=('depth',))), or call another function "
        "here; a recursion that does end this deep needs a higher limit "
        "(sys.setrecursionlimit) or a loop instead", (code.co_filename, frames[0].tb_lineno))


def _refuse_result(name: str, result, fn) -> None:
    """A graph function returns nothing (a temporary least of all): refused at its
    ``return`` line where one alone returns a value, else at the call's. What an op
    on the proxy stream returns (``lambda s, x, y: s.copy(y, x)``) is no value."""
    result = dropped_value(result)
    if result is None:
        return
    code = getattr(inspect.unwrap(getattr(fn, "__func__", fn)), "__code__", None)
    if code is not None and code.co_flags & _RUNS_LATER:
        raise TraceError(f"{name} is a generator or a coroutine (it yields or is async def): "
                         "a graph function's body runs once, when traced, to record its ops; "
                         "make it a plain def, without yield or await", source=None)
    source = _return_line(fn)
    tmp = returned(result)
    if tmp is not None:
        raise TraceError(f"{name} returned temporary {tmp._life.where()}: a temporary is "
                         "the graph's own memory and exists only inside it; s.copy it into "
                         "an array passed in", source=source)
    what = f"an array ({type(result).__name__})" if is_array(result) else \
        type(result).__name__
    raise TraceError(f"{name} returned {what}: a graph function returns nothing (a call "
                     "returns None); write results into arrays passed in, and drop the "
                     "return value", source=source)


_RUNS_LATER = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _return_line(fn) -> tuple | None:
    """``(file, line)`` of the one ``return`` statement of ``fn`` (behind its
    decorators) that returns a value other than None, found in its source; None
    where there are several, none, or no source."""
    f = inspect.unwrap(getattr(fn, "__func__", fn))
    try:
        lines, first = inspect.getsourcelines(f)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    body = tree.body[0] if tree.body and isinstance(
        tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if body is None:
        return None
    found, todo = [], list(body.body)
    while todo:   # its own statements, not those of functions or classes it defines
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            found.append(node.lineno)
        todo.extend(ast.iter_child_nodes(node))
    return (f.__code__.co_filename, first + found[0] - 1) if len(found) == 1 else None


def _refuse_kept_scalar(function, places, scalars) -> None:
    """A dynamic scalar still held, once the trace is over, by one of ``places``
    (``self.prev = a``) stands for a number only during the trace: a later call
    would find the stand-in, not its number. Refused at the function's line."""
    ours = {id(s) for s in scalars}
    for label, value in places:
        found = held_one(value, lambda v: type(v) is Scalar and id(v) in ours)
        if found is not None:
            name = found._name
            raise TraceError(
                f"dynamic scalar argument {name!r} is kept by {label} after the trace of "
                f"{function.__name__}: its value is a graph parameter that later calls "
                "rebind, a number only while the graph runs, so what the trace stored there "
                "is no number; keep the number outside the function (after the call), or "
                f"pass {found._param!r} in @graph(static=({found._param!r},)) to trace a "
                "graph per value", source=_store_line(function.fn, found._param))


_KEEPING = frozenset({"STORE_ATTR", "STORE_SUBSCR", "STORE_GLOBAL", "STORE_DEREF", "STORE_NAME"})


def _store_line(f, param: str):
    """``(file, line)`` of the first line of ``f`` that loads ``param`` and stores
    somewhere other than a local (``self.prev = a``); else of its definition."""
    code = getattr(f, "__code__", None)
    if code is None:
        return None
    loads, stores = set(), set()
    for ins in dis.get_instructions(code):
        line = ins.positions.lineno if ins.positions is not None else None
        if ins.opname.startswith("LOAD_FAST") and param in (
                ins.argval if type(ins.argval) is tuple else (ins.argval,)):   # (3.13's pairs)
            loads.add(line)
        elif ins.opname in _KEEPING:
            stores.add(line)
    lines = sorted(n for n in loads & stores if n is not None)
    return code.co_filename, lines[0] if lines else code.co_firstlineno


def _note_kept(tracer, places, error: BaseException) -> None:
    """A trace raised ``error``: where one of ``places`` keeps a temporary it made
    (``CACHE["t"] = s.empty(n)`` before the line that raised), told in a note
    on ``error`` and by any later use of it (``_Life.kept``), which would
    otherwise read as a mistake of the later call's."""
    if not getattr(tracer, "_temps", None):
        return
    for label, value in places:
        tmp = holder_of(value, tracer)
        if tmp is not None:
            tmp._life.kept = label
            if hasattr(error, "add_note"):
                error.add_note(
                    f"temporary {tmp._life.where()} is kept by {label} after this failed "
                    f"trace of {tracer.name}: drop it from there (a temporary exists only "
                    "inside its trace)")
            return


def _refuse_kept(tracer, places) -> None:
    """A temporary still held, once the trace is over, by one of ``places``
    (``(label, value)``) would outlive its graph's memory: refused at its line."""
    for label, value in places:
        tmp = holder_of(value, tracer)
        if tmp is not None:
            tmp._life.kept = label   # (told by a later call finding it there: dead_temporary)
            raise TraceError(
                f"temporary {tmp._life.where()} is kept by {label} after the trace of "
                f"{tracer.name}: a temporary is the graph's own memory and exists only "
                "inside the traced function; s.copy it into an array passed in, and keep "
                "that", source=tmp._life.source)
