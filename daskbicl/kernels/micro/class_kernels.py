"""The cell-class loops (:mod:`~daskbicl.kernels.micro.class_loops`) compiled with numba.

Imported inside functions only (numba is loaded by a large enough class
method, see :func:`~daskbicl.kernels.micro.class_traces.run_kernel`);
``cache=True`` and ``nogil=True`` as the family kernels.  The helpers are
registered with numba (``register_jitable``: compiled for their callers,
still plain functions for Python), the entry points compiled here.  No
helper is forced inline: LLVM inlines the small ones, and forcing it at
numba's level made ``bcubed_of_classes`` compile four times slower for the
same speed.
"""

from __future__ import annotations

from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros as _trailing_zeros
from numba.extending import overload, register_jitable

from ..compiled import announce_compiles
from . import class_loops as loops

announce_compiles()  # a first compile is announced once, with how long it takes (kernels/compiled.py)

__all__ = ["bcubed_of_classes", "classes_of_pairs", "pair_weights", "trace_pairs"]


@overload(loops.trailing_zeros, inline="always")
def _trailing_zeros_compiled(x):
    return lambda x: _trailing_zeros(x)


for _name, _fn in list(vars(loops).items()):  # every helper function of the loops
    if callable(_fn) and getattr(_fn, "__module__", "") == loops.__name__ and \
            _name not in (*loops.ENTRIES, "trailing_zeros"):
        register_jitable(_fn)

_compile = njit(cache=True, nogil=True)
classes_of_pairs = _compile(loops.classes_of_pairs)
pair_weights = _compile(loops.pair_weights)
bcubed_of_classes = _compile(loops.bcubed_of_classes)
trace_pairs = _compile(loops.trace_pairs)
