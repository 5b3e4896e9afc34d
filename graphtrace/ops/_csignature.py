"""Reading a CUDA C++ kernel's signature: its parameters' C types, and which
pointers point to const data (read-only: any other is read and written).
Whatever cupy's compiler takes may stand around the name (see
``parse_signature``); where the source leaves the answer open, a pointer is
read-only only if it is in every possibility.
"""
from __future__ import annotations

import itertools
import re

import numpy as np

from ._cpp import invocation, preprocess, replacement
from ._mangled import mangled_params

__all__ = ["AmbiguousKernel", "CParam", "HANDLES", "parse_signature", "c_dtype"]

_INT = {"char": "int8", "signed char": "int8", "unsigned char": "uint8",
        "short": "int16", "short int": "int16", "unsigned short": "uint16",
        "unsigned short int": "uint16", "int": "int32", "signed": "int32",
        "signed int": "int32", "unsigned": "uint32", "unsigned int": "uint32",
        "long": "int64", "long int": "int64", "unsigned long": "uint64",
        "unsigned long int": "uint64", "long long": "int64", "long long int": "int64",
        "unsigned long long": "uint64", "unsigned long long int": "uint64",
        "size_t": "uint64", "ptrdiff_t": "int64", "ssize_t": "int64"}
_INT.update({f"{u}int{n}_t": f"{u}int{n}" for u in ("", "u") for n in (8, 16, 32, 64)})
_OTHER = {"float": "float32", "double": "float64", "half": "float16", "__half": "float16",
          "bool": "bool", "complex<float>": "complex64", "complex<double>": "complex128",
          "thrust::complex<float>": "complex64", "thrust::complex<double>": "complex128"}
HANDLES = {"cudaGraphConditionalHandle", "CUgraphConditionalHandle"}
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|struct)\b")


def c_dtype(ctype: str):
    """numpy dtype of a C scalar type name, or None if graphtrace does not know it."""
    name = " ".join(_QUALIFIERS.sub(" ", ctype).split())
    name = name.replace("std::", "")
    found = _INT.get(name) or _OTHER.get(name)
    return np.dtype(found) if found else None


_TYPE_WORDS = {w for t in list(_INT) + list(_OTHER) for w in t.split()} | {"void"}
_ATTRIBUTES = re.compile(r"\b(__attribute__|__align__|alignas|__declspec|__launch_bounds__|"
                         r"__maxnreg__|__cluster_dims__)\s*\(")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_CONST = re.compile(r"\bconst\b")
_GLOBAL = re.compile(r"\b__global__\b")


class CParam:
    """One kernel parameter: its name, C type, and whether it is a pointer.

    ``aliases`` maps type names (typedefs, template parameters) to C types, or
    to a list of them (the latest first) for a name defined more than once: a
    pointer is then ``const`` only if it is with each. A parameter without a
    name is called ``#index``.
    """

    __slots__ = ("name", "ctype", "pointer", "const", "lo", "hi")

    def __init__(self, text: str, aliases=None, index: int = 0):
        text = " ".join(_drop_attributes(text).split())
        m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*$", text)
        if m is None and not text.endswith(("*", "&")):
            raise ValueError(f"cannot read kernel parameter {text!r}")
        ctype = text[: m.start()].strip() if m else text
        if m and (not _QUALIFIERS.sub("", ctype).strip() or m.group(1) in _TYPE_WORDS
                  or m.group(1) in (aliases or ())):
            m, ctype = None, text        # a type alone: an unnamed parameter
        self.name = m.group(1) if m else f"#{index}"
        array = " *" if m and m.group(2) else ""   # T x[]: a pointer to the elements
        types = _resolved(ctype, aliases or {})
        ctype = types[0]
        self.pointer = "*" in ctype or bool(array)
        self.const = self.pointer and all(_points_to_const(t + array) for t in types)
        self.ctype = ctype
        self.bounds()

    def bounds(self):
        """The range of an integer parameter (``lo``/``hi``), for quick packing."""
        dt = self.dtype
        info = np.iinfo(dt) if dt is not None and dt.kind in "iu" else None
        self.lo, self.hi = (int(info.min), int(info.max)) if info else (0, -1)

    @property
    def dtype(self):
        return None if self.pointer else c_dtype(self.ctype)

    def __repr__(self):
        return f"CParam({self.ctype} {self.name})"


def _points_to_const(ctype: str) -> bool:
    """Whether what a pointer type points to is const. Only the outermost
    pointer's target counts: through ``const float** t`` a kernel may write the
    pointers ``t[i]``, through ``float* const* t`` it may not."""
    levels = _outside_templates(ctype).split("*")
    return len(levels) > 1 and _CONST.search(levels[-2]) is not None


def _outside_templates(text: str) -> str:
    """``text`` with what stands between template brackets blanked (its length
    kept): the ``*`` and ``const`` of ``Box<const float*>`` are not the type's own."""
    if "<" not in text:
        return text
    out, depth = [], 0
    for ch in text:
        if ch == ">" and depth:
            depth -= 1
        out.append(ch if depth == 0 else " ")
        depth += ch == "<"
    return "".join(out)


def _resolved(ctype: str, aliases: dict, seen: frozenset = frozenset()) -> list[str]:
    """The C types ``ctype`` may stand for, its aliases (typedefs, template
    parameters) replaced: one for each choice among the definitions of a name
    defined more than once, the latest definitions first.

    An alias of a pointer type takes the qualifiers written around it onto the
    pointer itself: with ``typedef float* fptr``, ``const fptr`` is
    ``float* const`` (writable floats), not the ``const float*`` that replacing
    the text would give.
    """
    plain = _outside_templates(ctype)
    spec = plain.find("*") if "*" in plain else len(ctype)   # before the declarator
    found = [m for m in _IDENT.finditer(ctype, 0, spec)
             if m.group() in aliases and m.group() not in seen]
    if not found:
        return [ctype]
    choices = []
    for m in found:
        targets = aliases[m.group()]
        top = plain[m.start()] != " "     # the type itself, not a template argument
        choices.append([(t, top and "*" in _outside_templates(t))
                        for target in ([targets] if isinstance(targets, str) else targets)
                        for t in _resolved(target, aliases, seen | {m.group()})])
    out = []
    for choice in itertools.product(*choices):
        parts, pos, pointer = [], 0, ""
        for m, (t, moves) in zip(found, choice):
            parts.append(ctype[pos: m.start()])
            if moves:
                pointer = t
            else:
                parts.append(t)
            pos = m.end()
        parts.append(ctype[pos:])
        out.append(" ".join(f"{pointer} {''.join(parts)}".split()))
    return list(dict.fromkeys(out))


def _closing(text: str, i: int) -> int:
    """The index just past the bracket that closes the one opened before ``i``."""
    depth = 1
    while depth and i < len(text):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i


def _split_commas(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return parts


def _split_top(text: str) -> list[str]:
    """Parameters (or template parameters) without their default values."""
    parts = [p.split("=")[0].strip() for p in _split_commas(text)]
    return [p for p in parts if p and p != "void"]


def _drop_attributes(text: str) -> str:
    """``text`` without ``__attribute__((...))``, ``__align__(n)``, ``[[...]]`` and the like."""
    text = re.sub(r"\[\[.*?\]\]", " ", text)
    while (m := _ATTRIBUTES.search(text)) is not None:
        text = text[: m.start()] + " " + text[_closing(text, m.end()):]
    return text.replace("__grid_constant__", " ")


_CALL = re.compile(r"\s*\(")


def _expand(text: str, macros: dict, unexpanded=None, full=None, depth: int = 8) -> str:
    """``text`` with the source's ``#define`` macros expanded (a few levels deep).

    An invocation whose arguments are not what its macro takes, or whose
    expansion cannot be told, stays as written and ``unexpanded`` (a list)
    gets why. ``full`` (by default ``macros``) is every macro, for telling
    whether a variadic macro's arguments expand to nothing."""
    def expand(t: str) -> str:
        if depth == 0:
            raise ValueError("macros nested too deeply to expand")
        return _expand(t, full or macros, None, None, depth - 1)

    for _ in range(8):
        out, pos = [], 0
        for m in _IDENT.finditer(text):
            if m.start() < pos or m.group() not in macros:
                continue
            params, body = macros[m.group()]
            end = m.end()
            if params is not None:
                call = _CALL.match(text, end)
                if call is None:
                    continue
                found = invocation(text, call.end() - 1)
                try:
                    if found is None:
                        raise ValueError(f"{m.group()}( without its )")
                    body = replacement(m.group(), params, body, found[0], expand)
                except ValueError as e:
                    if unexpanded is not None and str(e) not in unexpanded:
                        unexpanded.append(str(e))
                    continue
                end = found[1]
            out += [text[pos: m.start()], " ", body, " "]
            pos = end
        if not out:
            return text
        text = "".join(out) + text[pos:]
    return text


_MAX_VARIANTS = 64


def _variants(text: str, macros: dict):
    """``(tables, complete)``: a table of one definition per macro for each choice
    among the definitions of the macros that ``text`` uses (or theirs do) and
    that have several, the latest definitions first; ``complete`` is False where
    there were too many choices to try them all."""
    table = {name: defs[0] for name, defs in macros.items()}
    several, todo, seen = [], _IDENT.findall(text), set()
    while todo:
        name = todo.pop()
        if name in macros and name not in seen:
            seen.add(name)
            several += [name] if len(macros[name]) > 1 else []
            todo += [w for _, body in macros[name] for w in _IDENT.findall(body)]
    if not several:
        return [table], True
    choices = itertools.product(*(macros[name] for name in several))
    tables = [{**table, **dict(zip(several, c))}
              for c in itertools.islice(choices, _MAX_VARIANTS + 1)]
    return tables[:_MAX_VARIANTS], len(tables) <= _MAX_VARIANTS


_TYPEDEF = re.compile(r"\btypedef\s+([^;{}()]+?)\s*\b([A-Za-z_]\w*)\s*;")
_USING = re.compile(r"\busing\s+([A-Za-z_]\w*)\s*=\s*([^;{}]+);")


def _declarations(code: str, options=()):
    """``(macros, typedefs, code)``: the definitions of each macro and type alias
    (the latest first: a name may have several), and the code that the
    preprocessor keeps, with the ``-D``/``-U`` of ``options`` (without comments,
    the bodies of literals blanked)."""
    macros, code = preprocess(code, options)
    found = [(m.start(), m.group(2), m.group(1)) for m in _TYPEDEF.finditer(code)]
    found += [(m.start(), m.group(1), m.group(2)) for m in _USING.finditer(code)]
    typedefs: dict = {}
    for _, name, target in sorted(found):
        target = target.strip()
        typedefs[name] = [target] + [t for t in typedefs.get(name, ()) if t != target]
    return macros, typedefs, code


def parse_signature(code: str, name: str, options=(), symbol: str = "") -> list[CParam]:
    """The parameters of ``__global__ void name(...)`` in CUDA C++ source.

    Whatever cupy's compiler takes may stand around the name: ``extern "C"``,
    ``__launch_bounds__(...)`` and other attributes, namespaces and templates
    (``ns::k<float>``), macros (``#if`` and its kin evaluated with the
    ``-D``/``-U`` of the compiler ``options``; one may write the whole
    declaration, ``DEFINE(k, float) {...}``, variadic ones too), typedefs,
    ``__restrict__``, ``__align__``. A definition wins over a declaration. A
    macro invocation that cannot be expanded exactly (arguments the macro does
    not take) is an error saying so, never a guessed parameter list.

    Where the source leaves the kernel open (definitions in ``#if`` branches
    that cannot be told apart or in namespaces the name does not tell apart, a
    macro or typedef of its declaration defined more than once), a pointer is
    read-only only if it is in each possibility: a wrong "read-only" would drop
    a dependency. A kernel loaded by its mangled ``symbol`` (``_ZN4impl1kEPfPKfl``)
    is the overload whose parameter types the symbol spells.
    """
    macros, typedefs, code = _declarations(code, options)
    scope, base = _scope_of(name)
    unexpanded, unread = [], []
    codes, complete = _declared_by_macros(code, macros, unexpanded)
    complete = complete and not unexpanded   # the kernel may be in what stays unexpanded
    signatures, linkage = [], set()
    for head, text, extern_c in [c for variant in codes
                                 for c in _candidates(variant, base, scope, macros)]:
        tables, all_tried = _variants(head + " " + text, macros)
        complete = complete and all_tried
        for table in tables:
            expanded = _expand(head, table, unread)
            if _GLOBAL.search(expanded):
                aliases = {**typedefs, **_template_arguments(expanded, name)}
                params = _split_top(_expand(text, table, unread))
                if unread:   # a parameter list half expanded would be misread
                    raise ValueError(f"cannot expand the declaration of {base!r}: {unread[0]}")
                signatures.append([CParam(p, aliases, i) for i, p in enumerate(params)])
                linkage.add(extern_c)
    if not signatures:
        why = f" (a macro that may declare it is not expanded: {unexpanded[0]})" \
            if unexpanded else ""
        raise ValueError(f"no __global__ function {base!r} in the kernel source{why}")
    if len(linkage) > 1 and len({_packing(s) for s in signatures}) > 1:
        raise AmbiguousKernel(
            f"the name {base!r} means the extern \"C\" __global__ function {base} (its "
            "symbol, what a RawKernel loads) or the C++ one of that name (what a "
            "RawModule's name_expressions look up), and their parameters differ, so "
            "graphtrace cannot tell how to pass the arguments; rename one of them")
    if symbol.startswith("_Z") and len(signatures) > 1:
        signatures = _overload(signatures, base, symbol)
    return _merged(signatures, complete)


def _key(p: CParam) -> tuple:
    """What tells overloads apart by a parameter: pointer, const target, base type."""
    base = " ".join(_QUALIFIERS.sub(" ", p.ctype.replace("*", " ")).split())
    dt = c_dtype(base)
    return p.pointer, p.const, p.ctype.count("*"), str(dt) if dt is not None else base


def _overload(signatures: list, base: str, symbol: str) -> list:
    """The signatures of the overload of ``base`` that mangled ``symbol`` names,
    all of them where they pack alike and the symbol does not tell; else an
    ``AmbiguousKernel``."""
    types = mangled_params(symbol)
    if types is not None:
        try:
            wanted = [_key(CParam(t, index=i)) for i, t in enumerate(types)]
        except ValueError:
            wanted = None
        found = [s for s in signatures if [_key(p) for p in s] == wanted]
        if found:
            return found
    if len({_packing(s) for s in signatures}) == 1:
        return signatures
    raise AmbiguousKernel(
        f"the symbol {symbol} is one of the overloads of {base} in the kernel source, "
        "whose parameters differ, and graphtrace cannot tell which from the symbol, so it "
        "cannot tell how to pass the arguments; give the overloads different names")


class AmbiguousKernel(ValueError):
    """Kernels a name may mean take their arguments differently: no one to pack for.
    Its message says what to do."""


def _packing(signature: list) -> tuple:
    """How the arguments of a signature are passed: a pointer, or a number's type."""
    return tuple((p.pointer, p.dtype, None if p.pointer or p.dtype is not None else
                  " ".join(_QUALIFIERS.sub(" ", p.ctype).split())) for p in signature)


def _declared_by_macros(code: str, macros: dict, unexpanded: list):
    """``(codes, complete)``: ``code`` with each macro that writes a kernel's
    declaration (``KERNEL(k)(...)``, ``DEFINE(k, float) {...}``: its expansion
    holds ``__global__``) expanded, once for each choice among the definitions
    of such macros; ``complete`` as ``_variants`` says. A name made by ``##``
    stays unread; an invocation that cannot be expanded exactly stays as
    written, and ``unexpanded`` gets why."""
    makers = {name for name, defs in macros.items() if any(_GLOBAL.search(b) for _, b in defs)}
    while True:   # and the macros whose expansion holds one of those
        more = {name for name, defs in macros.items() if name not in makers
                and any(makers.intersection(_IDENT.findall(b)) for _, b in defs)}
        if not more:
            break
        makers |= more
    if not makers.intersection(_IDENT.findall(code)):
        return [code], True
    tables, complete = _variants(" ".join(sorted(makers)), macros)
    return [_expand(code, {m: t[m] for m in makers}, unexpanded, t) for t in tables], complete


def _merged(signatures: list, complete: bool = True) -> list[CParam]:
    """The first signature, each pointer read-only only if it is so in every
    other (and all possibilities were tried)."""
    first = signatures[0]
    for i, p in enumerate(first):
        if p.const and not (complete and all(i < len(s) and s[i].const for s in signatures)):
            p.const = False
    return first


def _scope_of(name: str):
    """``(namespaces, name)`` of a kernel's name: ``(("a", "b"), "k")`` for ``a::b::k<float>``."""
    parts = [p.strip() for p in name.split("<")[0].split("::")]
    return tuple(p for p in parts[:-1] if p), parts[-1]


def _candidates(code: str, base: str, scope: tuple, macros: dict) -> list:
    """``(head, parameters, extern_c)`` of the ``__global__`` functions ``base`` of
    ``code`` that the name may mean: those in namespace ``scope`` if any is, else
    all of them; their definitions if any, else their declarations. A plain name
    (``k``) is also the symbol of an ``extern "C"`` function ``k`` of any
    namespace (C names ignore namespaces): such ones count, and come first."""
    spaces = _namespaces(code) if "namespace" in code else []
    blocks = _extern_c_blocks(code) if "extern" in code else []
    found, names = [], _spellings(base, macros)
    for m in re.finditer(r"\b(?:" + "|".join(map(re.escape, names)) + r")\s*[(<]", code):
        opened = _opening(code, m)   # past "(", or past "k<float>(" of a specialization
        if opened is None:
            continue
        head = code[max(code.rfind(c, 0, m.start()) for c in ";{}") + 1: m.start()]
        heads = [_expand(head, t) for t in _variants(head, macros)[0]]
        if not any(_GLOBAL.search(h) for h in heads):
            continue
        end = _closing(code, opened)
        extern_c = any(start <= m.start() < stop for start, stop in blocks) or \
            any(_EXTERN_C.search(h) for h in heads)
        found.append((head, code[opened: end - 1], code[end:].lstrip().startswith("{"),
                      scope in _scopes(spaces, m.start(), head) or (extern_c and not scope),
                      extern_c))
    found = [f for f in found if f[3]] or found
    found = [f for f in found if f[2]] or found
    return [(head, text, extern_c) for head, text, _, _, extern_c in
            sorted(found, key=lambda f: not f[4])]


def _spellings(base: str, macros: dict) -> list:
    """``base`` and the object-like macros that may expand to it (``#define KNAME k``:
    ``__global__ void KNAME(...)`` declares ``k``), through others too."""
    names = [base]
    for name in names:   # (grows as it goes)
        names += [m for m, defs in macros.items() if m not in names and
                  any(params is None and body.strip() == name for params, body in defs)]
    return names


# extern "C" (the preprocessor blanks a literal's body, its length kept: "C++" is "   ")
_EXTERN_C = re.compile(r'\bextern\s*" "')


def _extern_c_blocks(code: str) -> list:
    """``(start, end)`` of each ``extern "C" { ... }`` block's body in ``code``."""
    out = []
    for m in re.finditer(_EXTERN_C.pattern + r"\s*\{", code):
        depth, i = 1, m.end()
        while depth and i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        out.append((m.end(), i))
    return out


def _opening(code: str, m) -> int | None:
    """Past the ``(`` of the parameters after the name ``m`` found: at once, or after
    the template arguments of an explicit specialization (``template<> __global__
    void k<float>(float* x)``, which the launch of ``k<float>`` runs: one of the
    kernels the name may mean, so that its intents count); None where no ``(``
    follows."""
    i = m.end()
    if code[i - 1] == "(":
        return i
    depth = 1
    while depth and i < len(code):
        depth += {"<": 1, ">": -1}.get(code[i], 0)
        i += 1
    rest = code[i:].lstrip()
    return len(code) - len(rest) + 1 if depth == 0 and rest.startswith("(") else None


_NAMESPACE = re.compile(r"\b(inline\s+)?namespace\b\s*([\w:\s]*?)\s*\{|[{}]")


def _namespaces(code: str) -> list:
    """``(start, end, names, inline)`` of each namespace body of ``code``, outer
    first; an anonymous one has no names (its members are its outer scope's)."""
    out, stack = [], []
    for m in _NAMESPACE.finditer(code):
        if m.group() == "}":
            if stack:
                start, names, inline = stack.pop()
                if names is not None:
                    out.append((start, m.start(), names, inline))
        else:
            names = None if m.group() == "{" else re.findall(r"\w+", m.group(2))
            stack.append((m.end(), names, bool(m.group(1))))
    out += [(start, len(code), names, inline) for start, names, inline in stack
            if names is not None]
    return sorted(out)


def _scopes(spaces: list, pos: int, head: str) -> tuple:
    """The namespaces (``("a", "b")`` for ``a::b::k``) that name the function
    declared at ``pos`` after ``head``: all of them, and without the inline ones."""
    outer = [(names, inline) for start, end, names, inline in spaces if start <= pos < end]
    qualifier = re.search(r"(?:\b[A-Za-z_]\w*\s*::\s*)+$", head)   # void ns::k(...) {}
    own = tuple(_IDENT.findall(qualifier.group())) if qualifier else ()
    return (tuple(n for names, _ in outer for n in names) + own,
            tuple(n for names, inline in outer if not inline for n in names) + own)


def _template_arguments(head: str, name: str) -> dict:
    """Template parameter -> the type named in ``k<float, ...>`` (or its default)."""
    m = re.search(r"\btemplate\s*<", head)
    if m is None:
        return {}
    depth, i = 1, m.end()
    while depth and i < len(head):
        depth += {"<": 1, ">": -1}.get(head[i], 0)
        i += 1
    formals = [f.strip() for f in _split_commas(head[m.end(): i - 1])]
    actuals = _split_top(name[name.index("<") + 1: name.rindex(">")]) if "<" in name else []
    out = {}
    for k, formal in enumerate(formals):
        decl, _, default = formal.partition("=")
        words = decl.split()
        if not words:
            continue
        value = actuals[k] if k < len(actuals) else default.strip()
        if value:
            out[words[-1].lstrip(".")] = value
    return out
