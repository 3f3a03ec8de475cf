"""benchmarks/out_of_core.py --quick: the out-of-core benchmark cannot rot.

It starts a scheduler and memory-limited workers as separate processes,
generates every case's stores, scores them and reads the floor; the quick
run checks that every case reports, with no restart and every worker below
its memory limit, and (``--explain``) that ``daskbicl explain`` is timed
beside ``daskbicl score`` on the co-clustering stores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_out_of_core_benchmark_runs_quick(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "out_of_core.py"), "--quick", "--explain",
                           "--dir", str(tmp_path / "stores"), "--json", str(tmp_path / "rows.json"),
                           "--repeat", "1"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    rows = json.loads((tmp_path / "rows.json").read_text())["rows"]
    assert [r["case"].split()[0] for r in rows] == ["co-clustering", "biclustering", "batch:"]
    for row in rows:
        assert row["restarts"] == 0 and row["below limit"] == "yes", row
        assert float(row["floor s"]) > 0 and float(row["score s"]) > 0
    # --explain: explain timed beside score on the same stores and workers (same scores, checked by the script)
    co = rows[0]
    assert co["explain restarts"] == 0 and float(co["explain s"]) > 0 and float(co["score s (beside explain)"]) > 0
    assert float(co["explain / score"]) == pytest.approx(float(co["explain s"]) / float(co["score s (beside explain)"]),
                                                         rel=0.05, abs=0.02)
    assert all(float(p) < 700 for p in co["explain peak MB"].split("/"))
    # the pass itself, called in process on the same cluster (the script checks it gave the command's scores)
    assert float(co["in process s"]) > 0
    assert float(co["in process vs decode"]) == pytest.approx(float(co["in process s"]) / float(co["decode s"]),
                                                              rel=0.05, abs=0.02)
    assert "explain / score" in proc.stdout


def test_in_process_counting_benchmarks_run_quick(tmp_path):
    """``--mask-counting --quick`` writes small biclustering stores and times every case (the chunk files
    on and off, each kernel); ``--counting`` then times the co-clustering cases on a small co-clustering."""
    folder = tmp_path / "stores"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "out_of_core.py"), "--quick", "--dir",
                           str(folder), "--mask-counting"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    for case in ("read floor", "score, compiled mask kernel", "chunks read by Zarr (before)", "scipy"):
        assert case in proc.stdout, proc.stdout
    subprocess.run([sys.executable, "-m", "daskbicl", "generate", str(folder / "coclustering"), "--rows", "300000",
                    "--cols", "1000", "--row-clusters", "20", "--col-clusters", "5", "--preds", "1"],
                   check=True, capture_output=True, timeout=600)
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "out_of_core.py"), "--dir", str(folder),
                           "--counting", "--repeat", "1"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    for case in ("read floor", "score, byte counter", "chunks read by Zarr (before)", "numpy bincount"):
        assert case in proc.stdout, proc.stdout
