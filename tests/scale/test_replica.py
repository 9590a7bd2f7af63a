"""The read replica: with DATABASE_REPLICA_URL set, the dashboard's and the query API's reads go to the
``replica`` alias and writes, log-in and sessions to the primary. A second alias on the test database stands in
for the replica (a separate process: the database aliases are fixed when Django starts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from tests.conftest import ROOT
from wanmon.inventory.models import Site

pytestmark = pytest.mark.django_db(transaction=True)

PROBE = r"""
import json, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wanmon.settings")
import django
django.setup()
from django.contrib.auth import get_user_model
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext

client = Client(HTTP_HOST="127.0.0.1")
client.force_login(get_user_model().objects.get(username="noc"))
out = {"aliases": sorted(connections.settings)}
QUERY = "/api/v1/query?metric=loss_fraction&start=2026-01-01T00:00:00Z&end=2026-01-02T00:00:00Z"
for name, method, url in (("overview", "get", "/"), ("query", "get", QUERY), ("sites_api", "get", "/api/v1/sites/"),
                          ("timezone", "post", "/preferences/")):
    with CaptureQueriesContext(connections["default"]) as primary, \
            CaptureQueriesContext(connections["replica"]) as replica:
        status = getattr(client, method)(url).status_code
    out[name] = {"status": status, "primary": [q["sql"][:600] for q in primary.captured_queries],
                 "replica": [q["sql"][:600] for q in replica.captured_queries]}
print("PROBE" + json.dumps(out))
"""


def test_reads_of_pages_and_apis_go_to_the_replica_writes_and_sessions_to_the_primary():
    get_user_model().objects.create_user("noc", password="x")
    Site.objects.create(code="CERN", name="CERN", region="Europe", tier=0)
    db = settings.DATABASES["default"]
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env = dict(os.environ, DATABASE_URL=url, DATABASE_REPLICA_URL=url, WANMON_LOG_LEVEL="WARNING")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.split("PROBE", 1)[1])
    assert out["aliases"] == ["default", "replica"]
    for name in ("overview", "query", "sites_api"):
        assert out[name]["status"] == 200, (name, out[name])
        assert out[name]["replica"], f"{name}: nothing read from the replica"
        # the primary only serves the session and the user (read right after a log-in)
        # (and the user's time zone, read by a middleware before the request is routed: right after a change)
        other = [q for q in out[name]["primary"]
                 if not any(t in q for t in ("django_session", '"auth_', "statement_timeout", "axes_",
                                             "dashboard_userpreference"))
                 and q.split(" ", 1)[0] not in ("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "ROLLBACK")]
        assert other == [], (name, other)
    assert any("inventory_site" in q for q in out["overview"]["replica"])
    assert any("measurements_owamptest" in q for q in out["query"]["replica"])
    # a POST is not routed: everything it reads and writes is on the primary
    assert out["timezone"]["replica"] == []


def test_without_a_replica_there_is_one_alias():
    assert "replica" not in settings.DATABASES
    from wanmon.core.dbrouter import read_alias, replica_reads

    with replica_reads():
        assert read_alias() == "default"
