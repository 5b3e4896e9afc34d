"""Access intents of a numba kernel, read off its Python source.

A parameter is written when the kernel assigns into it (``p[i] = v``,
``p[i] += v``), updates it atomically (``cuda.atomic.add(p, ...)``), or passes
it (or a view of it) to a call graphtrace cannot see into. Calls into numba
device functions are followed. Names bound to views of a parameter
(``q = p[1:]``, ``q = p.T``) count as that parameter. A parameter that is
only loaded from is read. Where the source is not available, every
parameter is read and written, which is always safe.
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


class _Analysis:
    def __init__(self, py_func, fdef, depth):
        self.py_func, self.fdef, self.depth = py_func, fdef, depth
        self.params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
        self.alias = {p: p for p in self.params}
        self.read, self.written = set(), set()

    def root(self, expr):
        """The parameter an expression is a view of (or None)."""
        while True:
            if isinstance(expr, ast.Name):
                return self.alias.get(expr.id)
            if isinstance(expr, ast.Subscript):
                expr = expr.value
            elif isinstance(expr, ast.Attribute):
                expr = expr.value
            elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                    and expr.func.attr in _VIEW_METHODS:
                expr = expr.func.value
            else:
                return None

    def find_aliases(self):
        changed = True
        while changed:
            changed = False
            for node in ast.walk(self.fdef):
                if isinstance(node, ast.Assign):
                    r = self.root(node.value)
                    if r is not None and not _is_element(node.value):
                        for t in node.targets:
                            if isinstance(t, ast.Name) and self.alias.get(t.id) != r:
                                self.alias[t.id] = r
                                changed = True

    def store_target(self, target):
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self.store_target(t)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            r = self.root(target)
            if r is not None:
                self.written.add(r)

    def call(self, node: ast.Call):
        args = [a.value if isinstance(a, ast.Starred) else a for a in node.args]
        args += [k.value for k in node.keywords]
        roots = [(i, self.root(a)) for i, a in enumerate(args)
                 if self.root(a) is not None and not _is_element(a)]
        if not roots:
            return
        name = _dotted(node.func)
        if isinstance(node.func, ast.Attribute) and self.root(node.func) is not None:
            if node.func.attr in _VIEW_METHODS:
                return
            self.written.add(self.root(node.func))  # unknown method of an array
            self.read.add(self.root(node.func))
        if "atomic" in name.split("."):
            if roots and roots[0][0] == 0:
                self.written.add(roots[0][1])
                self.read.add(roots[0][1])
            return
        if name in _SAFE_CALLS or name.startswith(_SAFE_MODULES):
            return
        callee = _resolve(self.py_func, name) if name else None
        inner = _device_function_intents(callee, self.depth)
        for i, r in roots:
            mode = inner[i] if inner is not None and i < len(inner) else "rw"
            if "w" in mode:
                self.written.add(r)
            if "r" in mode:
                self.read.add(r)

    def run(self):
        self.find_aliases()
        for node in ast.walk(self.fdef):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in getattr(node, "targets", [getattr(node, "target", None)]):
                    self.store_target(t)
            elif isinstance(node, ast.AugAssign):
                self.store_target(node.target)
                r = self.root(node.target)
                if r is not None:
                    self.read.add(r)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                    and _is_element(node):  # taking a view reads nothing yet
                r = self.root(node)
                if r is not None:
                    self.read.add(r)
            elif isinstance(node, ast.Call):
                self.call(node)
        out = []
        for p in self.params:
            w, r = p in self.written, p in self.read
            out.append("rw" if w and r else "w" if w else "r")
        return out


def _is_element(expr) -> bool:
    """``p[i]`` / ``p[i, j]`` (one element) as opposed to a view ``p[1:]``."""
    if not isinstance(expr, ast.Subscript):
        return False
    idx = expr.slice
    elts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
    return not any(isinstance(e, ast.Slice) for e in elts)


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


def _device_function_intents(callee, depth):
    py_func = getattr(callee, "py_func", None)
    if py_func is None or depth > 8:
        return None
    return infer_intents(py_func, depth + 1)


def infer_intents(py_func, depth: int = 0) -> list[str] | None:
    """Per positional parameter: ``"r"``, ``"w"`` or ``"rw"``; None without source."""
    fdef = _parse(py_func)
    if fdef is None:
        return None
    return _Analysis(py_func, fdef, depth).run()
