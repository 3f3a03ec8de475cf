"""The repository keeps its promises: benchmarks run, README matches the registry and CI."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import daskbicl

ROOT = Path(__file__).resolve().parents[1]


def test_partition_benchmark_runs_tiny():
    """benchmarks/partition.py --quick: the script cannot rot (flox's test_asv habit)."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "partition.py"), "--quick"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "agrees" in proc.stdout  # the Kronecker-table CARI equals ours
    assert "peak RSS MB" in proc.stdout


def test_bicluster_benchmark_runs_tiny():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bicluster.py"), "--quick"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "read-once floor_s" in proc.stdout and "sklearn_s" in proc.stdout


def test_micro_benchmark_runs_tiny():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "micro.py"), "--quick"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "all four measures at scale" in proc.stdout and "agree" in proc.stdout


def test_figures_example_runs(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "figures.py"), str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert len(list(tmp_path.glob("*.png"))) >= 3


def test_labels_benchmark_runs_quick():
    """benchmarks/labels.py --quick: every label form scored, asserted equal to the integers inside."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "labels.py"), "--quick"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "str (StringDType)" in proc.stdout and "sklearn / daskbicl" in proc.stdout


def test_information_benchmark_runs_quick():
    """benchmarks/information.py --quick: AMI, consensus and the null model against scikit-learn."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "information.py"), "--quick"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "sklearn / daskbicl" in proc.stdout and "ms per draw" in proc.stdout


def test_quickstart_example_runs():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "quickstart.py")], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "on a cluster:" in proc.stdout and "from Zarr:" in proc.stdout


def test_readme_lists_every_measure():
    text = (ROOT / "README.md").read_text()
    for name in daskbicl.MEASURES:
        assert f"`{name}`" in text, name


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = re.search(r"^(python3 -m pytest[^\n#]*?)\s+#", readme, re.M).group(1).strip()
    assert command in ci


