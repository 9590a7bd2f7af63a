"""Roles and the API permission every inventory (and later) endpoint uses.

Two Django groups carry the roles (created by migration core/0002_roles):

- ``viewer``: may read everything (the same as any authenticated user; the group documents intent);
- ``operator``: may also change the inventory, maintenance and alert state through the API.

Staff users (``is_staff``) may do everything an operator may.
"""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

OPERATOR_GROUP = "operator"
VIEWER_GROUP = "viewer"
ROLE_GROUPS = (OPERATOR_GROUP, VIEWER_GROUP)


def user_is_operator(user) -> bool:
    """Whether ``user`` may change things: active staff, or a member of the operator group."""
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    if user.is_staff or user.is_superuser:
        return True
    return user.groups.filter(name=OPERATOR_GROUP).exists()


class IsOperatorOrReadOnly(BasePermission):
    """Authenticated users read; writes need staff or the operator group."""

    message = "changing this needs staff status or membership of the 'operator' group"

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if request.method in SAFE_METHODS:
            return True
        return user_is_operator(user)
