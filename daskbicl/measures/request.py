"""The one validation of a request, from the records, before any input is opened.

A *request* is what a caller asks for: measure names, measure parameters
and the options of the call (``unassigned``, ``dense_cells``, the number of
null draws, ...).  Every door checks it here and nowhere else — the Python
functions, the ``Dataset.bicl`` accessor, ``daskbicl score``, the batch
manifest, :func:`daskbicl.tradeoff`, :func:`daskbicl.contingency` and
:func:`daskbicl.null` — so a value is accepted, converted and refused alike
whichever door it comes through:

* measure names: case and surrounding spaces ignored (:func:`~daskbicl.measures.registry.get`);
* parameters: each checked against the constraint of the measures that
  declare it and converted once to its canonical value (``"0.5"`` -> 0.5,
  ``"PRINTED"`` -> ``"printed"``, ``"yes"``/``1`` -> True), so what a batch
  stores is canonical and matches on the next run;
* options: each checked by its entry in :data:`OPTIONS`.

Nothing here reads data.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..errors import InputError, MeasureError
from ..io.validate import KINDS
from ..kernels.coclustering.contingency import check_policy
from .registry import PROVIDERS, REGISTRY, Boolean, Measure, OneOf, get

__all__ = [
    "MAX_DRAWS", "OPTIONS", "check_draws", "check_options", "check_params", "check_request", "resolve_params",
    "select_measures",
]

#: Most null draws accepted in one call.
MAX_DRAWS = 10**7


# --------------------------------------------------------------------------- measures


def _default_families(kind_truth: str, kind_pred: str) -> tuple[str, ...]:
    if kind_truth == "partition" and kind_pred == "partition":
        return ("partition",)
    return ("bicluster", "micro")


def _names(measures) -> list[str]:
    if isinstance(measures, str):
        return [measures]
    if not isinstance(measures, Iterable):
        raise MeasureError(f"measures must be a measure name or a list of names, got {measures!r}")
    names = list(measures)
    for n in names:
        if not isinstance(n, str):
            raise MeasureError(f"measures must be a measure name or a list of names, got {measures!r}")
    if not names:
        raise MeasureError("measures is empty; pass None for every applicable measure")
    return names


def select_measures(measures, kind_truth: str | None = None, kind_pred: str | None = None) -> list[Measure]:
    """Resolve ``measures`` (None, a name, or names) into registry records.

    ``None`` selects the default measures (the published ones, ``Measure.default``)
    of the default families for the input kinds: co-clustering measures for
    two co-clusterings, bicluster and micro-object measures otherwise.  With kinds given, a measure whose
    provider cannot read them is an error; without, the measures must at
    least share one kind of input.
    """
    if measures is None:
        if kind_truth is None or kind_pred is None:
            return []
        families = _default_families(kind_truth, kind_pred)
        return [m for m in REGISTRY.values() if m.family in families and m.default]
    selected = list({m.name: m for m in map(get, _names(measures))}.values())
    if kind_truth is None or kind_pred is None:
        common = set(KINDS)
        for m in selected:
            common &= set(PROVIDERS[m.provider].kinds)
        if not common:
            raise MeasureError(
                f"measures {', '.join(m.name for m in selected)} cannot score the same kind of input"
            )
        return selected
    for m in selected:
        kinds = PROVIDERS[m.provider].kinds
        for role, kind in (("truth", kind_truth), ("pred", kind_pred)):
            if kind not in kinds:
                raise MeasureError(
                    f"measure {m.name!r} needs co-clusterings ({' or '.join(kinds)}) but "
                    f"{role} is a {kind}"
                )
    return selected


# --------------------------------------------------------------------------- parameters


def check_params(params: Mapping, selected: Sequence[Measure] | None = None) -> dict:
    """The given parameters checked and converted to their canonical values.

    Each parameter is checked against the constraint of every measure among
    ``selected`` (default: every registered measure) that declares it.  A
    name none of them declares is an error, found before any data is read.

    Examples
    --------
    >>> import daskbicl
    >>> check_params({"normalizer": "PRINTED", "beta": "0.5", "clip": "yes"})
    {'normalizer': 'printed', 'beta': 0.5, 'clip': True}
    >>> check_params({"beta": 2}, [daskbicl.measures.get("cari")])
    Traceback (most recent call last):
    ...
    daskbicl.errors.MeasureError: unknown parameter(s) beta for cari (they accept: none)
    """
    pool = list(REGISTRY.values()) if selected is None else list(selected)
    known = {p for m in pool for p in m.params}
    unknown = sorted(set(map(str, params)) - known)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        names = [m.name for m in pool]
        whom = "any measure" if selected is None else ", ".join(names) if len(names) <= 5 else "the selected measures"
        raise MeasureError(f"unknown parameter(s) {', '.join(unknown)} for {whom} (they accept: {allowed})")
    out = {}
    for name, value in params.items():
        declared = {id(m.params[name]): m.params[name] for m in pool if name in m.params}
        values = [p.validate(name, value) for p in declared.values()]
        if any(v != values[0] for v in values[1:]):  # pragma: no cover - only if two records disagree
            raise MeasureError(f"parameter {name}: the selected measures read {value!r} differently: {values}")
        out[name] = values[0]
    return out


def resolve_params(selected: Sequence[Measure], params: Mapping) -> dict[str, dict]:
    """Measure name -> its full parameter dict: the given values, canonical, and the defaults for the rest.

    A parameter no selected measure accepts is an error, so is a value
    outside a parameter's declared constraint: both are found before any
    data is read.
    """
    given = check_params(params, selected)
    return {m.name: {k: given.get(k, p.default) for k, p in m.params.items()} for m in selected}


def check_request(measures, params: Mapping | None = None, kinds: tuple[str, str] | None = None,
                  **options) -> list[Measure]:
    """Validate measure names, parameters and call options without any data; the selected measures.

    With ``measures`` None (every measure that applies, known only once the
    inputs are read) each parameter is checked against every measure that
    declares it.

    Examples
    --------
    >>> import daskbicl
    >>> [m.name for m in check_request(["fmeasure"], {"beta": "2"})]
    ['fmeasure']
    >>> check_request(["fmeasure"], {"beta": -1})
    Traceback (most recent call last):
    ...
    daskbicl.errors.MeasureError: parameter beta must be a number in (0, inf), got -1
    """
    check_options(**options)
    selected = select_measures(measures, *(kinds or (None, None)))
    if measures is None and not selected:
        check_params(params or {})
    else:
        resolve_params(selected, params or {})
    return selected


# --------------------------------------------------------------------------- options of a call


def _count(name: str, what: str, low: int, high: int) -> Callable:
    def check(value) -> int:
        if isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                pass
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or not low <= int(value) <= high:
            raise InputError(f"{name} is {what}: an integer from {low:,} to {high:,}, got {value!r}")
        return int(value)

    check.__doc__ = f"``{name}``: {what}, an integer from {low:,} to {high:,}."
    return check


#: ``null(n=)`` and ``daskbicl score --null N``.
check_draws = _count("n", "the number of null draws", 1, MAX_DRAWS)


def _check_dense_cells(value) -> int:
    return _count("dense_cells", "the largest table shown dense", 0, 2**62)(value)


def _check_seed(value):
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise InputError(f"seed must be a non-negative integer (or None for fresh draws), got {value!r}")
    return int(value)


def _check_flag(name: str) -> Callable:
    def check(value) -> bool:
        try:
            return Boolean().check(name, value)
        except MeasureError as exc:
            raise InputError(str(exc).replace("parameter ", "option ", 1)) from None

    return check


def _check_unassigned(value) -> str:
    if isinstance(value, str):
        value = value.strip().lower()
    return check_policy(value)


#: The random models of :func:`daskbicl.null` (Gates & Ahn 2017).
NULL_MODELS = ("perm", "num", "all")


def _check_null_model(value) -> str:
    try:
        return OneOf(NULL_MODELS).check("model", value)
    except MeasureError as exc:
        raise InputError(str(exc).replace("parameter ", "option ", 1)) from None


def _check_bound(name: str) -> Callable:
    """``pre_min`` / ``rec_min`` of :func:`daskbicl.tradeoff`: None, or a number from 0 to 1 ("0.5" read as 0.5)."""

    def check(value) -> float | None:
        if value is None:
            return None
        number = value
        if isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                pass
        if (isinstance(number, (bool, np.bool_)) or not isinstance(number, numbers.Real)
                or not 0.0 <= float(number) <= 1.0):  # also refuses nan
            raise InputError(f"{name} must be a number from 0 to 1 (or None for no bound), got {value!r}")
        return float(number)

    return check


def _check_index(value) -> str:
    """A tradeoff index by name, case and surrounding spaces ignored: its canonical name (or MeasureError)."""
    from .weighted_indices import canonical_index  # only when a tradeoff is asked: import stays light

    return canonical_index(value)


#: Option name -> its check (value -> canonical value, or InputError).
OPTIONS: dict[str, Callable] = {
    "unassigned": _check_unassigned,
    "dense_cells": _check_dense_cells,
    "n": check_draws,
    "seed": _check_seed,
    "drop_empty": _check_flag("drop_empty"),
    "model": _check_null_model,
    "one_sided": _check_flag("one_sided"),
    "pre_min": _check_bound("pre_min"),
    "rec_min": _check_bound("rec_min"),
    "index": _check_index,
}


def check_options(**options) -> dict:
    """The options of a call checked and converted (an unknown option name is a programming error).

    Examples
    --------
    >>> check_options(unassigned="Cluster", n=99, rec_min="0.5")
    {'unassigned': 'cluster', 'n': 99, 'rec_min': 0.5}
    """
    return {name: OPTIONS[name](value) for name, value in options.items()}
