"""Exceptions raised by daskbicl.

Every problem a user can cause (bad labels, mismatched inputs, a path that is
not a daskbicl store, an unknown measure, ...) is reported as a subclass of
:class:`DaskbiclError` with a message that says what is wrong and what to do.
The CLI prints that message on stderr and exits with status 2; a failure of
the cluster itself (:class:`InfrastructureError`) exits with status 3, so a
workflow scheduler can retry it.
"""

from __future__ import annotations

import re

__all__ = [
    "DaskbiclError",
    "InputError",
    "LabelError",
    "AlignmentError",
    "StoreError",
    "MeasureError",
    "TooLargeError",
    "InfrastructureError",
]


class DaskbiclError(Exception):
    """Base class of every error daskbicl raises on purpose."""

    def __reduce__(self):
        # Rebuilt from the class and its message: errors raised on a worker
        # travel back pickled, and the default reduction of a subclass of a
        # built-in such as MemoryError fails once tblib's pickling support is
        # installed (as distributed does).
        return (type(self), self.args)

    def shell_message(self) -> str:
        """The message as the CLI prints it (Python keywords become options)."""
        return str(self)


class InputError(DaskbiclError, ValueError):
    """An input has the wrong type, dtype, shape, dimension or variable name."""


class LabelError(InputError):
    """A label value is not allowed (unassigned under the default policy, unhashable, too large)."""

    def shell_message(self) -> str:
        # 'pass unassigned="cluster"' reads '--unassigned cluster' on the command line
        return re.sub(r'unassigned="(\w+)"', r"--unassigned \1", str(self))


class AlignmentError(InputError):
    """Truth and pred do not describe the same rows or columns."""


class StoreError(DaskbiclError, OSError):
    """A path does not exist or is not a valid daskbicl Zarr store."""


class MeasureError(DaskbiclError, ValueError):
    """An unknown measure name or an invalid measure parameter."""


class TooLargeError(DaskbiclError, MemoryError):
    """A finalize step would need a table larger than the configured limit."""


class InfrastructureError(DaskbiclError, RuntimeError):
    """The cluster failed, not the inputs: a scheduler unreachable or lost, a worker that keeps dying.

    Retrying later, or with more worker memory, can succeed; the CLI exits
    with status 3 for it (2 is for user errors).
    """
