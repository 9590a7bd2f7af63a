"""`manage.py replay` of a scenario whose SNMP records carry what the collector reports (float speed_mbps,
no sysUpTime) goes through the real ingest: the replay used to fail on the bigint column like the agent did."""

from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

pytestmark = pytest.mark.django_db
CASE9 = Path(__file__).resolve().parents[1] / "scenarios" / "case9-counter-wrap-and-reboot.yaml"


def test_replay_of_snmp_records_with_float_speeds_passes_its_check(tmp_path):
    scenario = yaml.safe_load(CASE9.read_text())
    snmp = [m for m in scenario["measurements"] if m["type"] == "snmp"]
    for record in snmp:
        record["speed_mbps"] = 10000.0  # ifHighSpeed as the collector reports it
    snmp[0]["speed_mbps"] = 2.048  # an E1's ifSpeed / 1e6
    path = tmp_path / "case9-float-speeds.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))

    out, err = StringIO(), StringIO()
    call_command("replay", str(path), "--check", "--step", "auto", stdout=out, stderr=err)

    assert "check passed" in err.getvalue(), out.getvalue() + err.getvalue()
    assert len(snmp) > 10
