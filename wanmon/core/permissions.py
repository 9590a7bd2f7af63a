"""Roles and the API permissions every endpoint uses (docs/permissions.md says who may read and write what).

Two Django groups carry the roles (created by migration core/0002_roles):

- ``viewer`` (and any account in no role group): reads the measurements, the diagnosis, incidents, maintenance
  and the topology, but no contact data: people's and carriers' e-mail addresses (site contacts, carrier NOC
  addresses, alert recipients, the sent-mail logs, maintenance organizers and senders). Accounts go to other
  institutes' staff, and an address list of every NOC is worth protecting.
- ``operator``: also reads the contact data and changes the inventory, maintenance and alert state.

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


def user_reads_contacts(user) -> bool:
    """Whether ``user`` may read contact data (e-mail addresses of people and carriers, sent-mail logs): operators."""
    return user_is_operator(user)


class IsOperator(BasePermission):
    """Staff or the operator group, for reading too (contact data, toolkit bodies) as for writing."""

    message = "needs staff status or membership of the 'operator' group"

    def has_permission(self, request, view) -> bool:
        return user_is_operator(request.user)


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
