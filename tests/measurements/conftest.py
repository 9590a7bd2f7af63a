"""A small real topology and agents for the measurement tests."""

import secrets
from datetime import UTC, datetime

import pytest

from wanmon.inventory.models import Agent, Carrier, Equipment, Interface, Site
from wanmon.measurements.api.auth import token_hash

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def make_agent(site: Site, name: str, equipment=()) -> tuple[Agent, str]:
    token = secrets.token_urlsafe(32)
    agent = Agent.objects.create(site=site, name=name, token_hash=token_hash(token), token_prefix=token[:8])
    agent.equipment.set(equipment)
    return agent, token


@pytest.fixture
def topo(db):
    geant = Carrier.objects.create(code="GEANT", name="GEANT")
    cern = Site.objects.create(code="CERN", name="CERN", tier=0)
    fzk = Site.objects.create(code="FZK", name="KIT", tier=1)
    ral = Site.objects.create(code="RAL", name="RAL", tier=1)
    border = Equipment.objects.create(name="cern-border", site=cern)
    par = Equipment.objects.create(name="geant-par", carrier=geant)
    xe = Interface.objects.create(equipment=par, name="xe-1/0/0", if_index=501, speed_mbps=10000, mtu=9000)
    cern_agent, cern_token = make_agent(cern, "cern-agent-1", [border, par])
    ral_agent, ral_token = make_agent(ral, "ral-agent-1")
    return {
        "cern": cern, "fzk": fzk, "ral": ral, "border": border, "par": par, "xe": xe,
        "cern_agent": cern_agent, "cern_token": cern_token, "ral_agent": ral_agent, "ral_token": ral_token,
    }
