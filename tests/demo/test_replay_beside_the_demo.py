"""A corpus scenario replayed into the demo's own database (``scripts/manage replay FILE --keep``, which runs against
the demo's database unless DATABASE_URL says otherwise) beside the live LHC network.

The corpus file reverse-path-loss-fzk.yaml has its own CERN<->FZK: 1 Gb/s over hops without ports, where the demo's
is 100 Gb/s. Imported as of the real now, its route became the version in force of the live FZK->CERN, and the
beat's next cycles judged the demo's measurements with it: the incident e-mails said 'capacity 1 Gb/s', 'BDP 1.12 MB'
and '900 Mb/s needs loss below 6.1e-04' for the path the dashboard shows at 100 Gb/s and 112 MB. A replay adds its
network to the inventory and never re-routes the one in force: it is refused, naming the path.
"""

from __future__ import annotations

import uuid
from datetime import UTC
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from agents.adapters import build_collectors
from agents.config import load_config
from wanmon.alerts.emails import figures_text
from wanmon.diagnosis.choices import ACTIVE_STATUSES
from wanmon.diagnosis.models import Finding
from wanmon.diagnosis.shards import diagnosis_cycle_run
from wanmon.inventory.models import Agent
from wanmon.inventory.models import Path as PathVersion
from wanmon.measurements.ingest import batch_ingest
from wanmon.measurements.services import measurements_process

ROOT = Path(__file__).resolve().parents[2]
CORPUS_FZK = ROOT / "tests" / "scenarios" / "reverse-path-loss-fzk.yaml"


def _demo_backfill(directory: Path) -> None:
    """What scripts/demo does before its beat's cycles: the LHC topology, the simulated agents, and the first run of
    the CERN and FZK agents (48 hours of their measurements ending now) through the ingest as those agents."""
    call_command("demo_data", stdout=StringIO())
    call_command("demo_agents", "--dir", str(directory), "--url", "http://127.0.0.1:8000", stdout=StringIO())
    now = timezone.now().astimezone(UTC)
    since = {}
    for site in ("CERN", "FZK"):
        config = load_config(directory / f"{site}.toml")
        (collector,) = build_collectors(config)
        result = batch_ingest(
            batch_id=str(uuid.uuid4()), records=collector.collect(now), agent=Agent.objects.get(name=config.agent.name)
        )
        for iid, t in result.interface_since.items():
            since[iid] = min(t, since.get(iid, t))
    measurements_process(interface_since=since)


def _replay(*args) -> tuple[int, str]:
    err = StringIO()
    try:
        call_command("replay", *map(str, args), stdout=StringIO(), stderr=err)
    except SystemExit as exc:
        return int(exc.code), err.getvalue()
    return 0, err.getvalue()


@pytest.mark.integration
@pytest.mark.django_db
def test_a_corpus_replay_into_the_demos_database_leaves_the_live_capacities_to_its_cycles(tmp_path):
    _demo_backfill(tmp_path / "demo-agents")

    # an operator looks at a corpus case with the documented command, against the demo's database
    code, err = _replay(CORPUS_FZK, "--keep", "--step", "60")

    # the beat's next cycle judges the demo's FZK->CERN at the capacity of the demo's inventory
    diagnosis_cycle_run(now=timezone.now())
    fzk_cern = {
        f.code: f for f in Finding.objects.filter(status__in=ACTIVE_STATUSES, subject__src="FZK", subject__dst="CERN")
    }
    assert {"LOSS_LIMITED", "ASYMMETRIC_PATH"} <= set(fzk_cern)
    for finding in fzk_cern.values():
        derived = finding.evidence["derived"]
        assert derived["capacity_bps"] == 100e9, (finding.code, derived)
        # what the incident e-mail says of the path (wanmon/alerts/emails.py)
        figures = figures_text(derived)
        assert (figures[0], figures[2]) == ("capacity 100 Gb/s", "BDP 112 MB"), (finding.code, figures)
    assert "90 Gb/s needs loss below 6.1e-08" in fzk_cern["LOSS_LIMITED"].summary

    # the replay was refused, saying why, and left the inventory as it was
    assert code == 2, err
    assert "FZK->CERN: 1000 Mb/s over fzk-border, dfn-fra, geant-fra, geant-gva, cern-border would replace" in err
    assert "a replay does not replace the routes in force of this database" in err
    versions = PathVersion.objects.filter(src__code="FZK", dst__code="CERN")
    assert [(v.capacity_mbps, v.valid_to) for v in versions] == [(100_000, None)]
