"""What ``@graph`` takes, and the signature a call binds to: the functions it
refuses where it decorates (a kernel, a partial, a classmethod), the defaults
that may change in place, and ``CallSignature``, from which ``GraphFunction``
(``function.py``) takes ``_bind`` (a call's arguments bound to the decorated
function's signature, with advice where they do not fit), ``_resign`` (the
signature read again after the code was replaced in place) and ``signature``.
"""
from __future__ import annotations

import difflib
import functools
import inspect
import types

import numpy as np

from ._port_hints import stream_keyword_hint
from .arguments import Call
from .arrays import is_array
from .backend import StreamKeywordError, check_stream, is_stream, resolve
from .debug import checks_intents
from .deps import make_tracker
from .errors import ArgumentError, counted, user_frame
from .code_parts import same_signed, signed
from .probe import _attr, _has
from .stream import Stream

__all__ = ["CallSignature", "OptionError", "checked_options", "static_names"]

_STREAM_NAMES = frozenset({"s", "stream", "st", "strm"})   # a parameter named as a stream


def _refuse_undecorable(fn) -> None:
    """``@graph`` takes a Python function whose first parameter is the proxy stream
    (after ``self``): a kernel, a partial, a classmethod or another object is
    refused where it is decorated, saying what to decorate instead."""
    name = _attr(fn, "__name__", type(fn).__name__)
    if _has(fn, "py_func"):
        why = (f"{name} is a numba kernel: decorate the Python function that launches it "
               f"on the proxy stream, @gt.graph def step(s, x): {name}[grid, block, s](x)")
    elif isinstance(fn, classmethod):
        why = ("a classmethod cannot be a graph function: decorate a plain method "
               "(def step(self, s, ...)) or a function, and pass the class's values as "
               "arguments")
    elif isinstance(fn, functools.partial):
        why = ("a functools.partial cannot be a graph function: decorate the function "
               "itself and pass the fixed values at each call (name the ones that "
               "decide the graph in static=)")
    elif type(fn).__name__ in ("GraphFunction", "BoundGraphFunction") and \
            type(fn).__module__.startswith("graphtrace."):
        why = (f"{name} is already a graph function: gt.graph was applied to it before "
               f"(running a cell or a line {name} = gt.graph({name}) again applies it to "
               f"what the first run made); decorate the plain function once, with "
               f"@gt.graph on its def, or keep {name} as it is")
    elif not isinstance(fn, (types.FunctionType, types.MethodType)):
        why = (f"gt.graph decorates a function (def step(s, ...)), not "
               f"{type(fn).__name__}")
    else:
        return
    raise ArgumentError(why)


class OptionError(ArgumentError, ValueError, TypeError):
    """An option of ``@graph`` (``deps=``, ``static=``, ``backend=``, ``maxsize=``,
    ``check_intents=``) it cannot take: an error at the decorator's line, and a
    ``ValueError`` (a bad value) or ``TypeError`` (a bad type) as those it raised
    before were."""


def checked_options(deps, backend, maxsize, check_intents) -> None:
    """Raise ``OptionError`` at the decorator's line for an option it cannot take."""
    try:
        make_tracker(deps)
        resolve(backend)
        checks_intents(check_intents)
    except (TypeError, ValueError) as e:
        raise OptionError(str(e)) from None
    if maxsize is not None and (isinstance(maxsize, bool) or not isinstance(maxsize, int)
                                or maxsize < 1):
        raise OptionError(f"maxsize must be a positive int, or None for no bound, not "
                          f"{maxsize!r}")


def static_names(static, params: list, name: str) -> set:
    """The parameters ``static=`` names (by name or by position among the parameters
    a call passes, the proxy stream left out); ``OptionError`` at the decorator's
    line for anything else."""
    listed = ", ".join(params) or "none"
    if isinstance(static, (str, int)) and not isinstance(static, bool):
        static = (static,)
    elif not isinstance(static, (tuple, list, set, frozenset)):
        raise OptionError(
            f"static={static!r}: static= takes a parameter of {name} by name or position, "
            f"or a tuple of them (static=() for none; parameters: {listed})")
    names = set()
    for s in static:
        if isinstance(s, int) and not isinstance(s, bool):
            if not 0 <= s < len(params):
                raise OptionError(
                    f"static={s!r} is no position of a parameter of {name}: positions "
                    f"count the parameters a call passes from 0, the proxy stream left out "
                    f"(0 to {len(params) - 1}: {listed}); or name it, static=('x',)"
                    if params else f"static={s!r}: {name} takes no parameter but the "
                    "proxy stream; leave static= out")
            s = params[s]
        elif s not in params:
            raise OptionError(f"static={s!r} names no parameter of {name} "
                              f"(parameters: {listed})")
        names.add(s)
    return names


def call_signature(fn) -> inspect.Signature:
    """The signature a call of ``fn`` binds to. A wrapper (``functools.wraps``)
    naming its parameters is called with them, defaults and all (``def w(s, x,
    a=5.0)`` over ``f(s, x, a=1.0)``: a is 5.0); one passing ``*args`` on takes
    the parameters of the function it wraps, and its own keyword-only ones
    (``def w(*args, verbose=False, **kw)``)."""
    own = inspect.signature(fn, follow_wrapped=False)
    if getattr(fn, "__wrapped__", None) is None or not any(
            p.kind is p.VAR_POSITIONAL for p in own.parameters.values()):
        return own
    inner = inspect.signature(fn)
    params = list(inner.parameters.values())
    extra = [p for p in own.parameters.values() if p.kind is p.KEYWORD_ONLY
             and p.name not in inner.parameters]
    if extra:
        tail = [p for p in params if p.kind is p.VAR_KEYWORD]
        params = [p for p in params if p.kind is not p.VAR_KEYWORD] + extra + tail
    return inner.replace(parameters=params)


def _in_class_body(fn) -> bool:
    """Whether ``fn`` was defined in a class's body (``Model.step``, not a nested
    function's ``f.<locals>.g``)."""
    qualname = getattr(fn, "__qualname__", "")
    return "." in qualname and not qualname.rsplit(".", 1)[0].endswith("<locals>")


def _mutable_defaults(sig) -> bool:
    """Whether a default may change in place (a list or dict of numbers)."""
    return any(p.default is not p.empty and not _immutable(p.default)
               for p in sig.parameters.values())


def _immutable(v) -> bool:
    """Whether a default ``v`` stays what the last call saw: a number, a string,
    None, an array (the graph reads its memory when it runs; its values are not
    read while tracing), or a tuple of such. A list or dict may change in place."""
    if isinstance(v, tuple):
        return all(map(_immutable, v))
    return v is None or isinstance(v, (bool, int, float, complex, str, bytes, np.generic)) \
        or is_array(v)


class CallSignature:
    """The decorated function's signature as calls bind to it (mixed into
    ``GraphFunction``: ``self`` is the decorated function)."""

    def _bind(self, args, kwargs) -> inspect.BoundArguments:
        if not same_signed(self.fn, self._signed):
            self._resign()
        try:
            bound = self._sig.bind(*args[:self._lead], None, *args[self._lead:], **kwargs)
        except TypeError as e:
            hint = self._count_hint(args) if "too many positional" in str(e) else ""
            if "missing" in str(e):   # a misspelt keyword: Python names it, bind does not
                hint += self._unexpected_hint(kwargs)
            first = next(iter(self._sig.parameters), None)
            if first == "cls":   # @classmethod over it
                hint += ("; a classmethod cannot be a graph function: decorate a plain "
                         "method (def step(self, s, ...)) or a function, and pass the "
                         "class's values as arguments")
            elif not self._lead and "missing" in str(e) and _in_class_body(self.fn) and \
                    first not in ("s", "stream"):   # def step(this, s, x) in a class
                hint += (f"; {self.__name__} is defined in a class, but only a first "
                         f"parameter named self makes a graph function a method: here "
                         f"{first} is taken as the proxy stream; name it self")
            raise ArgumentError(f"{self.__name__}{self._sig}: {e}{hint}") from None
        bound.apply_defaults()
        return bound

    def _refuse_stream(self, stream) -> None:
        """Refuse, at the call's line, a ``stream=`` no launch can take (``1.0``): the
        keyword is graphtrace's own, never the function's, unless it has a parameter
        of that name; one taking ``**opts`` never gets an option named stream."""
        if stream is None or isinstance(stream, Stream):
            return
        try:
            check_stream(stream)
        except TypeError:
            pass
        else:
            return
        kind = type(stream).__name__
        why = (f"{self.__name__}(..., stream={kind}): cannot launch on {kind}: stream= is "
               "graphtrace's own keyword, the stream the graph launches on (a cupy, torch, "
               "numba or cuda.core stream, an object with __cuda_stream__, or a handle "
               f"int), not an argument of {self.__name__}")
        star = next((p.name for p in self._sig.parameters.values()
                     if p.kind is p.VAR_KEYWORD), None)
        if star is not None:
            why += (f"; {self.__name__} takes **{star}, but an option named stream never "
                    f"reaches it: rename the option (stream_=, in_stream=), or give "
                    f"{self.__name__} a parameter named stream, which makes the keyword "
                    f"its own (then launch on a stream with {self.__name__}.compile(...)"
                    f".launch(st))")
        raise StreamKeywordError(why, user_frame())

    def _resign(self) -> None:
        """Read the signature again after the function's code or defaults were replaced
        in place (IPython's ``%autoreload 2`` does): its new defaults bind the call;
        other parameters are refused (what was made of them at decoration is stale)."""
        sig = call_signature(self.fn)
        if [(p.name, p.kind) for p in sig.parameters.values()] != \
                [(p.name, p.kind) for p in self._sig.parameters.values()]:
            raise ArgumentError(
                f"{self.__name__}'s code was replaced in place (a module reload such as "
                f"%autoreload) and its parameters changed from {self._sig} to {sig}: "
                f"decorate the new function with @gt.graph again (run its definition "
                f"again)")
        self._sig, self._signed = sig, signed(self.fn)
        self._mutable_defaults = _mutable_defaults(sig)

    def _unexpected_hint(self, kwargs) -> str:
        """The keywords no parameter takes, as Python names them, with the parameter
        each may be a misspelling of."""
        params = self._sig.parameters
        if any(p.kind is p.VAR_KEYWORD for p in params.values()):
            return ""
        takes = [n for n, p in params.items() if n != self._stream_param and
                 p.kind not in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)]
        hint = ""
        for k in kwargs:
            if k not in params:
                near = difflib.get_close_matches(k, takes, n=1, cutoff=0.5) or \
                    [n for n in takes if n[:1] == k[:1]][:1]
                hint += f"; got an unexpected keyword argument {k!r}" + (
                    f" (meant {near[0]!r}?)" if near else "")
        return hint

    def _count_hint(self, args) -> str:
        """For a call with too many positional arguments: how many the function takes,
        the proxy stream (which graphtrace passes) not counted, and how many were
        given; advice about the stream where one was passed, or where the function
        may have no stream parameter (``_stream_hint``)."""
        given = args[self._lead:]
        takes = [p.name for p in self._sig.parameters.values() if p.kind in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][self._lead + 1:]
        hint = (f": {self.__name__} takes {counted(len(takes), 'positional argument')}"
                f"{' (' + ', '.join(takes) + ')' if takes else ''} but {len(given)} "
                f"{'was' if len(given) == 1 else 'were'} given (not counting "
                f"{self._stream_param}, the proxy stream graphtrace passes)")
        if len(given) == len(takes) + 1 and (
                isinstance(given[0], Stream) or is_stream(given[0]) or
                self._stream_param not in _STREAM_NAMES):
            hint += self._stream_hint()
            if not isinstance(given[0], Stream) and is_stream(given[0]):   # g(st, x)
                hint += stream_keyword_hint(self.__name__)
        return hint

    def _stream_hint(self) -> str:
        """Advice for a call with one argument too many: the stream parameter was
        passed, or the function has none (its first parameter is an array)."""
        names = list(self._sig.parameters)
        lead, stream = names[:self._lead], self._stream_param
        rest = [p for p in names[self._lead:] if p != stream]
        which = "first parameter" if not lead else f"first parameter after {lead[0]}"
        hint = (f"; its {which}, {stream}, receives the proxy stream, which graphtrace "
                f"passes itself: call it with ({', '.join(rest)}) only")
        if stream in _STREAM_NAMES:   # named as a stream: it is one
            return hint
        fresh = next((n for n in ("s", "stream", "s_", "stream_") if n not in names),
                     "proxy_stream")
        fixed = ", ".join(lead + [fresh] + names[self._lead:])
        return (f"{hint}; or, if {stream} is meant to be an argument, give "
                f"{self.__name__} a stream parameter: def {self.__name__}({fixed})")

    def signature(self, *args, **kwargs) -> tuple:
        """The cache key of a call with these arguments."""
        return Call(self, self._bind(args, kwargs)).key
