"""The agent ingest endpoint: POST /api/v1/ingest (docs/contracts.md#ingest-api)."""

from __future__ import annotations

import csv
import io
import logging
import time
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from collectors.records import BatchStream, RecordError, TooManyRecordsError
from wanmon.measurements.api.auth import AgentPrincipal
from wanmon.measurements.api.body import BodyError, body_read
from wanmon.measurements.api.upload import (
    INGEST_ERROR,
    AgentUploadView,
    database_unavailable,
    errors_response,
    field_errors,
    upload_limits,
    upload_schema,
)
from wanmon.measurements.ingest import IngestError, IngestResult, batch_ingest_body
from wanmon.measurements.selectors import (
    AGGREGATES,
    MAX_BUCKET_S,
    QueryError,
    measurement_query,
)

logger = logging.getLogger(__name__)


def _error(code: int, path: str, message: str) -> Response:
    return errors_response(code, [{"path": path, "message": message}])


def _enqueue_processing(result: IngestResult) -> None:
    # Never raises: the data is committed, and what cannot be queued is computed by the catch-up.
    from wanmon.measurements.tasks import measurements_process_enqueue

    measurements_process_enqueue(result.interface_since, batch_id=result.batch_id)


def _accepted(result: IngestResult, stream: BatchStream, *, started: float, read_at: float) -> Response:
    # Server-Timing lets an operator (and scripts/bench ingest) see where an upload's time goes:
    # decoding and storing overlap, so "store" is the time not spent decoding after the body was read.
    decode_s = stream.decode_s[0]
    store_s = time.perf_counter() - read_at - decode_s
    timing = (
        f"read;dur={(read_at - started) * 1000:.1f}, decode;dur={decode_s * 1000:.1f}, store;dur={store_s * 1000:.1f}"
    )
    return Response(
        {"batch_id": result.batch_id, "accepted": result.accepted, "duplicate": result.duplicate},
        headers={"Server-Timing": timing},
    )


INGEST_RESPONSE = inline_serializer(
    "IngestAccepted",
    {
        "batch_id": serializers.CharField(),
        "accepted": serializers.IntegerField(),
        "duplicate": serializers.BooleanField(),
    },
)


class IngestView(AgentUploadView):
    """Agents push batches of measurement records; all or nothing, exactly once per batch_id."""

    @upload_schema(
        operation_id="ingest",
        summary="Push a batch of measurement records (agent bearer token)",
        responses={
            200: OpenApiResponse(INGEST_RESPONSE, description="stored, or already stored (duplicate: true)"),
            400: OpenApiResponse(INGEST_ERROR, description="invalid: nothing of the batch was stored"),
            403: OpenApiResponse(INGEST_ERROR, description="a record the agent may not send"),
            409: OpenApiResponse(INGEST_ERROR, description="a record conflicts with what is stored: nothing stored"),
            413: OpenApiResponse(INGEST_ERROR, description="body or record count too large"),
        },
        examples=[
            OpenApiExample(
                "one throughput test",
                value={
                    "batch_id": "6f1c0c8e-1b7e-4c8a-9a53-2f3f1c1d9e01",
                    "agent_version": "1.0.0",
                    "sent_at": "2026-03-01T11:02:00Z",
                    "records": [
                        {
                            "type": "throughput",
                            "time": "2026-03-01T11:00:00Z",
                            "src": "CERN",
                            "dst": "FZK",
                            "tool": "nuttcp",
                            "protocol": "tcp",
                            "duration_s": 10,
                            "throughput_bps": 9.0e8,
                        }
                    ],
                },
            )
        ],
    )
    def post(self, request):
        started = time.perf_counter()
        max_body, max_records, chunk_records = upload_limits()
        principal: AgentPrincipal = request.user
        try:
            body = body_read(request._request, max_body=max_body)
        except BodyError as exc:
            return _error(exc.status, "", exc.message)
        read_at = time.perf_counter()
        try:
            result, stream = batch_ingest_body(
                body,
                now=timezone.now(),
                agent=principal.agent,
                max_records=max_records,
                chunk_records=chunk_records,
                on_commit=_enqueue_processing,
            )
        except TooManyRecordsError as exc:
            return errors_response(413, exc.errors)
        except RecordError as exc:
            return errors_response(400, exc.errors)
        except IngestError as exc:
            return errors_response(exc.status, exc.errors)
        except DatabaseError:
            # Not the body's fault (errors the data causes are IngestErrors, see batch_ingest): tell the agent
            # to keep its spool and retry.
            logger.exception("ingest failed on the database")
            return database_unavailable()
        return _accepted(result, stream, started=started, read_at=read_at)


class QueryParams(serializers.Serializer):
    """Parameters of GET /api/v1/query."""

    metric = serializers.CharField(help_text="e.g. in_bps, out_bps, in_errors_per_s, throughput_bps, loss_fraction")
    start = serializers.DateTimeField(required=False, help_text="default: end - 24 h")
    end = serializers.DateTimeField(required=False, help_text="default: now")
    bucket = serializers.CharField(required=False, help_text="bucket width: 60s, 5m, 1h, 1d (default: from range)")
    aggregate = serializers.ChoiceField(choices=sorted(AGGREGATES), default="avg")
    group_by = serializers.CharField(required=False, help_text="interface, equipment, path, src, dst or all")
    site = serializers.CharField(required=False)
    src = serializers.CharField(required=False)
    dst = serializers.CharField(required=False)
    carrier = serializers.CharField(required=False)
    equipment = serializers.CharField(required=False)
    interface = serializers.CharField(required=False, help_text="'equipment:interface' or an interface name")
    protocol = serializers.ChoiceField(choices=["tcp", "udp"], required=False)
    format = serializers.ChoiceField(choices=["json", "csv"], default="json")

    UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    # Times outside these bounds are typos; near year 1 or 9999 the default range would overflow.
    EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
    LATEST = datetime(2200, 1, 1, tzinfo=UTC)

    def validate_bucket(self, value: str) -> int:
        value = value.strip().lower()
        number, unit = (value[:-1], value[-1]) if value[-1:] in self.UNITS else (value, "s")
        if not number.isascii() or not number.isdigit() or int(number) <= 0:
            raise serializers.ValidationError("use a positive number with s, m, h or d, e.g. 5m")
        if len(number) > 12 or int(number) * self.UNITS[unit] > MAX_BUCKET_S:
            raise serializers.ValidationError(f"must be at most {MAX_BUCKET_S // 86400} days")
        return int(number) * self.UNITS[unit]

    def _in_range(self, value: datetime) -> datetime:
        if not self.EARLIEST <= value < self.LATEST:
            raise serializers.ValidationError(
                f"must be between {self.EARLIEST:%Y-%m-%d} and {self.LATEST:%Y-%m-%d}"
            )
        return value

    def validate_start(self, value: datetime) -> datetime:
        return self._in_range(value)

    def validate_end(self, value: datetime) -> datetime:
        return self._in_range(value)


# A spreadsheet runs a cell starting with one of these as a formula (=HYPERLINK(...), =cmd|...).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A text cell made safe for spreadsheets (OWASP CSV injection): a leading formula character is quoted
    with an apostrophe. Names come from the inventory and from SNMP discovery, i.e. from devices."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


class _CSVRenderer(BaseRenderer):
    """Lets DRF's content negotiation accept ?format=csv; the view builds the CSV body itself."""

    media_type = "text/csv"
    format = "csv"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, bytes | str):
            return data
        # An error answered to ?format=csv: the error body's items as CSV rows (path, message), not a Python repr.
        out = io.StringIO()
        writer = csv.writer(out)
        items = data.get("errors") if isinstance(data, dict) else None
        if isinstance(items, list):
            writer.writerow(["path", "message"])
            for item in items:
                writer.writerow([csv_cell(str(item.get("path", ""))), csv_cell(str(item.get("message", "")))])
        else:
            writer.writerow(["message"])
            writer.writerow([csv_cell(str(data.get("detail", data) if isinstance(data, dict) else data))])
        return out.getvalue()


class QueryView(APIView):
    """Data mining: one metric, filtered, bucketed and aggregated; the right rollup is picked by itself."""

    renderer_classes = [JSONRenderer, BrowsableAPIRenderer, _CSVRenderer]

    @extend_schema(parameters=[QueryParams], responses={200: OpenApiResponse(description="series (JSON) or CSV")})
    def get(self, request):
        params = QueryParams(data=request.query_params)
        if not params.is_valid():
            return errors_response(400, field_errors(params.errors))
        data = params.validated_data
        end = data.get("end") or timezone.now()
        start = data.get("start") or end - timedelta(days=1)
        try:
            result = measurement_query(
                metric=data["metric"],
                start=start,
                end=end,
                bucket_s=data.get("bucket"),
                aggregate=data["aggregate"],
                group_by=data.get("group_by"),
                **{k: data.get(k) for k in ("site", "src", "dst", "carrier", "equipment", "interface", "protocol")},
                max_series=settings.WANMON_QUERY_MAX_SERIES,
                max_points=settings.WANMON_QUERY_MAX_POINTS,
            )
        except QueryError as exc:
            return _error(400, exc.field, exc.message)
        if data["format"] == "csv":
            out = io.StringIO()
            writer = csv.writer(out)
            writer.writerow(["time", *result.group_by, f"{result.metric}_{result.aggregate}"])
            for series in result.series:
                keys = [csv_cell(k) for k in series["key"].values()]
                for bucket, value in series["points"]:
                    writer.writerow([bucket.isoformat(), *keys, "" if value is None else value])
            response = HttpResponse(out.getvalue(), content_type="text/csv")
            response["Content-Disposition"] = f'attachment; filename="wanmon-{result.metric}.csv"'
            return response
        return Response(
            {
                "metric": result.metric,
                "aggregate": result.aggregate,
                "bucket_s": result.bucket_s,
                "source": result.source,
                "start": start,
                "end": end,
                "group_by": result.group_by,
                "series": [
                    {"key": s["key"], "points": [[b.isoformat(), v] for b, v in s["points"]]} for s in result.series
                ],
            }
        )
