"""The history figure of a results file at real size: 24 pairs, five nights, eight measures.

A real SQLite results file written by :class:`ResultsDB` (runs recorded as a
batch records them), drawn by ``daskbicl results FILE --plot -o OUT`` in a
subprocess (the figure a person opens after a night) and by
:func:`plot_results` in Python, then rendered: every legend entry and every
title must lie inside the image.
"""

from __future__ import annotations

import pytest

from daskbicl.batch import ResultsDB
from daskbicl.batch.manifest import params_key
from daskbicl.batch.results import Pair
from daskbicl.measures import REGISTRY

from ..support.batch_fixtures import run_cli
from ..support.figures import outside_the_image

pytest.importorskip("matplotlib")

#: Eight measure labels: five plain measures, and parameter sets of two more (one with every default).
MEASURES = [("cari", {}), ("ari_rows", {}), ("ari_cols", {}), ("ce", {}), ("conmi", {}),
            ("nce", {"normalizer": "corrected"}), ("nce", {"normalizer": "per_axis"}),
            ("fmeasure", {"aggregate": "pred", "beta": 2.0, "clip": False, "drop_empty": False})]
DATASETS = [f"{kind}-n{n}-s{seed}" for kind in ("bicl", "checkerboard") for n in (100, 1000, 10000)
            for seed in (0, 1, 2, 3)]


def _write(path, nights: int = 5):
    """24 pairs (each pred against its own truth) over ``nights`` runs: a pred added on night 2, one replaced on
    night 3 (a new value), the others reused every night after the first."""
    requests = [(m, params_key(p)) for m, p in MEASURES]
    with ResultsDB(path) as db:
        for night in range(nights):
            run = db.start_run("m.toml", len(DATASETS))
            for k, name in enumerate(DATASETS):
                if k == 23 and night == 0:
                    continue  # added on the second night
                changed = "B" if (k == 5 and night >= 2) else "A"
                pair = Pair(f"/lab/truth/{name}.zarr", f"/lab/preds/spectral/{name}.zarr", f"T{k}", f"P{k}{changed}",
                            f"data/{name}.zarr", f"spectral-coclustering/{name}.zarr")
                rows = [(m, p, 0.3 + 0.02 * i + 0.01 * k + (0.2 if changed == "B" else 0.0), REGISTRY[m].version)
                        for i, (m, p) in enumerate(requests)]
                if night == 0 or (k == 5 and night == 2) or (k == 23 and night == 1):
                    db.record_pair(pair, rows, run_id=run)
                else:
                    ids = [i for (i,) in db.conn.execute(
                        "SELECT id FROM scores WHERE truth_fp = ? AND pred_fp = ?", (f"T{k}", f"P{k}{changed}"))]
                    db.reuse(pair, ids, run_id=run)
            db.finish_run(run, scored=0, skipped=0, failed=0, status="ok")
            db.close()
            db.__init__(path)
    return requests


def test_24_pairs_5_nights_8_measures_fit_the_image(tmp_path):
    from daskbicl.batch import plot_results

    results = tmp_path / "scores.sqlite"
    _write(results)
    code, out, err = run_cli("results", results, "--plot", "-o", tmp_path / "history.png")
    assert code == 0, err
    assert err.strip() == "", err  # no matplotlib warning (a squeezed layout warns on stderr)
    assert (tmp_path / "history.png").stat().st_size > 10_000

    fig = plot_results(results)
    assert [ax.get_title().replace("\n", "") for ax in fig.axes] == [
        "ari_cols", "ari_rows", "cari", "ce", "conmi", "fmeasure@pred[beta=2]", "nce", "nce[normalizer=per_axis]"]
    (legend,) = fig.legends
    assert len(legend.get_texts()) == 24  # one entry per pair, each pred with its own truth: named by the pred
    assert outside_the_image(fig) == []
    for ax in fig.axes:
        lines = ax.get_lines()
        assert len(lines) == 24
        colours = [tuple(ln.get_color()) if not isinstance(ln.get_color(), str) else ln.get_color() for ln in lines]
        assert len(set(colours)) == 24  # distinct within the panel
        assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()] == ["1", "2", "3", "4", "5"]
        seen = {ln.get_label(): [y == y for y in ln.get_ydata()] for ln in lines}
        assert seen["spectral-coclustering/bicl-n100-s0"] == [True] * 5  # a point every night, reused ones too
        assert seen["spectral-coclustering/checkerboard-n10000-s3"] == [False, True, True, True, True]
    replaced = next(ln for ln in fig.axes[2].get_lines() if ln.get_label().endswith("bicl-n1000-s1"))
    assert len(set(replaced.get_ydata())) == 2  # the value before and after the pred was replaced


def test_long_names_wrap_and_the_figure_grows(tmp_path):
    from daskbicl.plot import plot_history

    rows = [dict(run_id=f"r{n}", started_at=f"2026-11-0{n + 1}T02:00:00+00:00", truth_name="data/t.zarr",
                 pred_name=f"a-very-long-group-name-of-an-algorithm/{'x' * 60}-{k}.zarr", measure="fmeasure",
                 params=params_key({"aggregate": "both", "beta": 0.5, "clip": True, "drop_empty": True}),
                 value=0.1 * k, status="reused") for n in range(3) for k in range(7)]
    fig = plot_history(rows)
    assert "\n" in fig.axes[0].get_title()  # fmeasure@both[beta=0.5,clip=true,drop_empty=true] is wrapped
    assert outside_the_image(fig) == []
