"""The repository keeps its promises: benchmarks run, README matches the registry and CI."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

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




def _readme_table_region(text: str) -> str:
    from daskbicl.measures.registry import README_BEGIN, README_END

    start, end = text.find(README_BEGIN), text.find(README_END)
    assert 0 <= start < end, "README.md lost the markers of its generated measure table"
    return text[start:end + len(README_END)]


def test_readme_measure_table_is_generated_from_the_registry():
    """The README's table is what the records generate (issue 25): a new or changed record fails here."""
    from daskbicl.measures.registry import readme_table

    command = 'python3 -c "from daskbicl.measures.registry import write_readme_table as w; w()"'
    assert _readme_table_region((ROOT / "README.md").read_text(encoding="utf-8")) == readme_table(), (
        f"README.md's measure table differs from the registry: run `{command}` from the repository root"
    )


def test_every_measure_is_in_one_family_row_whose_page_defines_it():
    from daskbicl.measures.registry import REGISTRY, measure_families

    placed = [m.name for _, measures in measure_families() for m in measures]
    assert sorted(placed) == sorted(REGISTRY)  # each once
    for family, measures in measure_families():
        page = (ROOT / "docs" / "measures" / family.page).read_text(encoding="utf-8")
        for m in measures:
            stem = re.sub(r"_(rows|cols)$", "", re.sub(r"_(corrected|space)$", "", m.name))
            assert re.search(rf"\b{stem}", page, re.I), (m.name, family.page)
        assert measures or family.calls, family.title


def test_the_table_is_read_from_the_records():
    """Every measure, every parameter with its record's default, and "scored when named" by the default flag."""
    from daskbicl.measures.registry import measure_families, readme_table

    table = readme_table()
    rows = {line.split(" | ")[0]: line for line in table.splitlines() if line.startswith("| ") and "](docs/" in line}
    for family, measures in measure_families():
        (row,) = [r for key, r in rows.items() if key.startswith(f"| {family.title}")]
        assert family.page in row
        assert ("scored when named" in row.split(" | ")[0]) == bool(measures and not any(m.default for m in measures))
        for m in measures:
            assert f"`{m.name}`" in row.split(" | ")[1]
            for k, p in m.params.items():
                assert f"`{k}` ({p.default!r})" in row.split(" | ")[-1].replace("\\|", "|")


def test_a_measure_outside_every_family_row_is_refused():
    from daskbicl.measures import registry

    cari = registry.get("cari")
    stray = dataclasses.replace(cari, name="stray_probe", finalize=lambda tables: 0.0)  # declared in this module
    registry.REGISTRY[stray.name] = stray
    try:
        with pytest.raises(ValueError, match="'stray_probe'.*exactly one"):
            registry.measure_families()
    finally:
        del registry.REGISTRY[stray.name]
    registry.measure_families()


def test_one_command_rewrites_a_stale_table(tmp_path):
    from daskbicl.measures.registry import README_BEGIN, README_END, readme_table, write_readme_table

    stale = tmp_path / "README.md"
    stale.write_text(f"# title\n\nbefore\n\n{README_BEGIN}\n| old | table |\n{README_END}\n\nafter\n", encoding="utf-8")
    assert write_readme_table(str(stale)) is True
    assert stale.read_text(encoding="utf-8") == f"# title\n\nbefore\n\n{readme_table()}\n\nafter\n"
    assert write_readme_table(str(stale)) is False  # idempotent
    (tmp_path / "plain.md").write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no generated measure table"):
        write_readme_table(str(tmp_path / "plain.md"))
