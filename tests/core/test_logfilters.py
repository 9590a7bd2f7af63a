"""Secrets out of the logs: feed and pSConfig tokens in URL paths, secret query values and URL user parts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.chain_harness import database_url_for_subprocesses
from tests.processes import free_port
from wanmon.core.logfilters import secrets_mask

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "Zq3kV9xJp2Lr8Tn4Bw6Yc1Hd5Mf7Gs0Ua2Ie9Ko3Pl8"


@pytest.mark.parametrize("text, masked", [
    (f"GET /maintenance/feeds/{TOKEN}/all.ics HTTP/1.1", "GET /maintenance/feeds/[masked]/all.ics HTTP/1.1"),
    (f"Not Found: /maintenance/feeds/{TOKEN}/site/CERN.ics", "Not Found: /maintenance/feeds/[masked]/site/CERN.ics"),
    ("/cal.ics?user=noc&token=s3cr3t&x=1", "/cal.ics?user=noc&token=[masked]&x=1"),
    ("https://noc:hunter2@portal.colt.example/feed.ics", "https://[masked]@portal.colt.example/feed.ics"),
    ("GET /maintenance/ HTTP/1.1", "GET /maintenance/ HTTP/1.1"),
    (f'"GET /perfsonar/psconfig/{TOKEN}.json HTTP/1.1" 200', '"GET /perfsonar/psconfig/[masked].json HTTP/1.1" 200'),
    ("GET /perfsonar/ HTTP/1.1", "GET /perfsonar/ HTTP/1.1"),
])
def test_secrets_are_masked(text, masked):
    assert secrets_mask(text) == masked


@pytest.mark.django_db
def test_feed_and_psconfig_tokens_stay_out_of_gunicorns_access_log_and_djangos_request_log(tmp_path):
    # given the centre served by gunicorn with its access log on
    port = free_port()
    access_log, app_log = tmp_path / "access.log", tmp_path / "app.log"
    env = {**os.environ, "WANMON_SECRET_KEY": os.environ.get("WANMON_SECRET_KEY") or "k" * 50,
           "DATABASE_URL": database_url_for_subprocesses()}
    with app_log.open("wb") as out:
        process = subprocess.Popen(  # noqa: S603 - fixed argv
            [sys.executable, "-m", "gunicorn", "wanmon.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", "1", "--access-logfile", str(access_log)],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90  # a loaded machine boots Django slowly
        url = f"http://127.0.0.1:{port}/maintenance/feeds/{TOKEN}/all.ics?token=s3cr3t"
        while True:
            try:
                urllib.request.urlopen(url, timeout=5)  # noqa: S310 - loopback
            except urllib.error.HTTPError as exc:
                assert exc.code == 404  # an unknown token: logged by gunicorn and by django.request
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.2)
        with pytest.raises(urllib.error.HTTPError) as unknown:  # a toolkit fetching a template with a revoked token
            urllib.request.urlopen(f"http://127.0.0.1:{port}/perfsonar/psconfig/{TOKEN}.json", timeout=5)  # noqa: S310
        assert unknown.value.code == 404
        while not all(p in (access_log.read_text() if access_log.exists() else "") for p in ("feeds", "psconfig")):
            assert time.monotonic() < deadline, "gunicorn wrote no access log line"
            time.sleep(0.1)  # written after the response went out
        time.sleep(0.3)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    # then the request is in the logs, its secrets are not
    logged = access_log.read_text()
    assert "GET /maintenance/feeds/[masked]/all.ics?token=[masked]" in logged and " 404 " in logged
    app = app_log.read_text()
    assert "GET /perfsonar/psconfig/[masked].json" in logged
    assert "/maintenance/feeds/[masked]/all.ics" in app  # Django's "Not Found: ..." warning
    assert "/perfsonar/psconfig/[masked].json" in app
    assert TOKEN not in logged + app and "s3cr3t" not in logged + app
