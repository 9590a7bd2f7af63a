"""The helpers the apps share: one token hash, one way to write a choice set, one finding and incident lifecycle,
one Mb/s to bit/s."""

from __future__ import annotations

import hashlib
import pickle

from wanmon.alerts.choices import ACTIVE_INCIDENT_STATUSES, IncidentStatus
from wanmon.core.choices import text_choices
from wanmon.core.tokens import token_hash
from wanmon.core.units import bps_from_mbps
from wanmon.diagnosis.choices import ACTIVE_STATUSES, FindingStatus
from wanmon.inventory.services import agent_token_hash
from wanmon.maintenance.choices import Impact, Status
from wanmon.maintenance.feeds import feed_token_hash
from wanmon.measurements.api.auth import token_hash as ingest_token_hash
from wanmon.perfsonar.selectors import token_hash as psconfig_token_hash


def test_every_token_is_stored_as_the_same_sha256():
    token = "wanmon-agent-token-0123456789"
    assert {agent_token_hash, feed_token_hash, ingest_token_hash, psconfig_token_hash} == {token_hash}
    assert token_hash(token) == hashlib.sha256(token.encode()).hexdigest()


def test_text_choices_names_members_after_their_values():
    Colour = text_choices("Colour", {"dark-red": "Dark red", "blue": "Blue"}, doc="Colours.")
    assert [m.name for m in Colour] == ["DARK_RED", "BLUE"]
    assert Colour.choices == [("dark-red", "Dark red"), ("blue", "Blue")]
    assert Colour.__doc__ == "Colours." and Colour.__module__ == __name__
    assert Status.IN_PROCESS == "in-process" and Status.IN_PROCESS.label == "In process"
    assert pickle.loads(pickle.dumps(Impact.NO_IMPACT)) is Impact.NO_IMPACT


def test_findings_and_incidents_share_one_lifecycle():
    assert IncidentStatus is FindingStatus and ACTIVE_INCIDENT_STATUSES == ACTIVE_STATUSES
    assert FindingStatus.choices == [("open", "Open"), ("acknowledged", "Acknowledged"), ("resolved", "Resolved")]


def test_a_speed_in_mbps_is_bps_and_zero_or_null_is_unknown():
    assert bps_from_mbps(2.048) == 2_048_000 and bps_from_mbps(10_000) == 1e10
    assert bps_from_mbps(0) is None and bps_from_mbps(None) is None
