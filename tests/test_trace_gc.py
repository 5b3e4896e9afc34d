"""The cyclic collector around a trace: paused while recording, and what the trace
made moved to the oldest generation afterwards (not rescanned by young collections)."""
import gc

import graphtrace as gt
from helpers import FakeDeviceArray as A, any_kernel

K = any_kernel()


@gt.graph
def chain(s, x):
    for _ in range(50):
        s.launch(K, 1, 1, x)


def test_what_a_trace_makes_is_in_the_oldest_generation():
    gc.collect()
    g = chain.trace(A(64))
    young = {id(o) for o in gc.get_objects(generation=0) + gc.get_objects(generation=1)}
    nodes = g.nodes   # made now, under the same rule
    young |= {id(o) for o in gc.get_objects(generation=0) + gc.get_objects(generation=1)}
    assert gc.isenabled()
    assert not any(id(o) in young for o in [g, *nodes, *(n.args for n in nodes)])
    assert any(o is nodes[0] for o in gc.get_objects(generation=2))


def test_objects_the_program_froze_stay_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        chain.trace(A(64)).nodes
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        gc.unfreeze()


def test_a_collector_switched_off_stays_off():
    gc.disable()
    try:
        chain.trace(A(64)).nodes
        assert not gc.isenabled()
    finally:
        gc.enable()
