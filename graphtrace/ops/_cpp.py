"""The C preprocessor as far as reading a kernel's signature needs it: which
lines ``#if`` and its kin keep, evaluated with the ``-D``/``-U`` options the
kernel is compiled with, and every definition each macro may have. Where a
condition cannot be evaluated both branches stay, and what each defines is a
possibility (``_csignature`` then takes the cautious answer).
"""
from __future__ import annotations

import operator
import re

__all__ = ["invocation", "plain_source", "preprocess", "replacement"]

_IDENT = re.compile(r"[A-Za-z_]\w*")

# Preprocessing: what #if and its kin keep, with the -D/-U options of the kernel.

_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*([A-Za-z_]\w*)?(.*)")
_MACRO = re.compile(r"[ \t]*([A-Za-z_]\w*)(\([^)]*\))?(.*)")
_TOKEN = re.compile(r"\w+|&&|\|\||<<|>>|[<>=!]=|\S")
_PREDEFINED = ("__CUDACC__", "__CUDACC_RTC__", "__CUDA_ARCH__", "__cplusplus")  # by NVRTC
_NEVER = ("__HIPCC__", "__HIP_DEVICE_COMPILE__")
_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
           "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
_OPS = {"|": operator.or_, "^": operator.xor, "&": operator.and_, "==": operator.eq,
        "!=": operator.ne, "<": operator.lt, ">": operator.gt, "<=": operator.le,
        ">=": operator.ge, "<<": operator.lshift, ">>": operator.rshift, "+": operator.add,
        "-": operator.sub, "*": operator.mul}
_COMPARE = ("==", "!=", "<", ">", "<=", ">=")
_UNARY = {"!": lambda v: int(not v), "-": operator.neg, "+": operator.pos,
          "~": operator.invert}
_WRAP = 1 << 64


class _Unsigned(int):
    """A value of ``uintmax_t`` in an ``#if`` (``0u``, ``~0u``, ``0xFFFFFFFFFFFFFFFF``):
    C converts the other operand of an operation with one to unsigned, so
    ``-1 < 0u`` is false, and its arithmetic wraps modulo 2**64."""


def _c_value(value: int, unsigned: bool):
    """``value`` as ``uintmax_t`` (wrapped) or as ``intmax_t``: None where that
    overflows, which C leaves undefined."""
    if unsigned:
        return _Unsigned(value % _WRAP)
    return value if -(1 << 63) <= value < 1 << 63 else None


def _binary(op: str, a: int, b: int):
    """``a op b`` of an ``#if``, with C's integer types: None where C leaves it undefined."""
    if op in ("<<", ">>"):   # of the left operand's type; a count past its width is undefined
        unsigned = isinstance(a, _Unsigned)
        if not 0 <= b < 64:
            return None
    else:
        unsigned = isinstance(a, _Unsigned) or isinstance(b, _Unsigned)
        a, b = (a % _WRAP, b % _WRAP) if unsigned else (int(a), int(b))
    if op in ("/", "%"):     # C divides toward zero
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return _c_value(q if op == "/" else a - b * q, unsigned)
    value = _OPS[op](int(a), int(b))
    return int(value) if op in _COMPARE else _c_value(value, unsigned)


def _and(a, b):
    """``a and b`` of True, False and None (not known)."""
    return False if a is False or b is False else True if a and b else None


def _or(a, b):
    """``a or b`` of True, False and None (not known)."""
    return True if a is True or b is True else False if a is False and b is False else None


def _not(a):
    return None if a is None else not a


class _Macros:
    """What the preprocessor knows of the macros as it reads the source.

    ``state`` maps each macro that may be defined to ``(definitions, maybe)``:
    the definitions it may have (the latest first; none known for the
    compiler's) and whether it may be undefined. ``seen`` keeps every
    definition made where code may be compiled, for the kernel's declaration.
    A name nothing defines may yet be a header's macro (after an ``#include``)
    or the compiler's (a reserved name): whether it is defined is not known.
    """

    def __init__(self, options=()):
        self.state: dict = {name: ([], False) for name in _PREDEFINED}
        self.seen: dict = {}
        self.includes = False
        for define, arg in _option_macros(options):
            name, eq, value = arg.partition("=")
            if define:
                self.define(f"{name} {value if eq else '1'}", True)
            else:
                self.undefine(name.strip(), True)

    def define(self, text: str, live) -> None:
        """``#define text`` where code is compiled (``live`` True) or may be (None)."""
        m = _MACRO.match(text)
        if m is None:
            return
        name = m.group(1)
        params = None if m.group(2) is None else \
            [p.strip() for p in m.group(2)[1:-1].split(",")] if m.group(2)[1:-1].strip() else []
        new = (params, m.group(3).strip())
        defs, maybe = self.state.get(name, ([], True)) if live is None else ([], False)
        self.state[name] = ([new] + [d for d in defs if d != new], maybe)
        self.seen[name] = [new] + [d for d in self.seen.get(name, ()) if d != new]

    def undefine(self, name: str, live) -> None:
        if live:
            self.state.pop(name, None)
        elif name in self.state:
            self.state[name] = (self.state[name][0], True)

    def defined(self, name: str):
        """Whether macro ``name`` is defined: True, False or None (not known)."""
        if name in self.state:
            return None if self.state[name][1] else True
        if name in _NEVER:
            return False
        return None if self.includes or re.match(r"_[_A-Z]", name) else False

    def holds(self, word: str, rest: str):
        """Whether ``#if rest`` (``#ifdef``, ``#ifndef``) holds: True, False or None."""
        if word == "if":
            return self.condition(rest)
        name = _IDENT.match(rest)
        found = None if name is None else self.defined(name.group())
        return found if word == "ifdef" else _not(found)

    def condition(self, expr: str):
        """Whether ``#if expr`` holds; None where that cannot be told (an operator
        not handled here, a macro of an unknown value)."""
        try:
            tokens = self._values(_TOKEN.findall(expr), 8)
            value, end = _evaluate(tokens, 0)
        except (IndexError, ValueError, TypeError, OverflowError):
            return None
        return None if value is None or end != len(tokens) else bool(value)

    def _values(self, words: list, depth: int) -> list:
        """``words`` of an ``#if`` with each number, ``defined(X)`` and macro made
        its value (None where not known); operators as they are."""
        out, i = [], 0
        while i < len(words):
            word, i = words[i], i + 1
            if word == "defined":
                paren = words[i] == "("
                if paren and words[i + 2] != ")":
                    raise ValueError("defined( without its )")
                found = self.defined(words[i + paren])
                out.append(None if found is None else int(found))
                i += 3 if paren else 1
            elif word[0].isdigit():
                out.append(_number(word))
            elif _IDENT.fullmatch(word):
                out += self._value(word, depth)
            else:
                out.append(word)
        return out

    def _value(self, name: str, depth: int) -> list:
        """The values a name stands for in an ``#if``: an undefined one is 0."""
        if name in ("true", "false"):
            return [int(name == "true")]
        if name not in self.state:
            return [0 if self.defined(name) is False else None]
        defs, maybe = self.state[name]
        if maybe or len(defs) != 1 or defs[0][0] is not None or depth == 0:
            return [None]
        return self._values(_TOKEN.findall(defs[0][1]), depth - 1)


# Expanding a function-like macro: its arguments bound to its parameters.

_PP_TOKEN = re.compile(r"##|#|\.?\d(?:[eEpP][+-]|[\w.])*|[A-Za-z_]\w*|\s+|.", re.S)


def invocation(text: str, start: int):
    """``(arguments, end)`` of the macro invocation whose ``(`` is ``text[start]``:
    the text of each argument (only parentheses keep a comma inside one, as the
    preprocessor reads them) and the index past its ``)``; None without one."""
    args, depth, begin = [], 0, start + 1
    for i in range(start + 1, len(text)):
        c = text[i]
        if c == "," and depth == 0:
            args.append(text[begin: i])
            begin = i + 1
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return args + [text[begin: i]], i + 1
            depth -= 1
    return None


def replacement(name: str, params: list, body: str, args: list, expand) -> str:
    """The ``body`` of macro ``name(params)`` invoked with ``args``, each parameter
    replaced by its argument. A variadic macro's ``...`` (``rest...`` of GNU) takes
    the arguments past the named ones, commas included, as ``__VA_ARGS__`` (``rest``);
    ``__VA_OPT__(x)`` is ``x`` where those expand (``expand(text)``) to something;
    ``, ## __VA_ARGS__`` drops its comma where they are empty; ``#param`` is a string
    literal (whose text nothing reads). ValueError saying why where the arguments
    are not what the macro takes or the expansion cannot be told."""
    variadic = bool(params) and params[-1].endswith("...")
    named = params[:-1] if variadic else params
    if args == [""] and not named:
        args = []     # F() gives no argument to a macro without named parameters
    if len(args) < len(named) or len(args) > len(named) and not variadic:
        call = " ".join(f"{name}({','.join(args)})".split())
        call = call if len(call) <= 60 else call[:56] + "...)"
        raise ValueError(f"{call} gives {len(args)} argument{'s' * (len(args) != 1)} where "
                         f"macro {name} takes {'at least ' if variadic else ''}{len(named)} "
                         f"({', '.join(params)})")
    values, va = {p: a.strip() for p, a in zip(named, args)}, None
    if variadic:
        va = params[-1][:-3].strip() or "__VA_ARGS__"
        values[va] = ",".join(args[len(named):]).strip()
    return _replaced(_PP_TOKEN.findall(body), values, va, expand, name)


def _next(tokens: list, i: int) -> int:
    """The index of the first token from ``i`` that is not white space."""
    while i < len(tokens) and not tokens[i].strip():
        i += 1
    return i


def _replaced(tokens: list, values: dict, va, expand, name: str) -> str:
    """``tokens`` of a macro's body with its parameters replaced (see ``replacement``);
    ``va`` names the variable arguments (None: the macro has none)."""
    out, i, rest = [], 0, values.get(va)
    while i < len(tokens):
        tok, i = tokens[i], i + 1
        after = _next(tokens, i)
        if tok == "__VA_OPT__" and va is not None:
            if after == len(tokens) or tokens[after] != "(":
                raise ValueError(f"__VA_OPT__ without its ( in macro {name}")
            depth, k = 1, after + 1
            while depth and k < len(tokens):
                depth += {"(": 1, ")": -1}.get(tokens[k], 0)
                k += 1
            if depth:
                raise ValueError(f"__VA_OPT__( without its ) in macro {name}")
            if rest and not expand(rest).strip():
                raise ValueError(f"macro {name}'s __VA_OPT__ with arguments {rest!r} that "
                                 "expand to nothing (C++ versions differ on it)")
            if rest:
                out.append(_replaced(tokens[after + 1: k - 1], values, va, expand, name))
            i = k
        elif tok == "#" and after < len(tokens) and tokens[after] in values:
            out.append('""')      # stringized: a literal, whose text is blanked anyway
            i = after + 1
        elif tok == "##" and va is not None and after < len(tokens) and tokens[after] == va \
                and [t for t in out if t.strip()][-1:] == [","]:
            if not rest:          # GNU: the comma goes with empty variable arguments
                while out.pop() != ",":
                    pass
            else:
                out += [" ", rest]
            i = after + 1
        else:
            out.append(values.get(tok, tok))
    return "".join(out)


def _option_macros(options) -> list:
    """``(define, "NAME=value")`` of each ``-D`` (define True) and ``-U`` option."""
    options, out = [str(o) for o in options or ()], []
    for i, o in enumerate(options):
        for flag, long, define in (("-D", "--define-macro", True),
                                   ("-U", "--undefine-macro", False)):
            if o in (flag, long) and i + 1 < len(options):
                out.append((define, options[i + 1]))
            elif o.startswith(long + "="):
                out.append((define, o[len(long) + 1:]))
            elif o.startswith(flag) and len(o) > 2:
                out.append((define, o[2:]))
    return out


def _number(word: str) -> int:
    """The value of an integer literal of an ``#if``: ``256u`` (unsigned), ``0x1F``,
    ``010``, ``0b11``. A hexadecimal or octal one past ``intmax_t`` is unsigned."""
    digits = word.rstrip("uUlL")
    unsigned = "u" in word[len(digits):].lower()
    base = {"0x": 16, "0X": 16, "0b": 2, "0B": 2}.get(digits[:2], 8 if digits[:1] == "0" else 10)
    value = int(digits, base)
    if value >= _WRAP or value >= 1 << 63 and base == 10 and not unsigned:
        raise ValueError(f"{word} is past the preprocessor's integers")
    return _Unsigned(value) if unsigned or value >= 1 << 63 else value


def _evaluate(tokens: list, i: int, level: int = 1):
    """``(value, index past it)`` of the ``#if`` expression at ``tokens[i]`` made
    of binary operators that bind at least as tightly as ``level``. A value of
    None is not known; ``&&`` and ``||`` may know theirs all the same."""
    value, i = _operand(tokens, i)
    while i < len(tokens) and _BINARY.get(tokens[i], 0) >= level:
        op = tokens[i]
        right, i = _evaluate(tokens, i + 1, _BINARY[op] + 1)
        if op == "&&":
            value = 0 if value == 0 or right == 0 else None if None in (value, right) else 1
        elif op == "||":
            value = 1 if value or right else None if None in (value, right) else 0
        else:
            value = None if None in (value, right) else _binary(op, value, right)
    return value, i


def _operand(tokens: list, i: int):
    """``(value, index past it)`` of the operand at ``tokens[i]`` of an ``#if``."""
    token = tokens[i]
    if token == "(":
        value, i = _evaluate(tokens, i + 1)
        if tokens[i] != ")":
            raise ValueError("( without its )")
        return value, i + 1
    if token in _UNARY:
        value, i = _operand(tokens, i + 1)
        if value is not None:   # ! gives an int; - and ~ keep an unsigned one unsigned
            value = _UNARY[token](value) if token == "!" else \
                _c_value(_UNARY[token](int(value)), isinstance(value, _Unsigned))
        return value, i
    if token is None or isinstance(token, int):
        return token, i + 1
    raise ValueError(f"{token!r} in an #if")


# Reading the text as the compiler does before preprocessing: lines spliced,
# comments and the bodies of literals told apart in one pass from the left.

_SPLICE = re.compile(r"\\[ \t]*\n")
_LEXEME = re.compile(r"""(?P<line>//[^\n]*)|(?P<block>/\*)
    |(?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\\s]{0,16})\()|(?P<quote>(?:u8|[uUL])?["'])
    |(?:[A-Za-z_]\w*(?![\w"'])|\.?\d(?:[eEpP][+-]|'\w|[\w.])*|[^\w"'/.]|\.(?!\d)|/(?![/*]))+
    |[A-Za-z_]\w*""", re.X)   # names, numbers (1'000 holds no quote) and the rest, as they are
_BODY = {q: re.compile(rf"(?:[^{q}\\\n]|\\.)*") for q in "\"'"}   # of a literal: escapes


def _newlines_later(text: str, held: int):
    """``(text, held)``: ``held`` newlines (of spliced lines, comments, raw
    strings: one logical line to the compiler) put after the next newline of
    ``text``, so that the lines after keep their numbers."""
    if held and "\n" in text:
        return text.replace("\n", "\n" * (held + 1), 1), 0
    return text, held


def plain_source(code: str) -> str:
    """``code`` as the preprocessor reads it: spliced lines (``\\`` at the end)
    joined, each comment a space, the bodies of string and character literals
    (raw strings too) blanked, so that no ``/*``, ``//``, quote, brace or
    declaration inside one counts. A line taken into the one before is left
    empty after it: the lines keep their numbers."""
    code = code.replace("\r\n", "\n")
    parts, held = _SPLICE.split(code), 0
    for k in range(1, len(parts)):
        parts[k], held = _newlines_later(parts[k], held + 1)
    code = "".join(parts) + "\n" * held
    out, pos, held = [], 0, 0
    while (m := _LEXEME.search(code, pos)) is not None:
        gap, held = _newlines_later(code[pos: m.start()], held)
        out.append(gap)
        pos = m.end()
        if m.group("line"):
            out.append(" ")
        elif m.group("block"):
            end = code.find("*/", pos)
            end = len(code) if end < 0 else end + 2
            out.append(" ")
            held += code.count("\n", pos, end)
            pos = end
        elif m.group("raw"):
            close = ")" + m.group("delim") + '"'
            end = code.find(close, pos)
            end, close = (len(code), "") if end < 0 else (end, close)
            lines = code.count("\n", pos, end)
            out += [m.group(), " " * (end - pos - lines), close]
            held += lines
            pos = end + len(close)
        elif m.group("quote"):   # to its closing quote, or the line's end if none
            quote = m.group()[-1]
            end = _BODY[quote].match(code, pos).end()
            closed = code[end: end + 1] == quote
            out += [m.group(), " " * (end - pos), quote if closed else ""]
            pos = end + closed
        else:
            text, held = _newlines_later(m.group(), held)
            out.append(text)
    tail, held = _newlines_later(code[pos:], held)
    return "".join(out) + tail + "\n" * held


def preprocess(code: str, options=()):
    """``(macros, code)``: the definitions of each macro (the latest first), and
    ``code`` without its directives and the lines that ``#if`` and its kin leave
    out, with the ``-D``/``-U`` of ``options``, read as ``plain_source`` gives
    it. Where a condition cannot be evaluated both branches stay: what each
    defines is then a possibility."""
    macros, lines, stack, live = _Macros(options), [], [], True
    for line in plain_source(code).split("\n"):
        d = _DIRECTIVE.match(line)
        if d is None:
            lines.append("" if live is False else line)
            continue
        lines.append("")
        word, rest = d.group(1) or "", d.group(2).strip()
        if word in ("if", "ifdef", "ifndef"):
            holds = False if live is False else macros.holds(word, rest)
            stack.append((live, holds))
            live = _and(live, holds)
        elif word in ("elif", "elifdef", "elifndef", "else") and stack:
            outer, taken = stack[-1]     # taken: whether an earlier branch was
            holds = (True if word == "else" else
                     False if outer is False or taken else macros.holds(word[2:], rest))
            live = _and(outer, _and(_not(taken), holds))
            stack[-1] = (outer, _or(taken, holds))
        elif word == "endif" and stack:
            live = stack.pop()[0]
        elif live is False:
            continue
        elif word == "define":
            macros.define(rest, live)
        elif word == "undef" and rest:
            macros.undefine(rest.split()[0], live)
        elif word == "include":
            macros.includes = True
    return macros.seen, "\n".join(lines)
