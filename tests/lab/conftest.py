"""Fixtures of the lab tests: one centre (gunicorn over HTTPS and a Celery worker on the test database) for every
lab module of a run, started once (its start-up is a good part of the lab's time)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="package")
def centre(django_db_setup, django_db_blocker, tmp_path_factory):
    """gunicorn over HTTPS and a Celery worker on the test database (the e2e harness' pieces)."""
    from tests.agents.conftest import issue_server_certificate, make_ca
    from tests.e2e.chain_harness import Centre, Worker, database_url_for_subprocesses, private_redis_url
    from tests.lab import netns
    from tests.lab.harness import leftover_namespaces

    for leftover in leftover_namespaces():
        netns.delete(leftover)
    work = tmp_path_factory.mktemp("lab")
    os.chmod(work, 0o755)
    ca = make_ca("lab test CA")
    ca_file = ca.write(work / "ca.pem")
    certificate, key = issue_server_certificate(ca, work, stem="centre")
    started = []
    with django_db_blocker.unblock():
        env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND")}
        env.update(DATABASE_URL=database_url_for_subprocesses(), REDIS_URL=private_redis_url(2),
                   WANMON_LOG_LEVEL="WARNING")  # fmt: skip
        try:
            server = Centre(certificate=certificate, key=key, ca_file=ca_file, env=env, log_dir=work)
            started.append(server)
            worker = Worker(env=env, log_dir=work)
            started.append(worker)
            server.wait_ready()
            worker.wait_ready()
            yield {"url": server.url, "ca_file": ca_file, "work": work}
        finally:
            for part in reversed(started):
                part.stop()
