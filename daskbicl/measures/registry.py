"""Measures declared as data (after flox's ``aggregations.py``).

Each measure is one :class:`Measure` record: its name, the *tables* it is
finalized from, the finalize function, its parameters and its properties
(symmetric?, bounds, value for a perfect match).  One registry dict holds
them; :func:`daskbicl.score`, the per-measure functions, the xarray accessor,
the CLI and the parametrised invariance tests are all generated from it.

Tables are produced by *providers*: a provider takes the aligned truth and
pred Datasets and returns a Delayed object (one counting pass).  Every
provider a ``score`` call needs is computed in a single ``dask.compute``, so
each input is read once whatever the number of measures.  A measure may ask
its provider for specific work through ``provider_options`` (the micro
provider computes only the parts the selected measures read); the options
of all selected measures are merged, so no work is done that was not asked
for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import MeasureError

__all__ = ["Measure", "Provider", "REGISTRY", "PROVIDERS", "register", "register_provider", "get"]


@dataclass(frozen=True)
class Provider:
    """A counting pass: ``build(truth, pred, **options) -> Delayed``.

    ``kinds`` are the input kinds (per side) it accepts.
    """

    name: str
    build: Callable
    kinds: tuple[str, ...]
    description: str = ""


@dataclass(frozen=True)
class Measure:
    """One measure: name -> the table it needs -> finalize.

    Attributes
    ----------
    name : str
        Key in ``score`` results, function name, CLI ``--measure`` value.
    summary : str
        One line for tables, ``daskbicl measures`` and the README.
    family : str
        ``"partition"``, ``"bicluster"`` or ``"micro"``: which inputs it
        scores by default.
    needs : str
        The provider (table) it is finalized from.
    finalize : callable
        ``finalize(tables, **params) -> float`` (or a small NamedTuple).
    symmetric : bool
        ``m(truth, pred) == m(pred, truth)``.
    bounds : (float, float)
        Range of values (``-inf``/``inf`` when unbounded).
    perfect : float
        Value when pred equals truth up to relabeling.
    params : dict
        Parameter name -> default value.
    doc : str
        Numpydoc body (formula, reference, examples) for the generated function.
    fields : tuple of str
        For record-valued measures, the names of the fields (else empty).
    group : callable, optional
        A computation several measures share (e.g. the K x L pair table of
        every bicluster measure): ``group(tables, **params) -> dict``.  When
        set, ``finalize`` receives that dict instead of the tables, and
        ``score`` runs the group once per distinct parameter set.
    group_params : dict
        Every parameter ``group`` accepts, with defaults (a measure's own
        ``params`` override them).
    provider_options : dict
        Keyword options this measure needs passed to its provider's
        ``build``.  The options of every selected measure with the same
        provider are merged: sets are united, booleans or-ed, other values
        must agree.  ``score(measures=["micro_rnia"])`` thus builds only
        what RNIA reads.
    param_docs : dict
        Parameter name -> one-line description for the generated docstring
        (the type shown is that of the default).
    """

    name: str
    summary: str
    family: str
    needs: str
    finalize: Callable
    symmetric: bool
    bounds: tuple[float, float]
    perfect: float
    params: dict = field(default_factory=dict)
    doc: str = ""
    fields: tuple[str, ...] = ()
    group: Callable | None = None
    group_params: dict = field(default_factory=dict)
    provider_options: dict = field(default_factory=dict)
    param_docs: dict = field(default_factory=dict)


REGISTRY: dict[str, Measure] = {}
PROVIDERS: dict[str, Provider] = {}


def register(measure: Measure) -> Measure:
    if measure.name in REGISTRY:
        raise ValueError(f"measure {measure.name!r} is registered twice")
    if measure.needs not in PROVIDERS:
        raise ValueError(f"measure {measure.name!r} needs unknown provider {measure.needs!r}")
    REGISTRY[measure.name] = measure
    return measure


def register_provider(provider: Provider) -> Provider:
    PROVIDERS[provider.name] = provider
    return provider


def get(name: str) -> Measure:
    try:
        return REGISTRY[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, list(REGISTRY), n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise MeasureError(
            f"unknown measure {name!r}.{hint} Available: {', '.join(sorted(REGISTRY))}"
        ) from None
