"""Fixtures of the inventory tests: the two example scenarios of the corpus, the LHC topology, users in each role."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from wanmon.core.permissions import OPERATOR_GROUP, VIEWER_GROUP
from wanmon.inventory.models import Agent, Carrier, Circuit, Equipment, Host, Interface, Site, SiteContact, Trunk
from wanmon.inventory.models import Path as PathModel
from wanmon.inventory.topology import topology_import_file

ROOT = Path(__file__).resolve().parents[2]
# The two example scenarios of docs/scenario-format.md, part of the diagnosis corpus (tests/scenarios/).
SCENARIOS_DIR = ROOT / "tests" / "scenarios"
REVERSE_PATH_LOSS = SCENARIOS_DIR / "reverse-path-loss-fzk.yaml"
WINDOW_LIMITED = SCENARIOS_DIR / "window-limited-asgc.yaml"
EXAMPLE_FILES = [REVERSE_PATH_LOSS, WINDOW_LIMITED]
LHC_TOPOLOGY = ROOT / "wanmon" / "demo" / "data" / "lhc-topology.yaml"


def example_topology(path: Path = REVERSE_PATH_LOSS) -> dict:
    """A deep copy of a scenario file's topology block, to mutate in a test."""
    return copy.deepcopy(yaml.safe_load(path.read_text())["topology"])


def inventory_counts() -> dict[str, int]:
    """Rows per inventory table: a cheap fingerprint of "nothing changed"."""
    models = [Carrier, Site, SiteContact, Host, Equipment, Interface, Circuit, Trunk, PathModel, Agent]
    return {m.__name__: m.objects.count() for m in models}


def inventory_wipe() -> None:
    """Empty the inventory (in an order the PROTECT foreign keys accept)."""
    for model in (Agent, PathModel, Circuit, Trunk, Interface, Equipment, Host, SiteContact, Site, Carrier):
        model.objects.all().delete()


@pytest.fixture
def reverse_path_loss(db):
    return topology_import_file(REVERSE_PATH_LOSS)


@pytest.fixture
def lhc(db):
    return topology_import_file(LHC_TOPOLOGY)


def _user_fixture(fixture: str, username: str, *, group: str | None = None, staff: bool = False,
                  superuser: bool = False):  # fmt: skip
    """A fixture giving the user ``username`` in one role: a member of ``group``, staff or superuser."""

    @pytest.fixture(name=fixture)
    def user(django_user_model):
        # No password: the tests log in with force_login/force_authenticate, and hashing one costs half a second.
        created = django_user_model.objects.create_user(username, is_staff=staff or superuser, is_superuser=superuser)
        if group:
            created.groups.add(Group.objects.get(name=group))
        return created

    return user


viewer = _user_fixture("viewer", "viewer", group=VIEWER_GROUP)
operator = _user_fixture("operator", "operator", group=OPERATOR_GROUP)
staff = _user_fixture("staff", "staffer", staff=True)
superuser = _user_fixture("superuser", "root", superuser=True)


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client
