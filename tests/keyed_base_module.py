"""Classes whose methods keep a flag under a key this module's global names
(``self.state[KEY]``), for ``test_replayed_constant_keys.py``: the graph
function's module has no ``KEY``, or one of another value."""
import enum


class Step(enum.Enum):
    INIT = 1


KEY = "init"


class Base:
    def __init__(self):
        self.state = {}

    def started(self):
        return self.state.get(KEY, False)

    def mark(self):
        self.state[KEY] = True


class ByMember(Base):
    def started(self):
        return self.state.get(Step.INIT, False)

    def mark(self):
        self.state[Step.INIT] = True
