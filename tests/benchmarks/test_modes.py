"""The same-run comparison modes of issue 28's benchmarks run (they cannot rot): --mask-counting, --spread.

Each asserts inside that the two ways of counting give equal scores; here the
scripts run at their ``--quick`` sizes and must print their table.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_out_of_core_mask_counting_quick(tmp_path):
    out = _run("benchmarks/out_of_core.py", "--dir", str(tmp_path), "--mask-counting", "--quick", "--repeat", "1")
    for case in ("read floor", "score, compiled mask kernel", "score, scipy sparse product"):
        assert case in out


def test_partition_spread_quick():
    out = _run("benchmarks/partition.py", "--spread", "--quick")
    assert "spread, compiled lookup / compact" in out and "numpy U strings / compact" in out
