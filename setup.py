"""The optional compiled parts, the tracing path (``_speedups.c``), the
emitter (``_emitter.c``) and the dependency search (``_reduce.c``): built
where a C compiler is present, skipped (with a warning) where it is not;
graphtrace then runs in pure Python."""
from setuptools import Extension, setup

setup(ext_modules=[Extension(f"graphtrace.{name}", [f"graphtrace/{name}.c"], optional=True)
                   for name in ("_speedups", "_emitter", "_reduce", "_buffers")])
