"""State a loop's body swaps, held by a module of a namespace package (this
folder has no ``__init__.py``), for tests/test_loop_state_modules.py."""
cur = nxt = res = None
T = 0.0
