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
