"""A blackholed Redis (accepts connections, never answers) must not cost every request its socket timeouts.

The rate limits keep their counters in the cache (Redis). After one cache failure a process counts in its own
memory for a while (wanmon/core/throttling.py), so only the first request pays the timeouts: uploads, API calls
and logins after it answer at their usual speed, and the ingest rate limit still refuses a flood.
"""

from __future__ import annotations

import http.cookiejar
import re
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.e2e.chain_harness import database_url_for_subprocesses
from tests.faults.harness import Blackhole, PlainCentre, SimAgent, centre_env

pytestmark = [pytest.mark.integration]

FAST_S = 1.0  # an upload of one poll answers in tens of milliseconds; a cache read would cost 5 s or more
# A login computes a PBKDF2 hash (about half a second, more on a loaded machine); a cache read would add 5 s.
LOGIN_S = 3.0


def _centre(request, tmp_path, **extra: str) -> tuple[Blackhole, PlainCentre]:
    hole = Blackhole()
    request.addfinalizer(hole.stop)
    env = centre_env(database_url=database_url_for_subprocesses(), redis_url=hole.url)
    env.update(extra)
    # One process: the fallback is per process, and the test must know which process answers.
    centre = PlainCentre(env=env, log_dir=tmp_path, workers=1, threads=2)
    request.addfinalizer(centre.stop)
    centre.wait_ready()
    return hole, centre


def _agent(tmp_path, centre, registered) -> SimAgent:
    return SimAgent(tmp_path / "spool", url=centre.url, token=registered.token, equipment=registered.equipment,
                    interfaces=list(registered.interfaces), timeout_s=90)  # fmt: skip


def _start_of_polls():
    from datetime import UTC, datetime, timedelta

    return (datetime.now(UTC) - timedelta(hours=2)).replace(second=0, microsecond=0)


def test_uploads_after_the_first_answer_within_a_second_with_redis_blackholed(registered, tmp_path, request):
    from datetime import timedelta

    hole, centre = _centre(request, tmp_path)
    agent = _agent(tmp_path, centre, registered)
    start = _start_of_polls()
    for k in range(8):
        agent.poll(start + timedelta(minutes=k))
        report = agent.drain()
        assert report.retry_in_s is None, report
    statuses = [status for _, status in agent.latencies_s]
    assert statuses == [200] * 8
    first_s, later = agent.latencies_s[0][0], [s for s, _ in agent.latencies_s[1:]]
    print(f"first upload {first_s:.2f} s, later uploads max {max(later):.3f} s")  # noqa: T201
    assert first_s < 30, "the first upload waited on Redis for longer than its timeouts"
    assert max(later) < FAST_S, f"uploads after the first waited on Redis: {[round(s, 2) for s in later]}"
    assert hole.accepted  # the cache client did reach the blackhole
    agent.close()


def test_the_ingest_rate_limit_still_holds_with_redis_blackholed(registered, tmp_path, request):
    """Failing open would let a runaway (or stolen) agent token flood ingest while Redis is away: the process
    counts in memory instead, so the 6th upload of a minute at 5/min is refused with 429 and Retry-After."""
    from datetime import timedelta

    _, centre = _centre(request, tmp_path, WANMON_INGEST_RATE_LIMIT="5/min")
    agent = _agent(tmp_path, centre, registered)
    start = _start_of_polls()
    for k in range(7):
        agent.poll(start + timedelta(minutes=k))
        agent.drain()
    statuses = [status for _, status in agent.latencies_s]
    assert statuses[:5] == [200] * 5
    assert statuses[5] == 429
    assert max(s for s, _ in agent.latencies_s[1:]) < FAST_S
    agent.close()


def _user_with_token() -> str:
    from django.contrib.auth.models import User

    from wanmon.core.services import api_token_create

    user = User.objects.create_user("noc", password="a-long-password-for-noc")  # noqa: S106 - test account
    return api_token_create(user=user)[1]


def _timed(opener, req) -> tuple[float, int]:
    started = time.monotonic()
    try:
        with opener.open(req, timeout=60) as response:
            status = response.status
            response.read()
    except urllib.error.HTTPError as exc:
        status = exc.code
    return time.monotonic() - started, status


def test_api_calls_and_logins_after_the_first_are_fast_with_redis_blackholed(registered, tmp_path, request):
    key = _user_with_token()
    _, centre = _centre(request, tmp_path)
    opener = urllib.request.build_opener()

    def api():
        return _timed(opener, urllib.request.Request(f"{centre.url}/api/v1/sites/",
                                                     headers={"Authorization": f"Token {key}"}))  # fmt: skip

    api_answers = [api() for _ in range(4)]
    assert [status for _, status in api_answers] == [200] * 4
    assert max(s for s, _ in api_answers[1:]) < FAST_S, api_answers

    # django-axes counts failed logins in the database (its default handler), not in the cache: a login
    # (here a wrong password, which axes records) must not wait on Redis either.
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    logins = []
    for _ in range(3):
        with browser.open(f"{centre.url}/accounts/login/", timeout=60) as page:
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode()).group(1)
        body = urllib.parse.urlencode({"username": "noc", "password": "wrong", "csrfmiddlewaretoken": token})
        logins.append(
            _timed(
                browser,
                urllib.request.Request(
                    f"{centre.url}/accounts/login/",
                    data=body.encode(),
                    headers={"Referer": f"{centre.url}/accounts/login/"},
                ),
            )
        )
    print(f"api {[round(s, 2) for s, _ in api_answers]} logins {[round(s, 2) for s, _ in logins]}")  # noqa: T201
    assert [status for _, status in logins] == [200] * 3  # the form again, with its error
    assert max(s for s, _ in logins) < LOGIN_S, logins
