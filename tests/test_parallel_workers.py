"""The suite's parallel workers keep out of each other's way on the services they share (tests/conftest.py)."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import pytest
from django.conf import settings

from tests.conftest import REDIS_DBS_PER_WORKER, redis_url_of_worker, worker_index
from tests.e2e.chain_harness import private_redis_url


def _db(url: str) -> int:
    return int(urlsplit(url).path.strip("/") or 0)


def test_each_worker_has_its_own_block_of_redis_databases():
    own = worker_index() * REDIS_DBS_PER_WORKER
    # the cache, the broker its Celery worker listens to and the results all on the worker's own database
    assert _db(settings.REDIS_URL) == own
    assert _db(settings.CACHES["default"]["LOCATION"]) == own
    assert _db(os.environ["REDIS_URL"]) == own  # what the processes it starts inherit
    if "CELERY_BROKER_URL" not in os.environ:
        from wanmon.celery import app

        assert _db(app.conf.broker_url) == own
    # the brokers its harnesses give the centres they start: in its block, never another worker's
    assert {_db(private_redis_url()), _db(private_redis_url(2))} <= set(range(own + 1, own + REDIS_DBS_PER_WORKER))
    with pytest.raises(ValueError, match="databases 0-3"):
        redis_url_of_worker(REDIS_DBS_PER_WORKER)
