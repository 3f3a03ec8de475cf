"""One public function per registered measure, generated from the registry.

``daskbicl.cari(truth, pred)`` is ``daskbicl.score(truth, pred,
measures=["cari"])["cari"]``, with the measure's parameters as keyword-only
arguments and a docstring built from its registry record.  Their
signatures are also written out in ``functions.pyi`` (generated:
:func:`daskbicl.measures.api.write_function_stubs`), so type checkers and IDEs see
every one.
"""

from __future__ import annotations

from . import REGISTRY, make_measure_function

__all__ = []
for _name, _measure in REGISTRY.items():
    _func = make_measure_function(_measure)
    _func.__module__ = __name__
    globals()[_name] = _func
    __all__.append(_name)
