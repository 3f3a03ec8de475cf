"""The field benchmarks added for issue 27 cannot rot: their ``--quick`` modes run and report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_ecs_overlap_benchmark_runs_quick():
    """benchmarks/field_ecs_overlap.py exits 1 when daskbicl and clusim differ by more than 1e-9."""
    pytest.importorskip("clusim")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "field_ecs_overlap.py"), "--quick"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "clusim / daskbicl" in proc.stdout and "load average" in proc.stdout


@pytest.mark.slow
def test_field_out_of_core_benchmark_runs_quick(tmp_path):
    """Both groups scored on memory-limited worker processes, no restart, every worker below its limit."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "field_out_of_core.py"), "--quick", "--dir",
                           str(tmp_path / "stores"), "--json", str(tmp_path / "rows.json")],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    rows = json.loads((tmp_path / "rows.json").read_text())
    assert [r["case"].split(":")[0] for r in rows] == ["cover", "partition"]
    for row in rows:
        assert row["restarts"] == 0 and row["below limit"] == "yes", row
        assert float(row["floor s"]) > 0 and float(row["score s"]) > 0
        assert json.loads(row["some values"])  # the measures' values came back
