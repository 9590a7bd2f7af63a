"""Secrets out of the logs: calendar-feed and pSConfig tokens travel in URL paths, and URLs are logged.

Calendar clients and perfSONAR toolkits cannot log in, so a feed URL carries its token
(``/maintenance/feeds/<token>/...``), a pSConfig template's URL its own (``/perfsonar/psconfig/<token>.json``) and a
carrier's share link its own (``/share/<token>``);
a carrier's calendar URL may carry one in its query (``?token=``) or its user part. Gunicorn's access
log and Django's request log write request paths: :class:`SecretMaskFilter`, attached by the core app at
start (``apps.py``) to the loggers that write paths, masks them in every record before any handler
formats it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

__all__ = ["LOGGERS_WITH_PATHS", "MASK", "SecretMaskFilter", "logging_filters_install", "secrets_mask"]

MASK = "[masked]"
#: Gunicorn's access log, Django's request log (4xx/5xx with the path) and runserver's.
LOGGERS_WITH_PATHS = ("gunicorn.access", "django.request", "django.server")

# The URL routes whose path carries a token (wanmon/maintenance/urls.py, wanmon/perfsonar/urls.py).
# A carrier's share link (wanmon/sharing/urls.py) carries its token the same way.
_PATH_TOKENS = re.compile(r"(/maintenance/feeds/|/perfsonar/psconfig/|/share/)[A-Za-z0-9_-]{4,}")
_QUERY = re.compile(r"([?&;](?:token|access_token|api_key|apikey|key|secret|password|auth|sig|signature)=)[^&;\s\"']*",
                    re.IGNORECASE)
_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/@\s\"']+@", re.IGNORECASE)


def secrets_mask(text: str) -> str:
    """``text`` with the tokens of feed and pSConfig URLs, secret query values and URL user parts replaced by
    [masked]."""
    if not text or not isinstance(text, str):
        return text
    text = _PATH_TOKENS.sub(rf"\g<1>{MASK}", text)
    text = _QUERY.sub(rf"\g<1>{MASK}", text)
    return _USERINFO.sub(rf"\g<1>{MASK}@", text)


class _MaskedRequest:
    """A request as Django's request log carries it: shown (JSON log, repr) without secrets, otherwise itself."""

    def __init__(self, request) -> None:
        self._request = request

    def __getattr__(self, name: str):
        return getattr(self._request, name)

    def __repr__(self) -> str:
        return secrets_mask(repr(self._request))

    __str__ = __repr__


_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class SecretMaskFilter(logging.Filter):
    """Masks secrets in a record's message, arguments (gunicorn passes its atoms as a mapping) and extra fields
    (Django's request log adds the request, which the JSON log writes out)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = secrets_mask(record.msg)
        for name, value in list(vars(record).items()):
            if name in _RECORD_FIELDS:
                continue
            if isinstance(value, str):
                setattr(record, name, secrets_mask(value))
            elif name == "request" and value is not None and not isinstance(value, _MaskedRequest):
                record.request = _MaskedRequest(value)
        args = record.args
        if isinstance(args, Mapping):
            # Gunicorn's atoms dict answers unknown keys itself: change it in place rather than copy it.
            for key, value in list(args.items()):
                if isinstance(value, str):
                    args[key] = secrets_mask(value)
        elif isinstance(args, tuple):
            record.args = tuple(secrets_mask(a) if isinstance(a, str) else a for a in args)
        return True


def logging_filters_install() -> None:
    """Attach the filter to the loggers that write request paths (once per process)."""
    for name in LOGGERS_WITH_PATHS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, SecretMaskFilter) for f in logger.filters):
            logger.addFilter(SecretMaskFilter())
