"""perfSONAR endpoints: the archive pScheduler posts runs to, parked runs (page and API), pSConfig templates."""

from __future__ import annotations

import logging
from dataclasses import replace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import DatabaseError
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from wanmon.core.permissions import IsOperator, user_is_operator
from wanmon.inventory.choices import AgentScope
from wanmon.inventory.models import Host, Site
from wanmon.measurements.api import upload
from wanmon.measurements.api.auth import AgentPrincipal
from wanmon.measurements.api.body import BodyError, body_read
from wanmon.perfsonar.psconfig import template_build
from wanmon.perfsonar.selectors import parked_run_list, psconfig_template_input, psconfig_token_get
from wanmon.perfsonar.services import (
    ArchiveError,
    MapResult,
    perfsonar_endpoint_map,
    perfsonar_run_archive,
    psconfig_archive,
    psconfig_token_mark_used,
)

logger = logging.getLogger(__name__)

ARCHIVE_RESPONSE = inline_serializer(
    "PerfsonarArchived",
    {
        "run_id": serializers.CharField(),
        "accepted": serializers.IntegerField(),
        "duplicate": serializers.BooleanField(),
        "parked": serializers.BooleanField(),
        "ignored": serializers.CharField(required=False, help_text="why a run of this kind is not used"),
    },
)


ARCHIVER_CONTENT_TYPES = frozenset(
    {"application/x-www-form-urlencoded", "text/plain", "application/octet-stream", "text/json", "application/jsonl"}
)


class ArchiveView(upload.AgentUploadView):
    """pScheduler's http archiver PUTs (or POSTs) a run here, agent token (docs/contracts.md#perfsonar-archive): a site
    agent's or a pSConfig template's archive token."""

    agent_scopes = (AgentScope.AGENT, AgentScope.ARCHIVE)

    @upload.upload_schema(
        operation_id="perfsonar_archive",
        summary="Archive one pScheduler run (http archiver body, agent bearer token)",
        responses={
            200: OpenApiResponse(ARCHIVE_RESPONSE, description="stored, duplicate, parked or ignored"),
            400: OpenApiResponse(upload.INGEST_ERROR, description="malformed: the errors name the fields"),
            403: OpenApiResponse(upload.INGEST_ERROR, description="neither endpoint is at the token's site"),
            413: OpenApiResponse(upload.INGEST_ERROR, description="body too large"),
        },
    )
    def put(self, request):
        principal: AgentPrincipal = request.user
        max_body = upload.upload_limits()[0]
        meta = request._request.META
        if (meta.get("CONTENT_TYPE") or "").split(";")[0].strip().lower() in ARCHIVER_CONTENT_TYPES:
            # The archive spec of docs/contracts.md sets no Content-Type: pScheduler's HTTP client then labels the
            # JSON as it likes (curl: form data). The body is a run whatever the label; it is read as JSON.
            meta["CONTENT_TYPE"] = "application/json"
        try:
            body = body_read(request._request, max_body=max_body)
        except BodyError as exc:
            return upload.errors_response(exc.status, [{"path": "", "message": exc.message}])
        try:
            result = perfsonar_run_archive(body=body, agent=principal.agent, now=timezone.now())
        except ArchiveError as exc:
            return upload.errors_response(exc.status, exc.errors)
        except DatabaseError:
            logger.exception("perfSONAR archive failed on the database")
            return upload.database_unavailable()
        return Response(result.as_dict())

    @extend_schema(operation_id="perfsonar_archive_post", summary="Same as PUT (op: post in the archive spec)",
                   request={"application/json": {"type": "object"}}, responses={200: ARCHIVE_RESPONSE})
    def post(self, request):
        return self.put(request)


def _run_dict(run) -> dict:
    return {
        "run_id": run.run_id,
        "test_type": run.test_type,
        "tool": run.tool,
        "tool_version": run.tool_version,
        "run_start": run.run_start,
        "source": run.source,
        "dest": run.dest,
        "unresolved": run.unresolved,
        "agent": run.agent.name if run.agent_id else None,
        "site": run.agent.site.code if run.agent_id else None,
        "received_at": run.received_at,
    }


class MappingInput(serializers.Serializer):
    """POST /api/v1/perfsonar/mappings: which site (and host) an endpoint name or address is."""

    endpoint = serializers.CharField(max_length=300)
    site = serializers.CharField(max_length=32)
    host = serializers.CharField(max_length=100, required=False, allow_blank=True)


def _map(data: dict, user) -> MapResult:
    """Resolve the mapping form's names and call the service (ValidationError naming the field)."""
    site = Site.objects.filter(code=data["site"]).first()
    if site is None:
        raise ValidationError({"site": f"unknown site {data['site']!r}"})
    host = None
    if data.get("host"):
        host = Host.objects.filter(site=site, name=data["host"]).first()
        if host is None:
            raise ValidationError({"host": f"site {site.code} has no host {data['host']!r}"})
    return perfsonar_endpoint_map(endpoint=data["endpoint"], site=site, host=host, user=user, now=timezone.now())


def _map_dict(result: MapResult) -> dict:
    return {
        "endpoint": result.alias.endpoint,
        "site": result.alias.site.code,
        "host": result.alias.host.name if result.alias.host_id else None,
        "ingested": result.ingested,
        "rejected": [{"run_id": k, "reason": v} for k, v in result.rejected.items()],
        "ignored": result.ignored,
        "still_parked": result.still_parked,
    }


class ParkedRunListView(APIView):
    """Runs waiting for their endpoints to be mapped (operators)."""

    permission_classes = [IsAuthenticated, IsOperator]

    @extend_schema(operation_id="perfsonar_parked_list", responses={200: OpenApiResponse(description="parked runs")})
    def get(self, request):
        return Response({"results": [_run_dict(r) for r in parked_run_list()]})


class MappingView(APIView):
    """Map an endpoint to a site (and host); the parked runs it resolves are ingested at once (operators)."""

    permission_classes = [IsAuthenticated, IsOperator]

    @extend_schema(operation_id="perfsonar_mapping_create", request=MappingInput,
                   responses={200: OpenApiResponse(description="the alias and the runs released")})
    def post(self, request):
        form = MappingInput(data=request.data)
        if not form.is_valid():
            return upload.errors_response(400, upload.field_errors(form.errors))
        try:
            result = _map(form.validated_data, request.user)
        except ValidationError as exc:
            return upload.errors_response(400, upload.field_errors(exc.message_dict))
        return Response(_map_dict(result))


# --------------------------------------------------------------------------- pages


@login_required
@require_GET
def parked_page(request):
    """The parked runs, grouped by endpoint to map, with a form per endpoint (operators)."""
    if not user_is_operator(request.user):
        raise PermissionDenied("the parked perfSONAR runs are for operators")
    runs = list(parked_run_list())
    endpoints: dict[str, list] = {}
    for run in runs:
        for name in run.unresolved:
            endpoints.setdefault(name, []).append(run)
    sites = list(Site.objects.order_by("code").prefetch_related("hosts"))
    return render(request, "perfsonar/parked.html", {
        "runs": runs,
        "endpoints": sorted(endpoints.items()),
        "sites": sites,
    })


@login_required
@require_POST
def map_page(request):
    """The page's mapping form: map, say what was ingested, back to the list."""
    if not user_is_operator(request.user):
        raise PermissionDenied("mapping perfSONAR endpoints needs the operator role")
    data = {key: request.POST.get(key, "").strip() for key in ("endpoint", "site", "host")}
    site_code, _, host_name = data["site"].partition("/")
    data["site"], data["host"] = site_code, data["host"] or host_name
    try:
        result = _map(data, request.user)
    except ValidationError as exc:
        for field, problems in exc.message_dict.items():
            messages.error(request, f"{field}: {' '.join(problems)}")
        return redirect("perfsonar-parked")
    target = result.alias.host or result.alias.site
    text = f"{result.alias.endpoint} is now {target}: {len(result.ingested)} run(s) ingested"
    if result.rejected:
        text += f", {len(result.rejected)} refused ({'; '.join(result.rejected.values())[:300]})"
    messages.success(request, text)
    return redirect("perfsonar-parked")


@require_GET
def psconfig_template(request, token: str):
    """A pSConfig template behind a read-only token (``psconfig remote add URL`` on a toolkit)."""
    access = psconfig_token_get(token)
    if access is None:
        raise Http404("unknown or revoked pSConfig token")
    now = timezone.now()
    spec = psconfig_template_input(site=access.site, now=now)
    archive, note = psconfig_archive(access)
    template = template_build(replace(spec, archive=archive, archive_note=note))
    psconfig_token_mark_used(token=access, now=now)
    response = JsonResponse(template, json_dumps_params={"indent": 2})
    response["Cache-Control"] = "no-store"  # it carries a write token and changes with maintenance
    return response
