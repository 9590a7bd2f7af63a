"""Maintenance test fixtures: a small topology with circuits and a LAG, users by role, a real SMTP server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mail import Sink, send_through, smtp_server_fixture  # noqa: F401 - the fixture smtp_server
from wanmon.inventory.topology import topology_import_file

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
BCOP = FIXTURES / "bcop"
CARRIERS = FIXTURES / "carriers"
TOPOLOGY = FIXTURES / "topology.yaml"
ROOT = HERE.parents[1]
SCENARIOS = ROOT / "tests" / "scenarios"


@pytest.fixture
def topology(db):
    """The test topology (fixtures/topology.yaml) in the database."""
    return topology_import_file(TOPOLOGY)


@pytest.fixture
def smtp(smtp_server, settings) -> Sink:
    """Django sends through its real SMTP backend to the loopback server."""
    sink, port = smtp_server
    sink.clear()
    send_through(settings, port)
    settings.WANMON_MAINTENANCE_NOTICE_LEAD_HOURS = 48
    settings.WANMON_MAINTENANCE_NOTICE_ROLES = ["maintenance", "noc"]
    return sink
