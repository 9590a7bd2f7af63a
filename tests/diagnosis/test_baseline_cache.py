"""The cycle's baseline cache names its database: two deployments on one Redis (staging beside production, a replay
database beside the live one) never read each other's baselines, keyed as they are by path ids and hour."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from wanmon.settings import cache_key_prefix

ROOT = Path(__file__).resolve().parents[2]

# baselines_cached in a fresh interpreter whose settings read DATABASE_URL: the summary computed is labelled with
# who computed it, so a value read from the cache says whose it was.
RUN = """
import sys
from datetime import UTC, datetime, timedelta
import django
django.setup()
from wanmon.diagnosis.selectors import baselines
label, path_id = sys.argv[1], int(sys.argv[2])
baselines.baseline_summaries = lambda keys, start, end: {k: label for k in keys}
end = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)
print(baselines.baselines_cached([(path_id, path_id + 1)], end - timedelta(days=7), end)[(path_id, path_id + 1)])
"""


def _baseline(database: str, label: str, path_id: int, **env: str) -> str:
    """The baseline of path (path_id, path_id + 1) as a process of the deployment on ``database`` reads it (the
    same Redis as the tests: REDIS_URL is inherited)."""
    base = {k: v for k, v in os.environ.items() if k != "WANMON_CACHE_PREFIX"}
    env = {**base, "DJANGO_SETTINGS_MODULE": "wanmon.settings",
           "DATABASE_URL": f"postgres://postgres@db.example.net:5432/{database}", **env}
    result = subprocess.run([sys.executable, "-c", RUN, label, str(path_id)], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def test_two_databases_on_one_redis_do_not_read_each_others_baselines():
    path_id = uuid.uuid4().int % 10**9  # a key no other run of the suite wrote
    # given: staging computed and cached the baseline of its path (path_id, path_id + 1) for this hour
    assert _baseline("wanmon_staging", "staging's", path_id) == "staging's"
    # when: production, on the same Redis, needs the baseline of its own path with the same ids
    # then: it computes its own instead of taking staging's
    assert _baseline("wanmon", "production's", path_id) == "production's"
    # and each reads its own from the cache afterwards
    assert _baseline("wanmon_staging", "not cached", path_id) == "staging's"
    assert _baseline("wanmon", "not cached", path_id) == "production's"


def test_an_explicit_cache_prefix_names_the_deployment_whatever_its_database():
    path_id = uuid.uuid4().int % 10**9
    assert _baseline("wanmon", "blue's", path_id, WANMON_CACHE_PREFIX="blue") == "blue's"
    assert _baseline("wanmon", "green's", path_id, WANMON_CACHE_PREFIX="green") == "green's"
    assert _baseline("wanmon", "not cached", path_id, WANMON_CACHE_PREFIX="blue") == "blue's"


def test_the_prefix_names_the_database_host_port_and_name(monkeypatch):
    monkeypatch.delenv("WANMON_CACHE_PREFIX", raising=False)
    live = {"HOST": "db.example.net", "PORT": 5432, "NAME": "wanmon"}
    prefixes = {cache_key_prefix(db) for db in (live, {**live, "HOST": "db2.example.net"}, {**live, "PORT": 5433},
                                                {**live, "NAME": "wanmon_replay"})}
    assert len(prefixes) == 4
    assert cache_key_prefix(live) == "wanmon@db.example.net:5432/wanmon"
