"""Security headers and the database time limit of web requests.

``ContentSecurityPolicyMiddleware``: the pages load scripts only from wanmon's own static files (no
inline script anywhere in templates/), so an injected ``<script>`` or ``javascript:`` link does not run.
Styles allow 'unsafe-inline': templates colour badges with style attributes and plotly.js injects its
own stylesheet, and styles cannot run code.

``StatementTimeoutMiddleware``: a read (GET/HEAD/OPTIONS) may not hold a PostgreSQL backend longer than
WANMON_WEB_STATEMENT_TIMEOUT_MS per statement; a query cancelled by that limit answers 503 saying so,
instead of a hang or a 500. Writes (ingest COPY, imports) are not limited here: their size is bounded
by the request limits, and an interrupted write would only be retried.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack

from django.conf import settings
from django.db import OperationalError, connections
from django.http import HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


class ContentSecurityPolicyMiddleware:
    """Adds settings.WANMON_CSP (unless empty) to every response that has no policy of its own."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = settings.WANMON_CSP
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response


def statement_cancelled(exc: BaseException) -> bool:
    """Whether ``exc`` is PostgreSQL cancelling a statement (statement_timeout), possibly wrapped by Django."""
    from psycopg import errors

    while exc is not None:
        if isinstance(exc, errors.QueryCanceled):
            return True
        exc = exc.__cause__
    return False


class StatementTimeoutMiddleware:
    """Sets statement_timeout before the first query of a read request and resets it afterwards.

    The SET is sent lazily (through an execute wrapper on every configured database, the primary and a
    read replica alike), so a request that never touches the database (/livez, static files) costs no
    round trip.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        timeout_ms = settings.WANMON_WEB_STATEMENT_TIMEOUT_MS
        if not timeout_ms or request.method not in SAFE_METHODS:
            return self.get_response(request)
        limited: set[str] = set()

        def wrapper(alias: str):
            def limit(execute, sql, params, many, context):
                if alias not in limited:
                    limited.add(alias)
                    # Through a plain cursor of the same session, not context["cursor"]: that is a server-side
                    # cursor when the first query is a QuerySet.iterator() (a form's choice field, as on the
                    # maintenance pages a staff user opens without a group query first), and a server-side
                    # cursor would send "DECLARE ... CURSOR FOR SET ...", a syntax error, a 500.
                    with context["connection"].connection.cursor() as plain:
                        plain.execute(f"SET statement_timeout = {int(timeout_ms)}")
                return execute(sql, params, many, context)

            return limit

        try:
            with ExitStack() as stack:
                for alias in connections:
                    stack.enter_context(connections[alias].execute_wrapper(wrapper(alias)))
                return self.get_response(request)
        finally:
            for alias in limited:
                self._reset(connections[alias])

    @staticmethod
    def _reset(connection) -> None:
        if connection.connection is None or connection.needs_rollback:
            return  # closed, or inside a failed transaction (tests): nothing to reset on this session
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET statement_timeout")
        except Exception:  # a broken connection is discarded by Django anyway
            logger.warning("could not reset statement_timeout; closing the connection", exc_info=True)
            connection.close()

    def process_exception(self, request, exception):
        if not (isinstance(exception, OperationalError) and statement_cancelled(exception)):
            return None
        limit_ms = settings.WANMON_WEB_STATEMENT_TIMEOUT_MS
        message = (
            f"the database query took longer than the limit of {limit_ms} ms (WANMON_WEB_STATEMENT_TIMEOUT_MS): "
            "ask for a shorter range, a coarser bucket or fewer series"
        )
        logger.warning("statement timeout on %s %s", request.method, request.path)
        if request.path.startswith("/api/"):
            return JsonResponse({"errors": [{"path": "", "message": message}]}, status=503)
        return HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
