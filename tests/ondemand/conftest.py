"""Fixtures of the tests on demand: two sites joined by a path through one carrier router, an agent at CERN with its
token, FZK's registered test host, an operator and a viewer on the API."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient


@dataclass
class Pair:
    """CERN and FZK, CERN's agent (and its token), FZK's test host address."""

    cern: object
    fzk: object
    agent: object
    token: str
    fzk_host: str


def make_pair(*, fzk_host: str = "192.0.2.10", capacity_mbps: int = 10_000) -> Pair:
    from wanmon.core.tokens import token_hash
    from wanmon.inventory.models import Agent, Carrier, Equipment, Host, Path, PathHop, Site

    cern = Site.objects.create(code="CERN", name="CERN", tier=0)
    fzk = Site.objects.create(code="FZK", name="KIT GridKa", tier=1)
    geant = Carrier.objects.create(code="GEANT", name="GEANT")
    router = Equipment.objects.create(name="geant-fra", carrier=geant)
    since = datetime(2020, 1, 1, tzinfo=UTC)
    for a, b in ((cern, fzk), (fzk, cern)):
        path = Path.objects.create(src=a, dst=b, capacity_mbps=capacity_mbps, valid_from=since)
        PathHop.objects.create(path=path, position=1, equipment=router)
    Host.objects.create(site=fzk, name="fzk-dt01", address=fzk_host)
    token = secrets.token_urlsafe(32)
    agent = Agent.objects.create(site=cern, name="cern-agent", token_hash=token_hash(token), token_prefix=token[:8])
    return Pair(cern=cern, fzk=fzk, agent=agent, token=token, fzk_host=fzk_host)


@pytest.fixture
def pair(db) -> Pair:
    return make_pair()




@pytest.fixture
def api_agent(pair) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {pair.token}")
    return client
