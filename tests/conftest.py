"""Shared fixtures: real services only (PostgreSQL+TimescaleDB, Redis, a Celery worker process)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def shared_fixture(*parts: str) -> Path:
    """A path under ../shared (the specification beside the repository), or skip the calling test.

    Third-party data (captured tool output, router walks, the pSConfig schema) stays outside the repository:
    a clone alone skips the tests that read it, saying what is absent, and still runs everything else.
    """
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"data kept outside the repository is missing (../{path.relative_to(ROOT.parent)} absent)")
    return path


def subprocess_database_url() -> str:
    """DATABASE_URL of the test database pytest-django created: what a process the tests start must use, not the
    production name."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def _wait_for_worker(timeout_s: float) -> bool:
    from wanmon.celery import app

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if app.control.ping(timeout=0.5):
            return True
    return False


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, django_db_blocker):
    """A real `celery worker` subprocess on the test Redis, using the test database."""
    env = {**os.environ, "DATABASE_URL": subprocess_database_url()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "wanmon", "worker", "--pool", "solo", "--concurrency", "1",
         "--hostname", f"test-{os.getpid()}@%h", "--loglevel", "WARNING", "--without-mingle", "--without-gossip"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        if not _wait_for_worker(30):
            proc.kill()
            out = proc.communicate(timeout=10)[0].decode(errors="replace")
            pytest.fail(f"celery worker did not come up:\n{out[-3000:]}")
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


def role_user(django_user_model, name: str, group: str | None = None, **fields):
    """A user in one of the role groups (``operator``, ``viewer``), or in none. The group is made when missing: a
    transactional test before may have flushed the ones the migrations made."""
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user(name, **fields)
    if group:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


@pytest.fixture
def operator(db, django_user_model):
    """``op``, an operator (op@wanmon.test)."""
    return role_user(django_user_model, "op", "operator", email="op@wanmon.test", password="pw-operator-1")


@pytest.fixture
def viewer(db, django_user_model):
    """``viewer``, a viewer (viewer@wanmon.test)."""
    return role_user(django_user_model, "viewer", "viewer", email="viewer@wanmon.test", password="pw-viewer-1")


@pytest.fixture
def api_operator(operator):
    """A DRF test client authenticated as ``operator``."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(operator)
    return client


@pytest.fixture
def api_viewer(viewer):
    """A DRF test client authenticated as ``viewer``."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(viewer)
    return client


@pytest.fixture
def operator_client(client, operator):
    """The test client logged in as the directory's ``operator`` user."""
    client.force_login(operator)
    return client


@pytest.fixture
def viewer_client(client, viewer):
    """The test client logged in as the directory's ``viewer`` user."""
    client.force_login(viewer)
    return client
