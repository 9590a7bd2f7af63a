"""What the endpoints agents upload to share: the agent's bearer token, its rate limit, the raw body read by the
view itself, and the answer when the database is down (503: keep the upload and retry, it is not the body's fault).

Used by the ingest endpoint and by the perfSONAR archive (pScheduler's http archiver with an agent's token).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import DatabaseError
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.parsers import BaseParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from wanmon.inventory.choices import AgentScope
from wanmon.measurements.api.auth import AgentIngestThrottle, AgentScopeAllowed, AgentTokenAuthentication

logger = logging.getLogger(__name__)

RETRY_AFTER_S = 30


class RawJSONParser(BaseParser):
    """Declares the media type for the schema; the view reads and decodes the raw body itself (msgspec)."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):  # pragma: no cover - never called
        return None


def upload_limits() -> tuple[int, int, int]:
    """(body bytes, records per batch, records per stored chunk), from the settings or the defaults."""
    return (
        settings.WANMON_INGEST_MAX_BODY_BYTES,
        settings.WANMON_INGEST_MAX_RECORDS,
        settings.WANMON_INGEST_STREAM_CHUNK_RECORDS,
    )


def errors_response(code: int, errors: list[dict]) -> Response:
    """The error body of the ingest, query and perfSONAR endpoints: ``{"errors": [{"path": ..., "message": ...}]}``."""
    return Response({"errors": errors}, status=code)


def field_errors(errors: dict) -> list[dict]:
    """A serializer's or a ValidationError's errors by field as the items of that error body."""
    return [{"path": field, "message": " ".join(map(str, messages))} for field, messages in errors.items()]


# The schema of that error body ("IngestErrors" in the OpenAPI document).
INGEST_ERROR = inline_serializer(
    "IngestErrors",
    {
        "errors": serializers.ListField(
            child=inline_serializer(
                "IngestError", {"path": serializers.CharField(), "message": serializers.CharField()}
            )
        )
    },
)


def upload_schema(*, responses: dict, **kwargs):
    """``extend_schema`` of an upload handler: a JSON body, ``responses`` and the answers of the token check and the
    rate limit that every upload endpoint gives."""
    responses = {
        **responses,
        401: OpenApiResponse(description="no or bad token"),
        429: OpenApiResponse(description="too many requests; see Retry-After"),
    }
    return extend_schema(
        request={"application/json": {"type": "object"}}, responses=dict(sorted(responses.items())), **kwargs
    )


def database_unavailable() -> Response:
    """503 + Retry-After: an agent keeps its spool (and an archiver its run) and sends it again later."""
    return Response(
        {"errors": [{"path": "", "message": "database unavailable, retry later"}]},
        status=status.HTTP_503_SERVICE_UNAVAILABLE,
        headers={"Retry-After": str(RETRY_AFTER_S)},
    )


class AgentUploadView(APIView):
    """An endpoint an agent's token uploads to, rate-limited per agent; the view reads the body itself.

    ``agent_scopes``: the agents' scopes whose tokens it accepts (a site agent's only, unless the view says more).
    """

    authentication_classes = [AgentTokenAuthentication]
    permission_classes = [IsAuthenticated, AgentScopeAllowed]
    agent_scopes: tuple[str, ...] = (AgentScope.AGENT,)
    throttle_classes = [AgentIngestThrottle]
    parser_classes = [RawJSONParser]

    def handle_exception(self, exc):
        # The database down while the token is checked (before the handler runs) is not the uploader's fault: a 500
        # would make an agent split the batch and park single records after three; 503 + Retry-After keeps them.
        if isinstance(exc, DatabaseError):
            logger.warning("%s: database unavailable before the body was read", type(self).__name__, exc_info=True)
            return database_unavailable()
        if isinstance(exc, exceptions.PermissionDenied):  # the uploads' error body, as for a record refused
            return errors_response(status.HTTP_403_FORBIDDEN, [{"path": "", "message": str(exc.detail)}])
        return super().handle_exception(exc)
