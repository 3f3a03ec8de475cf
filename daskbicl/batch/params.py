"""The parameters a batch records with a score: canonical text (the ``params`` column), policy and interval."""

from __future__ import annotations

import json

from ..kernels.coclustering.contingency import DEFAULT_POLICY

__all__ = ["params_key", "stored_params"]


def params_key(params: dict) -> str:
    """Canonical text of a measure's parameters (the ``params`` column of the results).

    Numbers are floats (``beta = 1`` and ``beta = 1.0`` are one parameter
    set), booleans stay booleans, keys are sorted.

    >>> params_key({"beta": 2, "clip": False})
    '{"beta":2.0,"clip":false}'
    """
    return json.dumps({k: _canonical(v) for k, v in params.items()}, sort_keys=True, separators=(",", ":"))


def _canonical(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return float(value)


def stored_params(params: dict, unassigned: str, ci: float | None = None, ci_method: str = "bc") -> dict:
    """The parameters recorded with a score: the measure's, the unassigned policy when not the default, the ``ci``
    and, for an interval read other than the default way (``"bc"``), its ``ci_method``.

    The policy changes the score of labels with unassigned entries, so it is
    part of the ``params`` column (and of the key that says a score exists);
    rows scored with the default policy read as they did before the policy
    existed.

    >>> stored_params({"beta": 1.0}, "cluster")
    {'beta': 1.0, 'unassigned': 'cluster'}
    >>> stored_params({"beta": 1.0}, "error")
    {'beta': 1.0}
    >>> stored_params({}, "error", 0.95)
    {'ci': 0.95}
    >>> stored_params({}, "error", 0.95, "percentile")
    {'ci': 0.95, 'ci_method': 'percentile'}

    A row with ``ci`` and no ``ci_method`` holds a bias-corrected interval
    (the default).
    """
    out = dict(params) if unassigned == DEFAULT_POLICY else {**params, "unassigned": unassigned}
    if ci is None:
        return out
    out = {**out, "ci": float(ci)}  # a row with an interval is not one without
    return out if ci_method == "bc" else {**out, "ci_method": ci_method}  # nor one read otherwise
