"""A helper module of the program's own whose globals traced code sets
(test_kept_in_modules.py)."""
import functools
import types

CACHE = None
TABLE: dict = {}
SUB = types.ModuleType("kept_module_sub")   # a module it holds in turn
SUB.CACHE = None
KEPT: list = []
STORE: list = []     # kept by a function its factory made: named by no code
PARTIAL_STORE: list = []


def _make_stash(store):
    def stash(t):
        store.append(t)
    return stash


stash = _make_stash(STORE)
stash_partial = functools.partial(list.append, PARTIAL_STORE)
VOCAB = [("w%d" % i, i) for i in range(4)]   # a table no traced code names


def keep(t) -> None:
    global CACHE
    CACHE = t


def remember(t) -> None:
    KEPT.append(t)


def clear() -> None:
    global CACHE
    CACHE = SUB.CACHE = None
    TABLE.clear()
    KEPT.clear()
    STORE.clear()
    PARTIAL_STORE.clear()
    for k in [k for k in globals() if not isinstance(k, str)]:
        del globals()[k]


def note_by_number(n) -> None:
    globals()[n] = n   # (a key other than a name)
