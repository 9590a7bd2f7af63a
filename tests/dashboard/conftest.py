"""Fixtures of the dashboard tests: replayed scenario data and users with each role."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from tests.dashboard import scenario_ral

PASSWORD = "dashboard-test-pass-1"


@pytest.fixture
def ral_data(db, tmp_path):
    """The CERN <-> RAL scenario (trunk, counters, maintenance, route change) replayed with --keep: production's
    cycle every 30 minutes, as often as its throughput tests run (the pages show what the cycles left; the
    corpus tests run every file at its own shortest interval)."""
    call_command("replay", str(scenario_ral.write(tmp_path)), "--keep", "--step", "30", stdout=io.StringIO())
    return scenario_ral


def _user(django_user_model, name: str, group: str | None):
    user = django_user_model.objects.create_user(name, password=PASSWORD)
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def operator(db, django_user_model):
    return _user(django_user_model, "noc-operator", "operator")


@pytest.fixture
def viewer(db, django_user_model):
    return _user(django_user_model, "noc-viewer", "viewer")
