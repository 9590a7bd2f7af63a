"""Share API: an operator makes, lists and revokes an incident's links for a carrier."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from wanmon.alerts.models import Incident
from wanmon.core.api import conflict, input_data, service_refusals
from wanmon.core.permissions import IsOperator
from wanmon.sharing import services
from wanmon.sharing.api import serializers as s
from wanmon.sharing.constants import ACCESS_LIST_MAX
from wanmon.sharing.selectors import share_link_list


class IncidentShareView(APIView):
    """``POST``: a new link for a carrier (201 ``{url, expires_at}``); ``DELETE`` with its ``url``: revoked (204);
    ``GET``: the incident's links with their latest accesses. Operators only: a link hands evidence outside."""

    permission_classes = [IsOperator]

    def _incident(self, pk: int) -> Incident:
        return get_object_or_404(Incident, pk=pk)

    @extend_schema(responses={200: s.ShareLinkSerializer(many=True)})
    def get(self, request, pk: int):
        incident = self._incident(pk)
        links = list(share_link_list(incident_id=incident.pk))
        for link in links:
            link.recent_accesses = list(link.accesses.order_by("-time", "-id")[:ACCESS_LIST_MAX])
        return Response(s.ShareLinkSerializer(links, many=True).data)

    @extend_schema(request=s.ShareCreateInput, responses={201: s.ShareCreated})
    def post(self, request, pk: int):
        incident = self._incident(pk)
        values = input_data(s.ShareCreateInput, request.data)
        try:
            with service_refusals():
                link, url = services.share_link_create(incident=incident, carrier=values["carrier"],
                                                       days=values["days"], now=timezone.now(), user=request.user)
        except services.ShareRefused as exc:
            return conflict(str(exc), exc.field)
        return Response(s.ShareCreated({"url": url, "expires_at": link.expires_at}).data,
                        status=status.HTTP_201_CREATED)

    @extend_schema(request=s.ShareRevokeInput, responses={204: None})
    def delete(self, request, pk: int):
        incident = self._incident(pk)
        data = request.data if request.data else request.query_params
        values = input_data(s.ShareRevokeInput, data)
        try:
            services.share_link_revoke(incident=incident, url=values["url"], now=timezone.now(), user=request.user)
        except ValidationError as exc:
            return Response({"errors": [{"path": "url", "message": "; ".join(exc.messages)}]},
                            status=status.HTTP_404_NOT_FOUND)
        return Response(status=status.HTTP_204_NO_CONTENT)
