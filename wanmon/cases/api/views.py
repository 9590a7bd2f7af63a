"""The case memory's API: resolve an incident with its cause, its notes and hypotheses, the cases."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from wanmon.alerts.api.serializers import IncidentDetailSerializer
from wanmon.alerts.api.views import IncidentViewSet
from wanmon.alerts.models import Incident
from wanmon.cases import selectors, services
from wanmon.cases.api import serializers as s
from wanmon.core.api import conflict, input_data, service_refusals
from wanmon.core.permissions import IsOperatorOrReadOnly


class IncidentResolveView(APIView):
    """Resolve an incident with its cause (operators): stores its case; 200 with the incident."""

    permission_classes = [IsOperatorOrReadOnly]

    @extend_schema(request=s.ResolveInput, responses={200: IncidentDetailSerializer})
    def post(self, request, pk: int):
        incident = get_object_or_404(Incident, pk=pk)
        values = input_data(s.ResolveInput, request.data)
        try:
            with service_refusals():
                services.case_resolve(incident=incident, user=request.user, now=timezone.now(), **values)
        except ValueError as exc:
            return conflict(str(exc))
        incident = IncidentViewSet.queryset.prefetch_related(
            "members__finding__acknowledged_by", "events__user", "notifications"
        ).get(pk=pk)
        return Response(IncidentDetailSerializer(incident, context={"request": request}).data)


class IncidentNoteView(APIView):
    """An incident's notes and hypotheses (operators add them; the next e-mail of its thread carries them)."""

    permission_classes = [IsOperatorOrReadOnly]

    @extend_schema(responses={200: s.IncidentNoteSerializer(many=True)})
    def get(self, request, pk: int):
        incident = get_object_or_404(Incident, pk=pk)
        return Response(s.IncidentNoteSerializer(selectors.note_list(incident=incident), many=True).data)

    @extend_schema(request=s.NoteInput, responses={201: s.IncidentNoteSerializer})
    def post(self, request, pk: int):
        incident = get_object_or_404(Incident, pk=pk)
        values = input_data(s.NoteInput, request.data)
        with service_refusals():
            note = services.incident_note_create(incident=incident, user=request.user, now=timezone.now(), **values)
        return Response(s.IncidentNoteSerializer(note).data, status=status.HTTP_201_CREATED)


class CaseViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """The case memory: every incident resolved with its cause, newest first."""

    queryset = selectors.case_list()
    permission_classes = [IsOperatorOrReadOnly]
    serializer_class = s.CaseSerializer
