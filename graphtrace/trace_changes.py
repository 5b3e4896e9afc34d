"""What a trace changed of what a graph function reaches, told after it: the
state and settings of held objects (``note_traced``), those the code read
first (``read_first``), where a value it set is found again (``store_roots``),
the arrays its names hold (``bare_arrays``, ``rebound``), and the code it ran
(``traced_code``). ``Holdings`` (``holding.py``) derives from ``TraceChanges``,
which asks it what a call reaches (``entries``, ``walk``, ``_reaches``, ``_code``).
"""
from __future__ import annotations

from .chains import lookup
from .container_flags import decides, entry_pairs, read, refilled
from .first_reads import counted, never_read, read_first
from .held_keys import set_from_none, set_within, state_changed
from .owners import _attributes, _dunders
from .refill import Contents
from .replayed_stores import argument_values, changed as changed_values, put_back, roots, \
    values_of
from .values import _leaves

__all__ = ["TraceChanges"]


class TraceChanges:
    """The methods of ``Holdings`` a call asks after its trace."""

    def note_traced(self, before, self_obj) -> tuple:
        """Keep as state what a trace changed of the held objects' attributes in the
        key (``before``: ``entries`` before the trace): the key leaves them out from
        now on (self's own too: ``self.calls += 1``); but what it set from None
        (``if self.scale is None: self.scale = 1.0``) is a setting, watched. Whether
        there were any (the call's key must be found again), the labels of the
        state found now, and those of the settings whose old value the code read
        first and may have decided work by (``first_reads``: ``if not
        self.started: ...; self.started = True``), which keep the old value in
        the key; the labels of all the settings it made (set again by each
        replay: ``replayed_stores``); and those of the lists, sets and dicts it
        changed in place as a flag (``container_flags``: ``if not self.log: ...;
        self.log.append("started")``), among the settings it decided by, filled
        again by each replay; a container it changed that the key does not hold
        by itself, otherwise (a global history, ``LOG.append(v)``), is left alone,
        but one the code reads to decide work (``if len(LOG) < 2:``), which is state
        (``container_flags.decides``: not a log line's read)."""
        now = self.entries(self_obj)   # None: the trace let go of every object held
        after = now[1] if now is not None else ()
        changed, initialized = state_changed(before[1], after), set_from_none(before[1], after)
        if initialized:   # a counter set from absent: M = globals().get("M", 0) + 1, state
            functions = self.traced_functions(self_obj)
            counters = {label for label in initialized if counted(functions, label)}
            changed, initialized = changed | counters, initialized - counters
        within = set_within(before[1], after, changed, initialized,   # self.cfg.state:
                            self.function)   # its ['init'] set from absent, no state,
        # but a flag where the code reads it whole (if self.d: ...; self.d["init"] = True)
        filled, quiet, again = refilled(entry_pairs(before[1], after, changed),
                                        lambda: self.traced_functions(self_obj),
                                        self.afters.setdefault(before[0], {}))
        if quiet:   # a history the code reads to decide work (if len(LOG) < 2: ...;
            functions = self.traced_functions(self_obj)   # LOG.append(1)): state, named
            again |= {label for label in quiet if decides(functions, label)}
        changed = (changed | again) - within - filled
        new = changed - self.traced_state.get(before[0], set())
        if changed:
            self.traced_state[before[0]] = self.traced_state.get(before[0], set()) | changed
            for r in self._reaches(self_obj):   # CFG["calls"] += 1: Reach's chains too
                r.note_state(changed)
        # a setting made, or one that was None (not in the key: if self.kick is None),
        # or one taken away (if hasattr(self, "pending"): ...; del self.pending)
        labels = {e[0] for e in before[1]}, {e[0] for e in after}
        made = initialized | filled | labels[1] - labels[0] | labels[0] - labels[1]
        decided = self.read_first(self_obj, made - filled) | filled if made else set()
        for r in self._reaches(self_obj) if decided else ():   # if "init" not in STATE
            r.note_decided(decided)
        return bool(changed or made), new, decided, made, filled

    def note_arguments(self, self_obj, given, now) -> tuple:
        """``(decided, signals, filled)`` of the values of the objects of the
        program's own a call passes (``replayed_stores.argument_values``: ``given``
        before the trace, ``now`` after it) that the trace changed: those the code
        read first, deciding work (``st.init``), those it only sets (``st.ran =
        True``), and the lists, sets and dicts among them it changed in place as a
        flag (``st.log.append("started")`` under ``if not st.log``: decided, filled
        again by each replay); another change of a container is left alone (the key
        holds its items: a call finding others traces anew)."""
        moved = changed_values(given, now)
        boxes = {label for label in moved if type(now[label]) is Contents}
        filled, _, _ = refilled({label: (given[label].form, now[label].form, True)
                              for label in boxes if type(given.get(label)) is Contents},
                             lambda: self.traced_functions(self_obj))
        decided = self.read_first(self_obj, moved - boxes) | filled
        return decided, self.read_first(self_obj, moved - boxes - decided, never_read), filled

    def kept(self, held, given, self_obj, arguments, params) -> dict:
        """What a trace may set of the values the call's key reads (``held``, the
        ``entries``; ``given``, ``argument_values``), as it is now, for putting back
        after a trace that is no call (``replayed_stores.values_of``: a container by
        its ``Contents``); ``params``, the function's parameters."""
        labels = {e[0] for e in held[1]} if held else set()
        return values_of(labels | set(given), self.store_roots(self_obj, params), arguments)

    def put_back(self, kept, held, given, self_obj, arguments, params) -> None:
        """After a trace that is no call (``f.trace``), put back what it changed of
        ``kept`` (``kept``): the values it set, and the containers it changed as a
        flag that its code reads (told as ``note_traced`` and ``note_arguments``
        tell them, but kept nowhere): the first call runs the work they decide;
        another container (a list or dict the code collects into as it runs, only
        filled) stays as the trace left it."""
        now = self.entries(self_obj) if held else None
        after = now[1] if now is not None else ()
        pairs = entry_pairs(held[1], after, state_changed(held[1], after)) if held else {}
        moved = argument_values(arguments, self.self_param, self.function)
        pairs.update({label: (given[label].form, v.form, True) for label, v in moved.items()
                      if type(v) is Contents and type(given.get(label)) is Contents and
                      given[label] != v})
        functions = self.traced_functions(self_obj) if pairs else ()
        flags = {label for label in refilled(pairs, lambda: functions)[0]
                 if read(functions, label)}
        put_back(kept, self.store_roots(self_obj, params), arguments, lambda labels: {
            label for label in labels if type(kept[label][3]) is not Contents or label in flags})

    def read_first(self, self_obj, labels, test=read_first) -> set:
        """Those of ``labels`` that the code the trace may run reads before it stores
        them, deciding work (``first_reads.read_first``; or another ``test`` of that
        code and a label: ``never_read``)."""
        if not labels:
            return set()
        functions = self.traced_functions(self_obj)
        return {label for label in labels if test(functions, label)}

    def traced_functions(self, self_obj) -> list:
        """The Python functions whose code a trace may run, as ``read_first`` and
        ``container_flags`` read it: the function, its helpers and the methods of
        self's class it calls, what the names of those reach, and the methods of
        the held objects it calls."""
        functions = self._code(self_obj) + [f for r in self._reaches(self_obj) for f in r.walked]
        _, (_, reaches, methods, _) = self.walk(self_obj)
        return functions + [f for r in reaches for f in r.walked] + [m[-1] for m in methods]

    def traced_code(self, self_obj) -> list:
        """``(function, object)`` of each function whose code a trace runs
        (``host_draws``), ``object`` the one it runs on where it is a method: the
        function and its helpers, the methods of self's class it calls (its dunders
        too, as ``_code``) and those of held objects, with their helpers; not host
        callbacks, nor what they call. Each found once while it lasts."""
        reaches = self._reaches(self_obj)
        objects, (watched, held, methods, _) = self.walk(self_obj)
        reaches += [r for r in held if r.baked]
        hosted = set(watched.callbacks).union(*(r.hosted_walked for r in reaches))
        found = dict.fromkeys(f for r in reaches for f in r.walked)
        for cls, _, _, f in methods:   # self.opt.step(s, x): on the object of its class
            found[f] = next((o for _, o, _ in objects if isinstance(o, cls)), None)
        if self_obj is not None:
            found.update(dict.fromkeys((self.function,) + self._class_code[type(
                self_obj)] + tuple(f for _, f in _dunders(type(self_obj))), self_obj))
        return [(f, o) for f, o in found.items() if f not in hosted]

    def store_roots(self, self_obj, params) -> dict:
        """label -> where a value a trace set is found, for setting it again
        (``replayed_stores.roots``): off the chains and objects the code reaches by
        name, and off the call's ``params`` (a key read by a name off those, by the
        function's names: ``self.state[Phase.A]``, or by those of the method that
        stores it, ``self_chains``' ``named``)."""
        _, (_, reaches, _, _) = self.walk(self_obj)
        reaches = self._reaches(self_obj) + list(reaches)
        known = self._self_names.get(type(self_obj)) if self.self_param is not None else None
        named = {label: (self.self_param, steps) for label, steps in known[7].items()} \
            if known is not None else {}
        return roots(params, reaches, [p for r in reaches for p in r.objects], self.function,
                     named)

    def bare_arrays(self, self_obj) -> dict:
        """label -> the array each global or closure name of the function's, and
        (a method) each attribute of ``self``, holds now, by itself or in a list,
        tuple or dict (``_leaves``: ``_MAX_DEPTH`` deep at most): a trace that
        rebinds one (``self.u, self.v = self.v, self.u``, ``global U; U = V``,
        ``self.bufs[0], self.bufs[1] = ...``, ``BUFS.reverse()``) does it once,
        when traced (``rebound``)."""
        out = {}
        for fn, name, label, array in self.reach.places:
            v = lookup(fn, name) if array else None
            if v is not None:
                out.update(_leaves(v, label))
        if self_obj is not None:
            for name, v in _attributes(self_obj):
                out.update(_leaves(v, f"{self.self_param}.{name}"))
        return out

    @staticmethod
    def rebound(before: dict, after: dict) -> set:
        """The labels of ``bare_arrays`` that held an array before the trace and
        another one after it (not those it set from None)."""
        return {label for label, v in before.items()
                if label in after and after[label] is not v}
