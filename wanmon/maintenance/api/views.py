"""Maintenance API: windows (manual entry), imports (file, mailbox, URL), carrier notices, matching, feed tokens.

Authenticated users read; writes need staff or the operator group. Each view calls one service or selector.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path as FilePath

from django.conf import settings
from django.http import HttpResponse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from wanmon.core.api import input_data, service_refusals
from wanmon.core.guard import GuardedJSONParser
from wanmon.core.permissions import IsOperatorOrReadOnly, user_is_operator
from wanmon.inventory.models import Site
from wanmon.maintenance import imports, selectors, services
from wanmon.maintenance.api import serializers as s
from wanmon.maintenance.choices import Source
from wanmon.maintenance.models import CarrierNotice, FeedToken, MaintenanceSource, MaintenanceWindow


def _time_param(request, name: str, default: datetime | None) -> datetime | None:
    raw = request.query_params.get(name)
    if not raw:
        return default
    try:
        moment = parse_datetime(raw.replace(" ", "+"))
    except ValueError:  # well-formed but impossible (month 13, minute 61)
        moment = None
    if moment is None or moment.tzinfo is None:
        raise ValidationError({name: "an ISO 8601 time with a zone, e.g. 2026-03-01T12:00:00Z"})
    try:
        # In UTC: PostgreSQL refuses zone offsets beyond 15:59 that Python accepts (up to 23:59).
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValidationError({name: "out of range"}) from None


WINDOW_FILTERS = [
    OpenApiParameter("start", OpenApiTypes.DATETIME, description="windows ending after this time"),
    OpenApiParameter("end", OpenApiTypes.DATETIME, description="windows starting before this time"),
    OpenApiParameter("carrier", str, description="carrier code"),
    OpenApiParameter("site", str, description="site code: windows touching the site (through the topology)"),
    OpenApiParameter("status", str, description="comma-separated statuses"),
]


class WindowViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Maintenance windows: list with filters, detail with footprint and audit trail, manual entry and changes."""

    permission_classes = [IsOperatorOrReadOnly]
    serializer_class = s.WindowListSerializer

    def get_queryset(self):
        return selectors.maintenance_window_queryset().prefetch_related("events__user")

    @extend_schema(parameters=WINDOW_FILTERS)
    def list(self, request, *args, **kwargs):
        start = _time_param(request, "start", None)
        end = _time_param(request, "end", None)
        statuses = [v for v in request.query_params.get("status", "").split(",") if v] or None
        windows = selectors.maintenance_window_list(
            start=start, end=end, carrier=request.query_params.get("carrier") or None, status=statuses
        )
        site = request.query_params.get("site")
        if site:
            tp = selectors.topology_load()
            site_obj = Site.objects.filter(code=site).first()
            windows = [
                w
                for w in windows
                if site_obj is not None
                and site_obj.pk in tp.window_sites(selectors.window_targets(w), w.start, w.recurrence_end or w.end)
            ]
        page = self.paginate_queryset(windows)
        return self.get_paginated_response(s.WindowListSerializer(page, many=True).data)

    def _detail(self, window: MaintenanceWindow, code: int = status.HTTP_200_OK) -> Response:
        window = selectors.maintenance_window_get(window.pk)
        footprint = selectors.maintenance_window_footprint(window)
        context = {"footprint": footprint, "request": self.request}
        return Response(s.WindowDetailSerializer(window, context=context).data, status=code)

    @extend_schema(responses=s.WindowDetailSerializer)
    def retrieve(self, request, *args, **kwargs):
        return self._detail(self.get_object())

    @extend_schema(request=s.WindowInput, responses={201: s.WindowDetailSerializer})
    def create(self, request, *args, **kwargs):
        data = input_data(s.WindowInput, request.data)
        with service_refusals():
            window = services.maintenance_window_create(**data, source=Source.API, user=request.user)
        return self._detail(window, status.HTTP_201_CREATED)

    @extend_schema(request=s.WindowUpdateInput, responses=s.WindowDetailSerializer)
    def partial_update(self, request, *args, **kwargs):
        values = dict(input_data(s.WindowUpdateInput, request.data, partial=True))
        note = values.pop("note", "")
        with service_refusals():
            window = services.maintenance_window_update(window=self.get_object(), user=request.user, note=note,
                                                        **values)
        return self._detail(window)

    @extend_schema(request=s.NoteInput, responses=s.WindowDetailSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        data = input_data(s.NoteInput, request.data)
        window = services.maintenance_window_cancel(window=self.get_object(), user=request.user, note=data["note"])
        return self._detail(window)

    @extend_schema(request=s.ReviewInput, responses=s.WindowDetailSerializer)
    @action(detail=True, methods=["post"])
    def review(self, request, pk=None):
        """Accept or reject a window held for review (operators)."""
        data = input_data(s.ReviewInput, request.data)
        window = services.maintenance_window_review(window=self.get_object(), user=request.user,
                                                    accept=data["decision"] == "accept", note=data["note"])
        return self._detail(window)

    @extend_schema(request=s.CommentInput, responses={201: s.EventSerializer})
    @action(detail=True, methods=["post"])
    def comments(self, request, pk=None):
        data = input_data(s.CommentInput, request.data)
        with service_refusals():
            event = services.maintenance_window_comment(window=self.get_object(), text=data["text"], user=request.user)
        return Response(s.EventSerializer(event).data, status=status.HTTP_201_CREATED)


def _report_response(report: imports.ImportReport) -> Response:
    body = report.as_dict()
    failed = all(n.status == "failed" for n in report.notices) and report.notices
    return Response(body, status=status.HTTP_422_UNPROCESSABLE_ENTITY if failed else status.HTTP_200_OK)


class _ImportView(APIView):
    permission_classes = [IsOperatorOrReadOnly]

    def options_of(self, data, *, vouched: bool = True) -> dict:
        """Import options; an operator who uploads a file or names a URL vouches for it (not for a mailbox)."""
        options = {"carrier": data.get("carrier"), "parser": data.get("parser") or None, "user": self.request.user}
        if vouched:
            options["vouched_by"] = imports.vouched_by_user(self.request.user)
        return options


class FileImportView(_ImportView):
    """Import uploaded files (multipart field ``file``, repeatable): BCOP .ics calendars or carrier .eml e-mails."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": s.FileImportInput}, responses={200: s.ImportReportSerializer,
                                                                                  422: s.ImportReportSerializer})
    def post(self, request):
        # dict(...items()): an empty or non-form body gives a plain dict, not a QueryDict
        data = input_data(s.FileImportInput, {**dict(request.data.items()), "file": request.FILES.getlist("file")})
        options = self.options_of(data)
        report = imports.ImportReport()
        for upload in data["file"]:
            raw = upload.read()
            name = upload.name or "upload"
            source = Source.ICAL_FILE if name.lower().endswith((".ics", ".ical")) else Source.EMAIL
            report.notices.append(
                imports.carrier_notice_import(raw=raw, source=source, origin=f"upload:{name}", **options)
            )
        return _report_response(report)


class _RequestImportView(_ImportView):
    """An import named by a JSON or form body (a directory, a URL): the subclass's ``run`` imports it."""

    parser_classes = [GuardedJSONParser, FormParser]
    input_class: type[serializers.Serializer]

    def run(self, data: dict) -> imports.ImportReport:
        raise NotImplementedError

    def post(self, request):
        data = input_data(self.input_class, request.data)
        with service_refusals():
            report = self.run(data)
        return _report_response(report)


@extend_schema_view(post=extend_schema(request=s.MaildirImportInput, responses={200: s.ImportReportSerializer,
                                                                                422: s.ImportReportSerializer}))
class MaildirImportView(_RequestImportView):
    """Import a Maildir (or directory of messages) on the server, under one of WANMON_MAINTENANCE_MAILDIRS."""

    input_class = s.MaildirImportInput

    def run(self, data: dict) -> imports.ImportReport:
        path = FilePath(data["path"]).resolve()
        allowed = [FilePath(p).resolve() for p in settings.WANMON_MAINTENANCE_MAILDIRS]
        if not any(path == root or root in path.parents for root in allowed):
            raise PermissionDenied("this directory is not under WANMON_MAINTENANCE_MAILDIRS")
        return imports.maintenance_import_maildir(directory=path, **self.options_of(data, vouched=False))


@extend_schema_view(post=extend_schema(request=s.UrlImportInput, responses={200: s.ImportReportSerializer,
                                                                            422: s.ImportReportSerializer}))
class UrlImportView(_RequestImportView):
    """Fetch and import an iCalendar feed or file from an http(s) URL."""

    input_class = s.UrlImportInput

    def run(self, data: dict) -> imports.ImportReport:
        return imports.maintenance_import_url(url=data["url"], **self.options_of(data))


class CarrierNoticeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Carrier notices as received, with what their parsing produced; ``raw`` downloads the original.

    Routed at ``maintenance/notices`` and, under the former name, ``maintenance/notifications`` (the same answers).
    """

    permission_classes = [IsOperatorOrReadOnly]
    serializer_class = s.CarrierNoticeSerializer
    queryset = CarrierNotice.objects.select_related("uploaded_by").order_by("-received_at", "-id")
    filterset_fields = ["status", "source", "sender"]

    def filter_queryset(self, queryset):
        # A viewer does not see senders (docs/permissions.md), nor may it test addresses one by one with the filter.
        if "sender" in self.request.query_params and not user_is_operator(self.request.user):
            raise PermissionDenied("filtering by sender is for operators: senders are contact data")
        return super().filter_queryset(queryset)

    @extend_schema(responses={(200, "application/octet-stream"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"])
    def raw(self, request, pk=None):
        """The carrier notice as received (operators: it may hold customer details, or a fetched body)."""
        if not user_is_operator(request.user):
            raise PermissionDenied("raw carrier notices are for operators")
        n = self.get_object()
        ctype = "text/calendar" if n.content_type == "text/calendar" else "message/rfc822"
        response = HttpResponse(bytes(n.raw), content_type=ctype)
        extension = "ics" if ctype == "text/calendar" else "eml"
        response["Content-Disposition"] = f'attachment; filename="carrier-notice-{n.pk}.{extension}"'
        return response


class MatchView(APIView):
    """Which windows touch a path over a period, or concern an element at an instant (impact-aware)."""

    permission_classes = [IsOperatorOrReadOnly]

    @extend_schema(
        parameters=[
            OpenApiParameter("path", str, description="a path direction 'SRC->DST'"),
            OpenApiParameter("element", str, description="'equipment', 'equipment:interface', a trunk, "
                             "'circuit:CID' or 'site:CODE'"),
            OpenApiParameter("start", OpenApiTypes.DATETIME, description="with path (default: now)"),
            OpenApiParameter("end", OpenApiTypes.DATETIME, description="with path (default: start + 1 day)"),
            OpenApiParameter("at", OpenApiTypes.DATETIME, description="with element (default: now)"),
        ],
        responses=inline_serializer("MaintenanceMatches", {
            "paths": s.PathMatchSerializer(many=True), "elements": s.ElementMatchSerializer(many=True)}),
    )
    def get(self, request):
        path = request.query_params.get("path")
        element = request.query_params.get("element")
        if bool(path) == bool(element):
            raise ValidationError({"non_field_errors": "give exactly one of path or element"})
        if path:
            start = _time_param(request, "start", timezone.now())
            end = _time_param(request, "end", start + timedelta(days=1))
            matches = selectors.maintenance_windows_affecting_path(path, start, end)
            return Response({"paths": s.PathMatchSerializer(matches, many=True).data, "elements": []})
        at = _time_param(request, "at", timezone.now())
        matches = selectors.maintenance_matches_for_element(element, at)
        return Response({"paths": [], "elements": s.ElementMatchSerializer(matches, many=True).data})


class SkippedPathsView(APIView):
    """Path directions whose scheduled tests pause now (windows with behaviour 'skip')."""

    permission_classes = [IsOperatorOrReadOnly]

    @extend_schema(
        parameters=[OpenApiParameter("at", OpenApiTypes.DATETIME, description="default: now")],
        responses=inline_serializer("MaintenanceSkippedPaths", {
            "at": serializers.DateTimeField(), "paths": serializers.ListField(child=serializers.CharField())}),
    )
    def get(self, request):
        at = _time_param(request, "at", timezone.now())
        return Response({"at": at, "paths": selectors.maintenance_paths_skipped(at)})


class FeedTokenViewSet(mixins.ListModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet):
    """Tokens of the iCalendar feeds; the secret and the subscription URLs are shown once, at creation."""

    permission_classes = [IsOperatorOrReadOnly]
    serializer_class = s.FeedTokenSerializer
    queryset = FeedToken.objects.select_related("site", "carrier", "created_by")

    @extend_schema(request=s.FeedTokenInput, responses={201: s.FeedTokenCreated})
    def create(self, request, *args, **kwargs):
        with service_refusals():
            token, secret = services.feed_token_create(**input_data(s.FeedTokenInput, request.data), user=request.user)
        body = s.FeedTokenSerializer(token).data
        body["token"] = secret
        body["urls"] = services.feed_urls(secret, site=token.site, carrier=token.carrier)
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=s.FeedTokenSerializer)
    @action(detail=True, methods=["post"])
    def revoke(self, request, pk=None):
        token = services.feed_token_revoke(token=self.get_object())  # an id that is no number: a 404, not a 500
        return Response(s.FeedTokenSerializer(token).data)


class SourceViewSet(viewsets.ModelViewSet):
    """How each carrier's notices are read: senders, parser, calendar URL polled hourly."""

    permission_classes = [IsOperatorOrReadOnly]
    serializer_class = s.SourceSerializer
    queryset = MaintenanceSource.objects.select_related("carrier")
