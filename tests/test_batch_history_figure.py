"""The history figure of a results file at many measures and parameter sets (issue 26's all-measures figure).

A real SQLite results file written by :class:`ResultsDB` over two runs, drawn
by ``daskbicl results FILE --plot -o OUT`` in a subprocess (the figure a
person opens after a night) and by :func:`plot_results` in Python.
"""

from __future__ import annotations

import pytest

from daskbicl.batch import ResultsDB
from daskbicl.batch.manifest import params_key
from daskbicl.batch.results import Pair
from daskbicl.measures import REGISTRY

from .support.batch_fixtures import run_cli

pytest.importorskip("matplotlib")

#: Every registered measure without parameters, plus three parameter sets of two measures.
PLAIN = sorted(n for n, m in REGISTRY.items() if not m.params)[:24]
WITH_PARAMS = [("v_measure_rows", {"beta": 0.5}), ("v_measure_rows", {"beta": 2.0}),
               ("nce", {"normalizer": "corrected"}), ("nce", {"normalizer": "per_axis"})]


def _write(path):
    """Two nights over three preds: pred-1 changed between them (a second row per key), the others reused."""
    requests = [(m, params_key({})) for m in PLAIN] + [(m, params_key(p)) for m, p in WITH_PARAMS]
    with ResultsDB(path) as db:
        for night, changed in (("r1", "A"), ("r2", "B")):
            for k in range(3):
                fp = changed if k == 1 else "A"
                pair = Pair("/lab/truth.zarr", f"/lab/pred-{k}.zarr", "T", f"P{k}{fp}", "sim/truth.zarr",
                            f"runs/pred-{k}.zarr")
                rows = [(m, p, 0.1 + 0.02 * i + (0.1 * k if fp == "B" else 0.0), REGISTRY[m].version)
                        for i, (m, p) in enumerate(requests)]
                db.record_pair(pair, rows, run_id=night)
    return requests


def test_many_measures_and_parameter_sets_keep_readable_panels(tmp_path):
    from daskbicl.batch import plot_results

    results = tmp_path / "scores.sqlite"
    requests = _write(results)
    code, out, err = run_cli("results", results, "--plot", "-o", tmp_path / "history.png")
    assert code == 0, err
    assert err.strip() == "", err  # no matplotlib warning (a squeezed layout warned on stderr)
    assert (tmp_path / "history.png").stat().st_size > 10_000

    fig = plot_results(results)
    assert len(fig.axes) == len(requests)  # one panel per measure and parameter set
    width, height = fig.get_size_inches()
    for ax in fig.axes:  # panels keep a readable size however many there are
        box = ax.get_position()
        assert box.width * width > 2.5 and box.height * height > 1.2, ax.get_title()
    titles = [ax.get_title() for ax in fig.axes]
    assert "v_measure_rows (β=0.5)" in titles and "v_measure_rows (β=2)" in titles
    assert "nce (normalizer=per_axis)" in titles
    assert not any("{" in t or '"' in t for t in titles)  # short labels, never JSON
    assert len(fig.legends) == 1 and sorted(t.get_text() for t in fig.legends[0].get_texts()) == [
        "pred-0", "pred-1", "pred-2"]  # one legend for the whole figure
    assert fig._suptitle.get_text() == "scores against the truth 'truth'"  # the truth named
    import matplotlib.dates as mdates

    assert all(isinstance(ax.xaxis.get_major_formatter(), mdates.ConciseDateFormatter) for ax in fig.axes)
