"""What the apps' REST views share around the one service they call: the request validated by its input serializer,
the service's refusal as a 400 that names the fields, a state that forbids the change as a 409; and how a
serializer shows the user who did something."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from wanmon.core.permissions import user_reads_contacts


def input_data(serializer_class: type[serializers.Serializer], data, **kwargs) -> dict:
    """``data`` validated by ``serializer_class`` (a 400 naming the fields otherwise)."""
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


@contextmanager
def service_refusals() -> Iterator[None]:
    """Inside, a service's ValidationError is answered as DRF's: 400 with the fields it names (``__all__`` for
    the service's own checks, ``non_field_errors`` when it names none)."""
    try:
        yield
    except DjangoValidationError as exc:
        raise ValidationError(serializers.as_serializer_error(exc)) from None


def conflict(message: str, path: str = "status") -> Response:
    """409: the request is valid, but the current state forbids it (already resolved, already ended...)."""
    return Response({"errors": [{"path": path, "message": message}]}, status=status.HTTP_409_CONFLICT)


def username_field(user: str) -> serializers.CharField:
    """A read-only field that shows the user in the instance's attribute ``user`` by username (null for none:
    the system acted, or the account was deleted)."""
    return serializers.CharField(source=f"{user}.username", default=None, read_only=True, allow_null=True)


class ContactFieldsMixin:
    """A serializer that leaves out ``Meta.contact_fields`` (e-mail addresses of people and carriers, sent-mail
    logs) unless the context's request is an operator's (``user_reads_contacts``). Without a request they are left
    out too: a view that forgets to pass it shows less, never more."""

    def to_representation(self, instance):
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is not None and not hasattr(request, "_reads_contacts"):  # once per request, not once per row
            request._reads_contacts = user_reads_contacts(request.user)
        if request is None or not request._reads_contacts:
            for name in getattr(self.Meta, "contact_fields", ()):
                data.pop(name, None)
        return data
