"""graphtrace's modules import one another without a cycle.

Every import counts: at module level and inside functions, relative and
absolute. Importing ``graphtrace.a.b`` from outside the package
``graphtrace.a`` also runs ``graphtrace/a/__init__.py``, so it counts as an
import of that package too.
"""
import ast
import pathlib

import graphtrace

ROOT = pathlib.Path(graphtrace.__file__).parent


def modules() -> dict:
    """Module name -> its file, for every module of the package; a compiled one
    (its C source) imports none of the others."""
    out = {}
    for path in [*ROOT.rglob("*.py"), *ROOT.rglob("*.c")]:
        parts = ("graphtrace",) + path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _absolute(module: str, is_package: bool, level: int, name: str | None) -> str:
    if not level:
        return name
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([name] if name else []))


def _known(name: str, mods) -> str | None:
    """The innermost module of the package that ``name`` lies in, if any."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, path, mods) -> set:
    """The package's modules that importing ``module`` runs directly."""
    is_package = path.name == "__init__.py"
    targets = set()
    if path.suffix == ".c":
        return targets
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.level, node.module)
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                     for a in node.names]
        else:
            continue
        for name in names:
            target = _known(name, mods)
            while target and target != module:
                targets.add(target)
                target = target.rpartition(".")[0]
                if module.startswith(target + "."):   # a package it is in: already running
                    break
    return targets


def graph() -> dict:
    mods = modules()
    return {m: imports(m, p, mods) for m, p in mods.items()}


def cycle(edges: dict) -> list | None:
    """One import cycle, as the list of modules around it, or None."""
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == "open":
                return stack[stack.index(t):] + [t]
            if t not in state:
                found = visit(t)
                if found:
                    return found
        state[m] = "done"
        stack.pop()
        return None

    for m in sorted(edges):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycle():
    found = cycle(graph())
    assert found is None, "import cycle: " + " -> ".join(found)


def test_function_level_and_package_imports_are_counted():
    edges = graph()
    assert "graphtrace.emit" in edges["graphtrace.function"]   # imported inside a function
    assert "graphtrace.ops" in edges["graphtrace.trace"]        # the package of ops.kernel
    assert "graphtrace.ops" not in edges["graphtrace.ops.kernel"]   # its own package


def test_a_cycle_is_found():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
