"""tests/support/system.py: which tests are system tests (``-m "not system"`` is the fast lane)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

import pytest

from .support.system import is_system_function


def _runs_the_cli():
    return subprocess.run([sys.executable, "-m", "daskbicl", "measures"], capture_output=True, check=False)


def _calls_a_helper_that_runs_the_cli():
    return _runs_the_cli().returncode


def _starts_a_cluster():
    from distributed import LocalCluster

    return LocalCluster


def _opens_daskbicls_cluster():
    from daskbicl.clitools import cluster

    return cluster


@contextlib.contextmanager
def _mounted():
    subprocess.run(["mount", "--help"], capture_output=True, check=False)
    yield


def _uses_a_mount():
    with _mounted():
        pass


def _kills():
    os.kill(os.getpid(), 0)


def _counts(x):
    import numpy as np

    return int(np.bincount(np.asarray(x)).max())


def _calls_a_pure_helper():
    return _counts([0, 1, 1]) + len(os.sep)


# By name: helpers listed in a test's decorators count as its code (a parametrize over them may call them).
@pytest.mark.parametrize("name", ["_runs_the_cli", "_calls_a_helper_that_runs_the_cli", "_starts_a_cluster",
                                  "_opens_daskbicls_cluster", "_uses_a_mount", "_kills"])
def test_a_process_a_cluster_or_a_signal_is_system(name):
    assert is_system_function(globals()[name])


@pytest.mark.parametrize("name", ["_counts", "_calls_a_pure_helper"])
def test_pure_code_is_not_system(name):
    assert not is_system_function(globals()[name]) and not is_system_function(len)


@pytest.fixture
def measures_listed():
    """What ``daskbicl measures`` prints: a fixture that runs the CLI."""
    return _runs_the_cli().stdout


def test_a_fixture_that_runs_the_cli_marks_its_test(request, measures_listed):
    assert request.node.get_closest_marker("system") and measures_listed


def test_a_test_of_pure_code_is_in_the_fast_lane(request):
    assert request.node.get_closest_marker("system") is None and _calls_a_pure_helper() == 2 + len(os.sep)


def test_tests_of_the_suite_are_read_through_their_helpers_and_hypothesis():
    """A CLI test and a kernel test of the suite itself, read as collection reads them."""
    from . import test_cli, test_failures
    from .engine import test_contingency_pass as test_counting

    assert is_system_function(test_cli.test_score_runs_on_the_scheduler_asked_for)  # subprocess in its body
    assert not is_system_function(test_cli.test_word_options_ignore_case_as_in_python)  # cli.main, in process
    assert is_system_function(test_failures.test_disk_full_while_saving_from_python)  # a tmpfs (a context manager)
    given = [f for name, f in vars(test_counting).items() if name.startswith("test_") and hasattr(f, "hypothesis")]
    assert given and not any(is_system_function(f) for f in given)
