"""Inventory API: thin viewsets (netbox style). Authenticated users read; staff and operators write.

Paths and agents are written through the services: a path change creates a new version, an agent is
created with a token shown once. Deleting something still referenced (a site with paths, equipment on
a path) is refused with 409 and the reason.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import ProtectedError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response

from wanmon.core.api import input_data
from wanmon.core.permissions import IsOperator, IsOperatorOrReadOnly
from wanmon.inventory import selectors, services
from wanmon.inventory.api import filters
from wanmon.inventory.api import serializers as s
from wanmon.inventory.models import Agent, Carrier, Circuit, Equipment, Host, Interface, Path, Site, SiteContact, Trunk


def _validation_error(exc: DjangoValidationError) -> ValidationError:
    return ValidationError({"non_field_errors": exc.messages})


class _Conflict(APIException):
    """409: the request is valid but the current state forbids it (still referenced, already ended...)."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


class InventoryViewSet(viewsets.ModelViewSet):
    """CRUD with the inventory's permission and a 409 (not a 500) for deletions the database refuses."""

    permission_classes = [IsOperatorOrReadOnly]

    def perform_destroy(self, instance):
        try:
            instance.delete()
        except ProtectedError as exc:
            users = sorted({str(obj) for obj in exc.protected_objects})[:10]
            raise _Conflict(f"{instance} is still referenced by: {', '.join(users)}") from None


def _crud(queryset) -> type[InventoryViewSet]:
    """The plain CRUD viewset ``MViewSet`` of ``queryset``'s model ``M``, with this API's ``MSerializer`` and
    ``MFilterSet``."""
    name = queryset.model.__name__
    attrs = {
        "__module__": __name__,
        "__qualname__": f"{name}ViewSet",
        "queryset": queryset,
        "serializer_class": getattr(s, f"{name}Serializer"),
        "filterset_class": getattr(filters, f"{name}FilterSet"),
    }
    return type(f"{name}ViewSet", (InventoryViewSet,), attrs)


CarrierViewSet = _crud(Carrier.objects.all())
SiteViewSet = _crud(Site.objects.prefetch_related("contacts"))
SiteContactViewSet = _crud(SiteContact.objects.select_related("site"))
# People's addresses: operators only, to read as to change (docs/permissions.md).
SiteContactViewSet.permission_classes = [IsOperator]
HostViewSet = _crud(Host.objects.select_related("site"))
EquipmentViewSet = _crud(Equipment.objects.select_related("site", "carrier"))
InterfaceViewSet = _crud(Interface.objects.select_related("equipment").prefetch_related("trunks"))
CircuitViewSet = _crud(Circuit.objects.select_related("carrier", "a_interface__equipment", "z_interface__equipment"))
TrunkViewSet = _crud(Trunk.objects.prefetch_related("members__equipment"))


_PAIR = OpenApiParameter("pair", OpenApiTypes.STR, many=True, description="a direction: SRC,DST or SRC->DST")
# Site codes may contain '-', so a direction is written with ',' or '->' (or '>').
_PAIR_SEPARATORS = ("->", ">", ",")


class PathViewSet(InventoryViewSet):
    """Path versions. POST puts a route in force (a new version if it differs); PUT/PATCH on the version in
    force does the same for its site pair; DELETE ends the version in force (history is kept)."""

    queryset = Path.objects.select_related("src", "dst").prefetch_related(selectors.path_hops_prefetch())
    serializer_class = s.PathSerializer
    filterset_class = filters.PathFilterSet

    def _put_in_force(self, *, src, dst, data: dict) -> tuple[Path, services.Change]:
        extra = {k: data[k] for k in ("capacity_mbps", "rtt_ms", "note") if k in data}
        try:
            return services.path_set(src=src, dst=dst, hops=data["hops"], at=data.get("valid_from"), **extra)
        except DjangoValidationError as exc:
            raise _validation_error(exc) from None

    def _answer(self, path: Path, code: int) -> Response:
        return Response(s.PathSerializer(self.get_queryset().get(pk=path.pk)).data, status=code)

    @extend_schema(request=s.PathInputSerializer, responses={201: s.PathSerializer, 200: s.PathSerializer})
    def create(self, request, *args, **kwargs):
        """Put a route in force for ``src``->``dst``: 201 with the new version, 200 when it was already so."""
        v = input_data(s.PathInputSerializer, request.data)
        path, change = self._put_in_force(src=v["src"], dst=v["dst"], data=v)
        unchanged = change == services.Change.UNCHANGED
        return self._answer(path, status.HTTP_200_OK if unchanged else status.HTTP_201_CREATED)

    @extend_schema(request=s.PathUpdateSerializer, responses={200: s.PathSerializer})
    def update(self, request, *args, **kwargs):
        """Change the version in force: hops or capacity make a new version (returned, with its new id)."""
        current = self.get_object()
        if current.valid_to is not None:
            raise _Conflict("this version has ended; change the version in force")
        v = dict(input_data(s.PathUpdateSerializer, request.data, partial=kwargs.get("partial", False)))
        v.setdefault("hops", [(h.equipment, h.interface) for h in selectors.path_hops(current)])
        path, _ = self._put_in_force(src=current.src, dst=current.dst, data=v)
        return self._answer(path, status.HTTP_200_OK)

    @extend_schema(request=s.PathUpdateSerializer, responses={200: s.PathSerializer})
    def partial_update(self, request, *args, **kwargs):
        return self.update(request, *args, partial=True, **kwargs)

    def destroy(self, request, *args, **kwargs):
        """End the version in force now (204); its history stays."""
        path = self.get_object()
        try:
            services.path_close(path=path)
        except DjangoValidationError as exc:
            raise _Conflict("; ".join(exc.messages)) from None
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        parameters=[
            _PAIR,
            OpenApiParameter("at", OpenApiTypes.DATETIME),
            OpenApiParameter("min_paths", OpenApiTypes.INT),
            OpenApiParameter("direction_aware", OpenApiTypes.BOOL),
        ],
        responses={200: inline_serializer("SharedElement", {
            "kind": serializers.CharField(), "label": serializers.CharField(),
            "towards": serializers.CharField(allow_null=True), "position": serializers.IntegerField(),
            "paths": serializers.ListField(child=serializers.CharField()),
        }, many=True)},
    )
    @action(detail=False, methods=["get"], url_path="shared-elements")
    def shared_elements(self, request):
        """Elements shared by the given directions (``?pair=FZK,CERN&pair=CNAF,CERN``), in path order."""
        pairs = []
        for raw in request.query_params.getlist("pair"):
            sep = next((sep for sep in _PAIR_SEPARATORS if sep in raw), ",")
            src, _, dst = raw.partition(sep)
            if not src or not dst:
                raise ValidationError({"pair": [f"{raw!r}: expected SRC,DST or SRC->DST"]})
            pairs.append((src, dst))
        if not pairs:
            raise ValidationError({"pair": ["give at least one pair"]})
        params = input_data(s.SharedElementsParamsSerializer, request.query_params)
        elements = selectors.element_list_shared_by_paths(pairs=pairs, **params)
        return Response([
            {"kind": e.kind, "label": e.label, "towards": e.towards.name if e.towards else None,
             "position": e.position, "paths": [str(p) for p in e.paths]}
            for e in elements
        ])

    @extend_schema(responses={200: inline_serializer("PathElements", {
        "trunks": serializers.ListField(child=serializers.CharField()),
        "circuits": serializers.ListField(child=serializers.CharField()),
    })})
    @action(detail=True, methods=["get"])
    def elements(self, request, pk=None):
        """Trunks and circuits this path version crosses, in order."""
        path = self.get_object()
        return Response({
            "trunks": [t.name for t in selectors.trunk_list_on_path(path=path)],
            "circuits": [str(c) for c in selectors.circuit_list_on_path(path=path)],
        })


class AgentViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    """Site agents. Tokens are never readable: POST (create) and ``rotate-token`` return one, once."""

    permission_classes = [IsOperatorOrReadOnly]
    queryset = Agent.objects.select_related("site").prefetch_related("equipment")
    serializer_class = s.AgentSerializer
    filterset_class = filters.AgentFilterSet
    http_method_names = ["get", "post", "patch", "head", "options"]

    @extend_schema(request=s.AgentCreateSerializer, responses={201: s.AgentCreatedSerializer})
    def create(self, request, *args, **kwargs):
        """Register an agent; the answer carries its token, which is not stored and cannot be read again."""
        v = input_data(s.AgentCreateSerializer, request.data)
        try:
            agent, token = services.agent_create(
                site=v["site"], name=v.get("name"), equipment=v.get("equipment", []), scope=v["scope"]
            )
        except DjangoValidationError as exc:
            raise _validation_error(exc) from None
        body = dict(s.AgentSerializer(self.get_queryset().get(pk=agent.pk)).data, token=token)
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.AgentUpdateSerializer, responses={200: s.AgentSerializer})
    def partial_update(self, request, *args, **kwargs):
        """Replace the list of equipment the agent may poll."""
        agent = self.get_object()
        equipment = input_data(s.AgentUpdateSerializer, request.data)["equipment"]
        services.agent_assign_equipment(agent=agent, equipment=equipment, replace=True)
        return Response(s.AgentSerializer(self.get_queryset().get(pk=agent.pk)).data)

    @extend_schema(request=None, responses={200: s.AgentSerializer})
    @action(detail=True, methods=["post"])
    def revoke(self, request, pk=None):
        """Revoke the agent's token at once."""
        agent = services.agent_revoke(agent=self.get_object())
        return Response(s.AgentSerializer(self.get_queryset().get(pk=agent.pk)).data)

    @extend_schema(request=None, responses={200: s.TokenSerializer})
    @action(detail=True, methods=["post"], url_path="rotate-token")
    def rotate_token(self, request, pk=None):
        """Give the agent a new token (returned once); the old one stops working at once."""
        try:
            token = services.agent_token_rotate(agent=self.get_object())
        except DjangoValidationError as exc:
            raise _Conflict("; ".join(exc.messages)) from None
        return Response({"token": token})

