"""A small inventory whose perfSONAR hosts carry the addresses of the captured pScheduler runs."""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import shared_fixture
from wanmon.inventory.choices import HostRole
from wanmon.inventory.models import Agent, Host, Site
from wanmon.inventory.models import Path as InventoryPath
from wanmon.measurements.api.auth import token_hash

TOOLOUT = ("fixtures", "toolout")
REAL = ("fixtures", "pscheduler-real")  # real pScheduler results in the http archiver's envelope (its SOURCES.md)
ARCHIVER_FIXTURES = (
    "pscheduler-archiver-http-throughput-1.json",
    "pscheduler-archiver-http-latency-1.json",
    "pscheduler-archiver-http-rtt-1.json",
    "pscheduler-archiver-http-rtt-failed-1.json",
    "pscheduler-archiver-http-trace-1.json",
)


def toolout(name: str) -> Path:
    """A captured pScheduler document under ../shared (skips the test when absent)."""
    return shared_fixture(*TOOLOUT, name)


def load(name: str) -> dict:
    return json.loads(toolout(name).read_text())


def real_corpus() -> Path:
    """The folder of real pScheduler results under ../shared (skips the test when absent)."""
    return shared_fixture(*REAL)


def load_real(name: str) -> dict:
    return json.loads(shared_fixture(*REAL, name).read_text())


def make_agent(site: Site, name: str) -> tuple[Agent, str]:
    token = secrets.token_urlsafe(32)
    agent = Agent.objects.create(site=site, name=name, token_hash=token_hash(token), token_prefix=token[:8])
    return agent, token


def send(url: str, body: dict | bytes, headers: dict[str, str], method: str = "PUT") -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def archive_headers(token: str) -> dict[str, str]:
    # What the archive spec of docs/perfsonar.md makes pScheduler send.
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


@pytest.fixture
def ps_topo(db):
    """CERN (tier 0), FZK and RAL (tier 1); 192.168.1.104 is CERN's toolkit and 192.168.1.101 FZK's, as in the
    captured runs; paths CERN<->FZK, CERN<->RAL and FZK<->RAL."""
    cern = Site.objects.create(code="CERN", name="CERN", tier=0)
    fzk = Site.objects.create(code="FZK", name="KIT", tier=1)
    ral = Site.objects.create(code="RAL", name="RAL", tier=1)
    hosts = {
        "cern": Host.objects.create(site=cern, name="cern-ps01", address="192.168.1.104", role=HostRole.TEST),
        "fzk": Host.objects.create(site=fzk, name="fzk-ps01", address="192.168.1.101", role=HostRole.TEST),
        "ral": Host.objects.create(site=ral, name="ral-ps01", address="203.0.113.30", role=HostRole.TEST),
    }
    Host.objects.create(site=cern, name="cern-dt01", address="198.51.100.1", role=HostRole.TRANSFER)
    since = datetime(2026, 1, 1, tzinfo=UTC)
    for a, b in ((cern, fzk), (cern, ral), (fzk, ral)):
        InventoryPath.objects.create(src=a, dst=b, valid_from=since)
        InventoryPath.objects.create(src=b, dst=a, valid_from=since)
    cern_agent, cern_token = make_agent(cern, "cern-agent-1")
    ral_agent, ral_token = make_agent(ral, "ral-agent-1")
    return {
        "cern": cern, "fzk": fzk, "ral": ral, "hosts": hosts,
        "cern_agent": cern_agent, "cern_token": cern_token, "ral_agent": ral_agent, "ral_token": ral_token,
    }
