"""The parameter types a C++ kernel's mangled symbol (Itanium ABI) spells.

Overloads share a name (``impl::k(const float*, float*, int)`` beside
``impl::k(float*, const float*, long)``); the symbol a ``RawKernel`` loads
(``_ZN4impl1kEPfPKfl``) tells which one by its parameter types. Only the
basics are read: builtin types, pointers, ``const``/``volatile``/``restrict``,
class names, template parameters of builtin types and substitutions
(``S_``, ``S0_``); anything else is not read (None).
"""
from __future__ import annotations

import re

__all__ = ["mangled_params"]

# Itanium ABI codes of builtin types
BUILTINS = {"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char",
            "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int",
            "l": "long", "m": "unsigned long", "x": "long long", "y": "unsigned long long",
            "f": "float", "d": "double"}
_QUALIFIER = {"K": "const", "V": "volatile", "r": "__restrict__"}


class _Unread(Exception):
    """A part of the symbol the decoder does not read."""


def _seq_id(text: str) -> int:
    """The index of substitution ``S<text>_`` (``S_`` is 0, ``S0_`` 1, base 36)."""
    return 0 if text == "" else int(text, 36) + 1


class _Reader:
    def __init__(self, rest: str, subs: list, template_args: list):
        self.rest, self.i, self.subs, self.args = rest, 0, subs, template_args

    def _number_name(self) -> str:
        m = re.match(r"\d+", self.rest[self.i:])
        if m is None:
            raise _Unread
        start = self.i + m.end()
        self.i = start + int(m.group())
        return self.rest[start:self.i]

    def type(self) -> str:
        """One C type, read from the symbol at ``i``."""
        c = self.rest[self.i:self.i + 1]
        if c in BUILTINS:
            self.i += 1
            return BUILTINS[c]
        if c == "D" and self.rest[self.i + 1:self.i + 2] == "h":
            self.i += 2
            return "__half"
        if c in _QUALIFIER:
            quals = []
            while self.rest[self.i:self.i + 1] in _QUALIFIER:
                quals.append(_QUALIFIER[self.rest[self.i]])
                self.i += 1
            inner = self.type()
            t = (f"{inner} {' '.join(reversed(quals))}" if inner.endswith("*")
                 else f"{' '.join(reversed(quals))} {inner}")
        elif c == "P":
            self.i += 1
            t = self.type() + "*"
        elif c == "S" and (m := re.match(r"S([0-9A-Z]*)_", self.rest[self.i:])):
            self.i += m.end()
            n = _seq_id(m.group(1))
            if n >= len(self.subs):
                raise _Unread
            return self.subs[n]
        elif c == "T" and (m := re.match(r"T([0-9]*)_", self.rest[self.i:])):
            self.i += m.end()
            n = _seq_id(m.group(1))
            if n >= len(self.args) or self.args[n] is None:
                raise _Unread
            t = self.args[n]
        elif c.isdigit():
            t = self._number_name()   # a class at global scope: float2
        else:
            raise _Unread
        self.subs.append(t)
        return t


def mangled_params(symbol: str) -> list[str] | None:
    """The C types of the parameters of the function whose symbol is ``symbol``
    (``["float*", "const float*", "long"]`` for ``_ZN4impl1kEPfPKfl``), or None
    where the symbol is not read (not a mangled function, or parts not read)."""
    if not symbol.startswith("_Z"):
        return None
    subs: list = []
    reader = _Reader(symbol[2:], subs, [])
    try:
        nested = reader.rest.startswith("N")
        if nested:
            reader.i = 1
            while reader.rest[reader.i:reader.i + 1].isdigit():
                name = reader._number_name()
                if reader.rest[reader.i:reader.i + 1] != "E":
                    subs.append(name)   # a namespace prefix (not the function itself)
            if reader.rest[reader.i:reader.i + 1] == "I":
                raise _Unread   # a namespace's template: not read
            if reader.rest[reader.i:reader.i + 1] != "E":
                raise _Unread
            reader.i += 1
        else:
            reader._number_name()
            if reader.rest[reader.i:reader.i + 1] == "I":
                subs.append("#template")   # the template's name is a substitution
                reader.i += 1
                while reader.rest[reader.i:reader.i + 1] != "E":
                    if reader.rest[reader.i:reader.i + 1] == "L":   # a constant
                        end = reader.rest.find("E", reader.i)
                        if end < 0:
                            raise _Unread
                        reader.args.append(None)
                        reader.i = end + 1
                    else:
                        reader.args.append(reader.type())
                reader.i += 1
                if reader.type() != "void":   # a template's return type comes first
                    raise _Unread
        params = []
        while reader.i < len(reader.rest):
            if reader.rest[reader.i] == "v" and reader.i == len(reader.rest) - 1 and not params:
                return []
            params.append(reader.type())
        return params
    except (_Unread, IndexError, ValueError):
        return None
