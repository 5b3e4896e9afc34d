"""State the traced code reads that a change between calls must reach, found by
a fuzzer of Python state: each replayed a graph traced for the old value."""
import types

import numpy as np
from numba import cuda

import graphtrace as gt


@cuda.jit
def add(x, a):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += a


def dev():
    return cuda.to_device(np.zeros(2))


def first(x):
    return float(x.copy_to_host()[0])


# a global list or dict read by a constant key and whole in the same code: a change in
# place to another key is seen (the container is watched whole)

GD = {"a": 0, "b": 1}
GIN = {"a": 0, "b": 1}
GL = [1]
GK = {"a": 1, "b": 2}


@gt.graph
def dict_get_and_values(s, x):
    for _ in range(sum(GD.values())):
        add[1, 32, s](x, 1.0)
    add[1, 32, s](x, float(GD.get("z", 1)))


def test_dict_read_by_key_and_values_sees_another_key():
    x = dev()
    dict_get_and_values(x)
    assert first(x) == 2.0
    GD["a"] = 2
    dict_get_and_values(x)
    assert first(x) == 2.0 + 4.0


@gt.graph
def dict_get_and_in(s, x):
    add[1, 32, s](x, float(GIN.get("a", 0)))
    add[1, 32, s](x, 2.0 if "z" in GIN else 1.0)


def test_dict_read_by_key_and_tested_for_another_sees_it_added():
    x = dev()
    dict_get_and_in(x)
    GIN["z"] = 5
    dict_get_and_in(x)
    assert first(x) == 3.0


@gt.graph
def list_len_and_item(s, x):
    add[1, 32, s](x, float(len(GL)) + GL[0])


def test_list_read_by_index_and_len_sees_an_append():
    x = dev()
    list_len_and_item(x)
    GL.append(5)
    list_len_and_item(x)
    assert first(x) == 2.0 + 3.0


def _closure_list():
    lst = [1]

    @gt.graph
    def main(s, x):
        add[1, 32, s](x, float(len(lst)) + lst[0])
    return main, lst


def test_closure_list_read_by_index_and_len_sees_an_append():
    main, lst = _closure_list()
    x = dev()
    main(x)
    lst.append(5)
    main(x)
    assert first(x) == 2.0 + 3.0


@gt.graph
def dict_key_and_loop(s, x):
    n = 0
    for _ in GK:
        n += 1
    add[1, 32, s](x, float(GK["a"] + n))


def test_dict_read_by_key_and_looped_over_sees_a_key_added():
    x = dev()
    dict_key_and_loop(x)
    assert first(x) == 3.0
    GK["c"] = 7
    dict_key_and_loop(x)
    assert first(x) == 3.0 + 4.0


GONLY = {"lr": 1.0, "other": 0}


@gt.graph
def dict_by_keys_alone(s, x):
    add[1, 32, s](x, GONLY["lr"] + GONLY.get("mom", 0.0))


def test_dict_read_by_keys_alone_is_not_retraced_for_another_key():
    x = dev()
    dict_by_keys_alone(x)
    misses = dict_by_keys_alone.cache_info().misses
    GONLY["other"] = 5
    dict_by_keys_alone(x)
    assert dict_by_keys_alone.cache_info().misses == misses
    GONLY["lr"] = 2.0
    dict_by_keys_alone(x)
    assert first(x) == 4.0


# a global the traced code stores in but leaves at its starting value is a setting:
# watched by value, so a user's change between calls traces anew

TG = False
K = 0
N = 0


@gt.graph
def double_toggle(s, x):
    global TG
    TG = not TG
    if TG:
        add[1, 32, s](x, 3.0)
    TG = not TG


def test_global_toggled_twice_is_watched():
    global TG
    x = dev()
    double_toggle(x)
    double_toggle(x)
    assert first(x) == 6.0 and TG is False
    TG = True   # now True -> False: no work
    double_toggle(x)
    assert first(x) == 6.0 and TG is True


@gt.graph
def raised_and_restored(s, x):
    global K
    K += 1
    add[1, 32, s](x, float(K))
    K -= 1


def test_global_raised_and_restored_is_watched():
    global K
    x = dev()
    raised_and_restored(x)
    assert first(x) == 1.0 and K == 0
    K = 5
    raised_and_restored(x)
    assert first(x) == 1.0 + 6.0 and K == 5


@gt.graph
def counted(s, x):
    global N
    N += 1
    add[1, 32, s](x, 1.0)


def test_global_counter_stays_state():
    x = dev()
    counted(x)
    counted(x)
    misses = counted.cache_info().misses
    for _ in range(3):
        counted(x)
    assert counted.cache_info().misses == misses
    assert first(x) == 5.0


# a local set more than once, each time from the same global name, reads through it

ACFG = types.SimpleNamespace(a=3)


@gt.graph
def alias_set_twice(s, x, again=False):
    cf = ACFG
    add[1, 32, s](x, float(cf.a))
    if again:
        cf = ACFG


def test_local_set_twice_from_one_global_reads_through():
    x = dev()
    alias_set_twice(x)
    ACFG.a = 0
    alias_set_twice(x)
    assert first(x) == 3.0
