"""State a loop's body reaches as attributes of a module of the program's own
(``loop_state_module.cur``) or through its functions (``loop_state_module.swap()``),
for tests/test_loop_state_holders.py."""
import types

import numpy as np

from flow_kernels import add

cur = nxt = res = None
CUR = NXT = None
K, T = 0, 0.0
BUFS = []
STATE = types.SimpleNamespace(cur=None, nxt=None)
LIBRARY = np   # a library's module it holds: never looked into


class Holder:
    def __init__(self):
        self.cur = self.nxt = None


OBJ = Holder()


def init(u, v):
    global CUR, NXT, K, T
    CUR, NXT, K, T = u, v, 0, 0.0
    BUFS[:] = [u, v]


def pair():
    return CUR, NXT


def swap():
    global CUR, NXT
    CUR, NXT = NXT, CUR


def next_pair():
    global K
    K += 1
    return BUFS[K % 2], BUFS[(K + 1) % 2]


def tick():
    global T
    T += 0.5


def keep(x):
    global res
    res = x


def launch_t(body, x):
    add[1, 4, body](x, T)


class Stepper:
    """Arrays kept as this module's globals, picked and swapped by its methods."""

    @classmethod
    def pair(cls):
        return CUR, NXT

    @classmethod
    def swap(cls):
        global CUR, NXT
        CUR, NXT = NXT, CUR

    def flip(self):
        global CUR, NXT
        CUR, NXT = NXT, CUR
