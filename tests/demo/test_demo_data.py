"""`manage.py demo_data` loads the LHC topology, idempotently."""

import pytest
from django.core.management import call_command

from wanmon.inventory.models import Path, Site

pytestmark = pytest.mark.django_db


def test_demo_data_loads_the_lhc_topology_once(capsys):
    call_command("demo_data")
    out = capsys.readouterr().out
    assert "sites: 12 created, 0 updated, 0 unchanged" in out
    assert "paths: 22 created, 0 updated, 0 unchanged" in out
    assert Site.objects.filter(tier=1).count() == 11

    call_command("demo_data")
    out = capsys.readouterr().out
    assert "paths: 0 created, 0 updated, 22 unchanged" in out
    assert Path.objects.count() == 22
