"""Access intents of a numba kernel, read off its Python source.

A parameter is written when the kernel assigns into it (``p[i] = v``,
``p[i] += v``), updates it atomically (``cuda.atomic.add(p, ...)``), or passes
it (or a view of it) to a call graphtrace cannot see into. Calls into numba
device functions are followed, positional and keyword arguments alike.
Every name that may refer to (part of) a parameter counts as that parameter:
``q = p[1:]``, ``row = p[i]`` (a row of a 2-D array), ``a, b = p, r``,
``o = p if c else r``, ``for q in (p, r)``. A parameter that is only loaded
from is read. Where the source is not available, every parameter is read and
written, which is always safe.
"""
from __future__ import annotations

import ast
import inspect
import textwrap

__all__ = ["infer_intents"]

_SAFE_CALLS = {"len", "range", "min", "max", "abs", "int", "float", "bool", "complex",
               "round", "print", "enumerate", "zip", "divmod", "pow"}
_SAFE_MODULES = ("math.", "cmath.", "cuda.", "numba.cuda.")
_VIEW_METHODS = {"T", "reshape", "view", "transpose", "ravel", "real", "imag", "flat"}
_NONE: frozenset = frozenset()


def _dotted(expr) -> str:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return ""


def _resolve(py_func, dotted: str):
    """The object a dotted name in the kernel refers to, or None."""
    head, *rest = dotted.split(".")
    try:
        closure = inspect.getclosurevars(py_func)
        scope = {**closure.globals, **closure.nonlocals}
    except (TypeError, ValueError):
        scope = getattr(py_func, "__globals__", {})
    obj = scope.get(head, py_func.__globals__.get(head))
    for name in rest:
        obj = getattr(obj, name, None)
    return obj


def _is_element(expr) -> bool:
    """``p[i]`` / ``p[i, j]`` (no slice) as opposed to ``p[1:]``."""
    if not isinstance(expr, ast.Subscript):
        return False
    idx = expr.slice
    elts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
    return not any(isinstance(e, ast.Slice) for e in elts)


class _Analysis:
    def __init__(self, py_func, fdef, depth):
        self.py_func, self.fdef, self.depth = py_func, fdef, depth
        self.params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
        self.alias: dict[str, set] = {p: {p} for p in self.params}
        self.read, self.written = set(), set()

    def roots(self, expr) -> frozenset:
        """The parameters an expression may be (a view of)."""
        if isinstance(expr, ast.Name):
            return frozenset(self.alias.get(expr.id, _NONE))
        if isinstance(expr, (ast.Subscript, ast.Attribute, ast.Starred)):
            return self.roots(expr.value)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                and expr.func.attr in _VIEW_METHODS:
            return self.roots(expr.func.value)
        if isinstance(expr, ast.IfExp):
            return self.roots(expr.body) | self.roots(expr.orelse)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return frozenset().union(*(self.roots(e) for e in expr.elts))
        if isinstance(expr, ast.NamedExpr):
            return self.roots(expr.value)
        return _NONE

    def _bind(self, target, value) -> bool:
        """Let the names in ``target`` alias what ``value`` may be; True if that grew."""
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                    and not any(isinstance(e, ast.Starred) for e in target.elts):
                pairs = zip(target.elts, value.elts)
            else:
                pairs = ((t, value) for t in target.elts)
            return any([self._bind(t, v) for t, v in pairs])
        if isinstance(target, ast.Starred):
            return self._bind(target.value, value)
        if isinstance(target, ast.Name):
            new = self.roots(value)
            have = self.alias.setdefault(target.id, set())
            if new - have:
                have |= new
                return True
        return False

    def find_aliases(self) -> None:
        """Grow the alias sets to a fixed point (they only grow, so this ends)."""
        changed = True
        while changed:
            changed = False
            for node in ast.walk(self.fdef):
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        changed |= self._bind(t, node.value)
                elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                    changed |= self._bind(node.target, node.value)
                elif isinstance(node, (ast.For, ast.comprehension)):
                    changed |= self._bind(node.target, node.iter)

    def store_target(self, target):
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self.store_target(t)
        elif isinstance(target, ast.Starred):
            self.store_target(target.value)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            self.written |= self.roots(target)

    def call(self, node: ast.Call):
        name = _dotted(node.func)
        if isinstance(node.func, ast.Attribute) and self.roots(node.func.value):
            if node.func.attr not in _VIEW_METHODS:     # an unknown method of an array
                self.written |= self.roots(node.func.value)
                self.read |= self.roots(node.func.value)
        positional = [(i, a) for i, a in enumerate(node.args) if self.roots(a)]
        keywords = [(k.arg, k.value) for k in node.keywords if self.roots(k.value)]
        if not positional and not keywords:
            return
        if "atomic" in name.split("."):
            for i, a in positional:   # the first argument is updated, the rest read
                self.read |= self.roots(a)
                if i == 0:
                    self.written |= self.roots(a)
            return
        if name in _SAFE_CALLS or name.startswith(_SAFE_MODULES):
            for _, a in positional + keywords:
                self.read |= self.roots(a)
            return
        callee = _resolve(self.py_func, name) if name else None
        inner = _device_function(callee, self.depth)
        for i, a in positional:
            starred = isinstance(a, ast.Starred)
            self._passed(a, None if inner is None or starred else inner, i)
        for key, a in keywords:
            self._passed(a, inner, key)

    def _passed(self, arg, inner, where) -> None:
        """An array goes to a callee's parameter ``where`` (index or name)."""
        mode = "rw"
        if inner is not None:
            params, intents = inner
            i = where if isinstance(where, int) else \
                (params.index(where) if where in params else None)
            if i is not None and i < len(intents) and intents[i] is not None:
                mode = intents[i]
        if "w" in mode:
            self.written |= self.roots(arg)
        if "r" in mode:
            self.read |= self.roots(arg)

    def run(self):
        self.find_aliases()
        for node in ast.walk(self.fdef):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in getattr(node, "targets", [getattr(node, "target", None)]):
                    self.store_target(t)
            elif isinstance(node, ast.AugAssign):
                target = node.target
                if isinstance(target, ast.Name):   # rebinding an array name in place
                    self.written |= self.roots(target)
                else:
                    self.store_target(target)
                self.read |= self.roots(target)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                    and _is_element(node):  # taking a view reads nothing yet
                self.read |= self.roots(node)
            elif isinstance(node, ast.Call):
                self.call(node)
        out = []
        for p in self.params:
            w, r = p in self.written, p in self.read
            out.append("rw" if w and r else "w" if w else "r")
        return out


def _parse(py_func):
    try:
        src = textwrap.dedent(inspect.getsource(py_func))
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.name == py_func.__name__:
            return node
    return None


def _device_function(callee, depth):
    """``(parameter names, intents)`` of a numba device function, or None."""
    py_func = getattr(callee, "py_func", None)
    if py_func is None or depth > 8:
        return None
    intents = infer_intents(py_func, depth + 1)
    if intents is None:
        return None
    return list(inspect.signature(py_func).parameters), intents


def infer_intents(py_func, depth: int = 0) -> list[str] | None:
    """Per positional parameter: ``"r"``, ``"w"`` or ``"rw"``; None without source."""
    fdef = _parse(py_func)
    if fdef is None:
        return None
    return _Analysis(py_func, fdef, depth).run()
