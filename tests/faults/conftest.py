"""Fixtures of the fault-injection tests: a registered agent with its equipment, the centre's environment."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import pytest

INTERFACES = [f"xe-0/0/{k}" for k in range(4)]


@dataclass
class Registered:
    """A site, one router its agent may poll, the router's interfaces (name -> id) and the agent's token."""

    token: str
    equipment: str
    interfaces: dict[str, int]


@pytest.fixture
def registered(transactional_db) -> Registered:
    from wanmon.inventory.models import Agent, Equipment, Interface, Site
    from wanmon.measurements.api.auth import token_hash

    site = Site.objects.create(code="RAL", name="RAL", tier=1)
    router = Equipment.objects.create(name="ral-border", site=site)
    interfaces = {
        name: Interface.objects.create(equipment=router, name=name, if_index=k + 1, speed_mbps=10_000).id
        for k, name in enumerate(INTERFACES)
    }
    token = secrets.token_urlsafe(32)
    agent = Agent.objects.create(site=site, name="ral-agent", token_hash=token_hash(token), token_prefix=token[:8])
    agent.equipment.set([router])
    return Registered(token=token, equipment=router.name, interfaces=interfaces)
