"""Locations as daskbicl shows them: the one redaction of secrets in paths and URLs.

A store's URL may carry a secret: a password in its user information
(``https://user:pass@host/t.zarr``) or a signed URL's query
(``?X-Amz-Signature=...``, Azure SAS ``sig=...``).  Everything daskbicl
writes or prints about a location (error messages, the results file, exports,
MLflow tags, figure titles, notices, ``--debug`` tracebacks) goes through
:func:`redact` (one location) or :func:`redact_text` (a message that may hold
locations), so such a secret is never written anywhere.  The redacted text is
stable (the secret, which changes with each signature, becomes ``***``), so
it names the same store night after night.

Examples
--------
>>> redact("https://alice:s3cret@example.org/data/t.zarr")
'https://***@example.org/data/t.zarr'
>>> redact("https://b.s3.amazonaws.com/t.zarr?X-Amz-Expires=60&X-Amz-Signature=abc123")
'https://b.s3.amazonaws.com/t.zarr?X-Amz-Expires=60&X-Amz-Signature=***'
>>> redact("runs/nmf-3.zarr"), redact("signed/t.zarr?sig=abc")
('runs/nmf-3.zarr', 'signed/t.zarr?sig=***')
>>> redact_text("cannot read https://u:p@h/t.zarr?sig=xyz: timed out")
'cannot read https://***@h/t.zarr?sig=***: timed out'
"""

from __future__ import annotations

import logging
import re

__all__ = ["SECRET_PARAMETERS", "redact", "redact_text", "redact_logs", "redacted_traceback"]

#: Query parameters whose values are secrets (compared in lower case): AWS signed URLs (SigV4 and SigV2),
#: Azure shared access signatures, Google signed URLs, and the usual token and password names.
SECRET_PARAMETERS = frozenset({
    "x-amz-signature", "x-amz-credential", "x-amz-security-token", "signature", "awsaccesskeyid",
    "x-goog-signature", "x-goog-credential", "googleaccessid",
    "sig", "se", "sp", "sv", "skoid", "sktid", "sks", "skv", "skt", "ske",
    "token", "access_token", "id_token", "refresh_token", "sas", "sas_token", "code",
    "key", "api_key", "apikey", "secret", "client_secret", "password", "passwd", "pwd", "auth",
})

MASK = "***"

# A URL: scheme://[userinfo@]host/...; it ends at white space or a character that closes a quotation.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>`]+")
# userinfo: everything between '//' and the last '@' before the first '/', '?' or '#'.
_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/?#]*)@")
_PARAM = re.compile(r"(?P<sep>[?&;])(?P<name>[^=&;#?]+)=(?P<value>[^&;#]*)")


def _query(match: re.Match) -> str:
    name = match.group("name")
    if name.strip().lower() in SECRET_PARAMETERS and match.group("value"):
        return f"{match.group('sep')}{name}={MASK}"
    return match.group(0)


def redact(location) -> str:
    """``location`` with its secrets replaced by ``***``: user information, secret query values.

    A local path is returned as text, unchanged (unless it has a query of
    secret parameters, as a store's name made from a signed URL has).  Parameters that are not secrets (``X-Amz-Expires``,
    ``versionId``) are kept, so the redacted text still says which store it
    is.
    """
    text = str(location)
    if "://" in text:
        text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text, count=1)
    head, mark, rest = text.partition("?")  # a name made from a URL (group/folder) keeps its query: redacted too
    if not mark:
        return text
    return head + _PARAM.sub(_query, "?" + rest)


def redact_text(text) -> str:
    """``text`` (a message, a traceback) with every URL in it redacted by :func:`redact`."""
    def one(match: re.Match) -> str:
        url = match.group(0)
        core = url.rstrip(".,:;)]}!")  # punctuation after a URL in a sentence is not part of it
        return redact(core) + url[len(core):]

    return _URL.sub(one, str(text))


class _Redacting(logging.Filter):
    """Rewrites a log record's message (and its traceback) with :func:`redact_text` before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            record.msg, record.args = redact_text(record.getMessage()), None
            if record.exc_info:
                record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
                record.exc_info = None
        except Exception:  # a record that cannot be formatted is left to logging's own error report
            pass
        return True


_FILTER = _Redacting()

#: Loggers whose records can name a location: distributed's (a failed task's arguments, its exception), daskbicl's.
LOGGERS = ("distributed.worker", "distributed.core", "distributed.nanny", "distributed.scheduler",
           "distributed.client", "distributed.utils", "distributed.worker.state_machine", "daskbicl")


def redact_logs() -> None:
    """Add the redacting filter to :data:`LOGGERS` in this process (once; workers call it when they import
    daskbicl's I/O), so a worker's log, ``client.get_worker_logs()``, holds no secret of a location."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


def redacted_traceback(exc: BaseException) -> str:
    """The traceback Python would print for ``exc`` (its chain included), with every URL redacted."""
    import traceback

    return redact_text("".join(traceback.format_exception(exc)))
