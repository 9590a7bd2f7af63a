"""System checks of the maintenance settings (``manage.py check``; also run before migrate and runserver)."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.core.checks import Error, register


@register()
def fetch_allow_nets_check(app_configs, **kwargs) -> list[Error]:
    """Every entry of WANMON_FETCH_ALLOW_NETS is a network: a typo would silently allow nothing."""
    errors = []
    for entry in settings.WANMON_FETCH_ALLOW_NETS or ():
        try:
            ipaddress.ip_network(str(entry).strip(), strict=False)
        except ValueError:
            errors.append(Error(f"WANMON_FETCH_ALLOW_NETS: {entry!r} is not a network", hint="e.g. 10.20.0.0/16",
                                id="maintenance.E001"))
    return errors
