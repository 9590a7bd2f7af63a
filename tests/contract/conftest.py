"""The centre's side of the contract tests: two sites, and the agent of one of them with a real token."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import pytest

from wanmon.inventory.models import Agent, Equipment, Site
from wanmon.measurements.api.auth import token_hash


@dataclass
class Centre:
    """CERN's agent (``token``) measures towards FZK; SNMP equipment is registered with ``equipment()``."""

    agent: Agent
    token: str
    site: Site
    far: Site

    def equipment(self, name: str) -> Equipment:
        """Equipment of the agent's site, assigned to the agent (it may send its SNMP samples)."""
        equipment, _ = Equipment.objects.get_or_create(name=name, defaults={"site": self.site})
        self.agent.equipment.add(equipment)
        return equipment


@pytest.fixture
def centre(db, settings) -> Centre:
    # The property tests post a few hundred batches a minute: more than an agent's normal rate limit.
    settings.WANMON_INGEST_RATE_LIMIT = "100000/min"
    cern = Site.objects.create(code="CERN", name="CERN", tier=0)
    fzk = Site.objects.create(code="FZK", name="KIT", tier=1)
    token = secrets.token_urlsafe(32)
    agent = Agent.objects.create(site=cern, name="cern-agent-1", token_hash=token_hash(token), token_prefix=token[:8])
    return Centre(agent=agent, token=token, site=cern, far=fzk)
