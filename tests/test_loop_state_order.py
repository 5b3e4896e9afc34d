"""A loop's body that changes a dict's order, and what it reads of that order.

``d["a"] = d.pop("a")`` leaves every item as it was and moves ``"a"`` to the
end. The next eager iteration does other work only where it reads the dict
by position (``src, dst = d.values()``); one reading it by key, measuring it,
sorting its keys, or running the same independent work for each item in a
for loop over it records the same graph, whatever the order. Such bodies
were refused; now they run. Those whose next iteration would differ, or
where that cannot be told (a helper of the program's called in the body, the
dict held elsewhere too), are refused as before, and the refusal says how to
read the dict instead. The same goes for the code after a branch that
reorders a dict: reading it by sorted keys there runs.
"""
import collections

import numpy as np
import pytest

import graphtrace as gt
from flow_kernels import add, count, dev, host, shift
from helpers import line_of


def _sorted_keys(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:
        src, dst = (d[k] for k in sorted(d))
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _for_values(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:
        for v in d.values():
            add[1, 4, body](v, 1.0)
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _refreshed_entry(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:
        for k in d:
            add[1, 4, body](d[k], 1.0)
        count[1, 1, body](n)
        x = d.pop("a")
        d["a"] = x


def _sorted_items(s, a, b, n):
    d = {"b": b, "a": a}
    with s.while_loop(gt.cond(n) < 3) as body:
        for _, v in sorted(d.items()):
            if v is not None:
                add[1, 4, body](v, 1.0)
        if d and "a" in d and len(d) == 2:
            count[1, 1, body](n)
        d["a"] = d.pop("a")


def _by_key(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:
        add[1, 4, body](d.get("a"), float(len(d)))
        add[1, 4, body](d["b"], 1.0)
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _moved_to_end(s, a, b, n):
    d = collections.OrderedDict(a=a, b=b)
    with s.while_loop(gt.cond(n) < 3) as body:
        src, dst = [d[k] for k in sorted(d)]
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        d.move_to_end("a")


@pytest.mark.parametrize("program, want", [
    (_sorted_keys, ([0, 1, 2, 3], [1, 2, 3, 4])),
    (_for_values, ([3, 4, 5, 6], [3, 3, 3, 3])),
    (_refreshed_entry, ([3, 4, 5, 6], [3, 3, 3, 3])),
    (_sorted_items, ([3, 4, 5, 6], [3, 3, 3, 3])),
    (_by_key, ([6, 7, 8, 9], [3, 3, 3, 3])),
    (_moved_to_end, ([0, 1, 2, 3], [1, 2, 3, 4])),
])
def test_a_dict_reordered_that_the_body_reads_whatever_its_order_runs_as_eagerly(
        program, want):
    """Sorted keys (``sorted(d)``, ``sorted(d.items())`` of string keys), items by
    key (an OrderedDict's key moved to its end too), its length, and a for loop
    over it whose passes each launch on their
    own item, touching no array another writes: each eager iteration records
    the same graph."""
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    gt.graph(program, backend="sim")(a, b, n)
    assert (host(a), host(b)) == want and host(n) == [3]


def _values_unpacked(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:   # values unpacked
        src, dst = d.values()
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _position_counted(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:   # position counted
        for i, v in enumerate(d.values()):
            add[1, 4, body](v, float(i))
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _last_item_kept(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:   # last item kept
        for v in d.values():
            add[1, 4, body](v, 1.0)
        shift[1, 4, body](v, n)
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _first_only(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:   # first only
        for v in d.values():
            add[1, 4, body](v, 1.0)
            break
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _same_target(s, a, b, n):
    d = {"a": a[:2], "b": a[2:]}
    with s.while_loop(gt.cond(n) < 3) as body:   # same target
        for k in d:
            shift[1, 2, body](d[k], b)
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _step(body, x):
    add[1, 4, body](x, 1.0)


def _helper_called(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:   # helper called
        for k in sorted(d):
            _step(body, d[k])
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _held_elsewhere(s, a, b, n):
    d = {"a": a, "b": b}
    box = [d]
    with s.while_loop(gt.cond(n) < 3) as body:   # held elsewhere
        for k in sorted(d):
            add[1, 4, body](d[k], 1.0)
        count[1, 1, body](n)
        d["a"] = d.pop("a")
    assert box


def _first_taken(s, a, b, n):
    d = {"a": a, "b": b}
    with s.while_loop(gt.cond(n) < 3) as body:   # first taken
        add[1, 4, body](next(iter(d.values())), 1.0)
        count[1, 1, body](n)
        d["a"] = d.pop("a")


def _mixed_keys_sorted(s, a, b, n):
    d = {"a": a, 1: b}
    with s.while_loop(gt.cond(n) < 3) as body:   # mixed keys sorted
        src, dst = (d[k] for k in sorted(d, key=str))
        shift[1, 4, body](src, dst)
        count[1, 1, body](n)
        d["a"] = d.pop("a")


@pytest.mark.parametrize("program, marker", [
    (_values_unpacked, "values unpacked"),
    (_position_counted, "position counted"),
    (_last_item_kept, "last item kept"),
    (_first_only, "first only"),
    (_same_target, "same target"),
    (_helper_called, "helper called"),
    (_held_elsewhere, "held elsewhere"),
    (_first_taken, "first taken"),
    (_mixed_keys_sorted, "mixed keys sorted"),
])
def test_a_dict_reordered_that_the_body_reads_by_position_is_refused_saying_how(
        program, marker):
    """Unpacking its values, a pass of a for loop over it taking its place
    (``enumerate``), leaving early (``break``), leaving its last item in the
    name read after the loop, or writing what another pass writes; a function
    of the program's called in the body, the dict held by another name too:
    refused, with what to do instead."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert "changes the order of `d`," in str(e) and "read the dict by its keys" in str(e), \
        str(e)


def _sorted_after_branch(s, a, b, n):
    d = {"a": a, "b": b}
    with s.if_then(gt.cond(n) == 0) as then:
        add[1, 4, then](a, 1.0)
        d["a"] = d.pop("a")
    src, dst = (d[k] for k in sorted(d))
    shift[1, 4, s](src, dst)


def test_a_dict_a_branch_reorders_read_after_whatever_its_order_runs_as_eagerly():
    """The code after a branch reading by sorted keys the dict the branch
    reordered: it reads the same arrays whether the branch ran or not."""
    a, b, n = dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32)
    gt.graph(_sorted_after_branch, backend="sim")(a, b, n)
    assert host(a) == [1, 2, 3, 4] and host(b) == [2, 3, 4, 5]


def _looped_after_branch(s, a, b, n):
    d = {"a": a, "b": b}
    with s.if_then(gt.cond(n) == 0) as then:   # looped after branch
        add[1, 4, then](a, 1.0)
        d["a"] = d.pop("a")
    for v in d.values():
        add[1, 4, s](v, 1.0)


def _helper_after_branch(s, a, b, n):
    d = {"a": a, "b": b}
    with s.if_then(gt.cond(n) == 0) as then:   # helper after branch
        add[1, 4, then](a, 1.0)
        d["a"] = d.pop("a")
    for k in sorted(d):
        _step(s, d[k])


@pytest.mark.parametrize("program, marker", [
    (_looped_after_branch, "looped after branch"),
    (_helper_after_branch, "helper after branch"),
])
def test_a_dict_a_branch_reorders_that_code_after_may_read_by_position_is_refused(
        program, marker):
    """A for loop over it after the branch (its nodes not recorded when the branch
    closes), a function of the program's called after it: refused as before."""
    f = gt.graph(program, backend="sim")
    with pytest.raises(gt.ArgumentError) as info:
        f(dev(0, 1, 2, 3), dev(0, 0, 0, 0), dev(0, dtype=np.int32))
    e = info.value
    assert e.source[1] == line_of(__file__, marker), str(e)
    assert "changes the order of `d`," in str(e), str(e)
