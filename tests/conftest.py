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

#: Redis databases of one test process: its own (cache, broker of its Celery worker), then those its harnesses give
#: the processes they start (``redis_url_of_worker(1)``...). The parallel workers of scripts/test (pytest-xdist:
#: gw0, gw1...) share one Redis as they share one PostgreSQL server; as each has its own test database, each has its
#: own block of Redis databases, so that one worker's Celery worker never takes the tasks another queued, and one's
#: cache.clear() empties no other's queue.
REDIS_DBS_PER_WORKER = 4


def worker_index() -> int:
    """0, or N for the parallel worker gwN of this run (pytest-xdist sets PYTEST_XDIST_WORKER)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0


def redis_url_of_worker(offset: int = 0) -> str:
    """The run's Redis with database ``offset`` of this worker's block (0: its own, which the settings use)."""
    from urllib.parse import urlsplit, urlunsplit

    from django.conf import settings

    if not 0 <= offset < REDIS_DBS_PER_WORKER:
        raise ValueError(f"a test worker has Redis databases 0-{REDIS_DBS_PER_WORKER - 1} of its block, not {offset}")
    parts = urlsplit(os.environ.get("WANMON_TEST_REDIS_URL") or settings.REDIS_URL)
    return urlunsplit(parts._replace(path=f"/{worker_index() * REDIS_DBS_PER_WORKER + offset}"))


def _redis_of_this_worker() -> None:
    """Point the settings (read lazily: the cache and Celery connect on first use) and the environment inherited by
    the processes the tests start at this worker's own Redis database."""
    from django.conf import settings

    # the run's Redis as given (REDIS_URL, else the settings' default), before this worker's database replaces it
    os.environ.setdefault("WANMON_TEST_REDIS_URL", settings.REDIS_URL)
    url = redis_url_of_worker(0)
    os.environ["REDIS_URL"] = url
    settings.REDIS_URL = url
    settings.CACHES["default"]["LOCATION"] = url
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):
        if name not in os.environ:  # set apart on purpose: left as given
            setattr(settings, name, url)


_redis_of_this_worker()


def _lock_file(name: str):
    """A lock file shared by the parallel workers of this run (in scripts/test's run directory when there is one)."""
    import tempfile

    base = os.environ.get("WANMON_TEST_RUN_DIR") or tempfile.gettempdir()
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "serial")
    return open(Path(base) / f".wanmon-tests-{run}.{name}", "a+")  # noqa: SIM115 - held for the whole session


_LOCKS: dict[str, object] = {}


def _services_restarted() -> int:
    """How many times a test of this run has restarted the shared services (written by exclusive tests)."""
    lock = _LOCKS["services"]
    lock.seek(0)
    text = lock.read().strip()
    return int(text) if text.isdigit() else 0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Tests marked ``exclusive`` (they stop and restart the run's own PostgreSQL) have the shared services to
    themselves: every test holds a shared lock from its set-up to its teardown, an exclusive one waits for the
    parallel workers' running tests to end and holds them off until it has ended (a turnstile keeps it from waiting
    for ever behind a stream of shared holders). A worker that takes its lock after such a test drops its database
    connections: the server they were opened to has gone."""
    import fcntl

    if "services" not in _LOCKS:
        _LOCKS["turnstile"], _LOCKS["services"] = _lock_file("turnstile"), _lock_file("services")
        _LOCKS["seen"] = _services_restarted()
    turnstile, services = _LOCKS["turnstile"], _LOCKS["services"]
    exclusive = item.get_closest_marker("exclusive") is not None
    fcntl.flock(turnstile, fcntl.LOCK_EX)
    try:
        fcntl.flock(services, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    finally:
        if not exclusive:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
    try:
        restarted = _services_restarted()
        if restarted != _LOCKS["seen"]:
            from django.db import connections

            connections.close_all()
            _LOCKS["seen"] = restarted
        yield
        if exclusive:
            _LOCKS["seen"] = _services_restarted() + 1
            services.seek(0)
            services.truncate()
            services.write(str(_LOCKS["seen"]))
            services.flush()
    finally:
        fcntl.flock(services, fcntl.LOCK_UN)
        if exclusive:
            fcntl.flock(turnstile, fcntl.LOCK_UN)


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


#: Packages whose tests share what is set up once for them all (the lab's centre and its network namespaces, which a
#: centre starting up clears): one parallel worker runs all of them.
_ONE_WORKER_PACKAGES = ("tests/lab/",)


def pytest_collection_modifyitems(config, items):
    """With parallel workers (``--dist loadgroup``), keep together on one worker the tests that share a fixture set up
    once per module, class or package, or a package of ``_ONE_WORKER_PACKAGES``: split, each worker would start the
    same servers and walk the same captures again. The other tests go to whichever worker is free."""
    if getattr(config.option, "dist", "no") != "loadgroup":
        return
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        group = next((p for p in _ONE_WORKER_PACKAGES if path.startswith(p)), None)
        if group is None:
            info = getattr(item, "_fixtureinfo", None)
            scopes = {d.scope for defs in (info.name2fixturedefs.values() if info else ()) for d in defs}
            if scopes & {"module", "class", "package"}:
                group = path
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
