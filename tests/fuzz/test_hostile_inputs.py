"""Hostile input everywhere a logged-in user can put it: no answer may be a server error.

In-process through Django's test client, so a failure shows its traceback; each request runs in a savepoint,
so one request's failed transaction does not poison the next. Both tests print their counts.

- Every API operation of the OpenAPI schema, write methods included, as an operator (a property test,
  hypothesis derandomized): the request schemathesis generates from the schema with one part made hostile (a
  query parameter, a path parameter or a body field: NUL bytes, years 1 and 9999, 2**64, non-finite numbers,
  line separators, markup), WANMON_FUZZ_HOSTILE_EXAMPLES (12) per operation; and bodies nested 10 000 and 100
  deep on every write.
- Every page of the URLconf outside /api/ (with the replayed CERN <-> RAL data, so pages get past their 404s),
  GET and POST as a form where it takes one: the names each page reads (recorded while it answers) made hostile,
  each hostile value in all of them at once, and each name alone among good values with one value taken in turn;
  the path parameters the same way; and a deeply nested JSON body; as an operator, and the admin's index and
  lists as a superuser. WANMON_FUZZ_PAGES=full: each name alone with every value (names x values, over 10 minutes
  on a loaded 2-core machine, against 2 to 3 by default).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote, urlencode

import pytest
import schemathesis
from django.contrib.auth.models import Group
from django.db import transaction
from django.http import QueryDict
from django.test import Client
from django.utils.datastructures import MultiValueDict
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis.core import NotSet

from tests.dashboard.conftest import ral_data as ral_data  # the replayed CERN <-> RAL scenario
from tests.fuzz.urlconf import page_sample, pages, parameter_names, scenario_samples
from wanmon.core.permissions import OPERATOR_GROUP
from wanmon.inventory.models import Carrier, Equipment, Interface, Site

pytestmark = [pytest.mark.django_db, pytest.mark.integration]

EXAMPLES = int(os.environ.get("WANMON_FUZZ_HOSTILE_EXAMPLES", "12"))
FULL_PAGES = os.environ.get("WANMON_FUZZ_PAGES") == "full"
DEEP = "[" * 10_000 + "]" * 10_000
DEEP_OBJECT = '{"a":' * 100 + "1" + "}" * 100
# Text a user controls: NUL bytes, the edges of Python's dates, line and paragraph separators, markup.
HOSTILE_TEXT = [
    "\x00", "a\x00b", "0001-01-01", "9999-12-31", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
    "0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-14:00", "18446744073709551616", "-9223372036854775809",
    "1e400", "NaN", "-1", "0", "x\u2028y", "x\r\ny", "\u0085", '<a href="https://evil.example/x">x</a>',
    "a" * 5000, "%00", "../..", "[[[[", "9" * 400,
]
HOSTILE_JSON = [*HOSTILE_TEXT, 2**64, -(2**64), 10**400, 1e308, -1e308, 0, -1, [[[[[]]]]], {"a": {"b": None}}]
WRITE = ("POST", "PUT", "PATCH", "DELETE")


def _settings(max_examples: int):
    return hypothesis_settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
                               phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


@pytest.fixture
def inventory(settings):
    """A small inventory the generated names sometimes hit; no rate limit for the busy fuzzer."""
    settings.WANMON_API_USER_RATE = None
    settings.WANMON_API_ANON_RATE = None
    geant = Carrier.objects.create(code="GEANT", name="GEANT")
    Site.objects.create(code="CERN", name="CERN", tier=0)
    Site.objects.create(code="FZK", name="KIT", tier=1)
    par = Equipment.objects.create(name="geant-par", carrier=geant)
    Interface.objects.create(equipment=par, name="xe-1/0/0", if_index=501, speed_mbps=10000)


def _client(django_user_model, role: str) -> Client:
    if role == "superuser":
        user = django_user_model.objects.create_superuser("fuzz-admin", "admin@example.org", "not-used-9x")
    else:
        user = django_user_model.objects.create_user(f"fuzz-{role}", password="not-used-here-9x")
        user.groups.add(Group.objects.get_or_create(name=OPERATOR_GROUP)[0])
    client = Client(raise_request_exception=True)
    client.force_login(user)
    client.user = user  # to log in again after a page that logs out
    return client


class Calls:
    """Requests made and server errors seen (with their cause), for the report and the assertion."""

    def __init__(self, client: Client):
        self.client = client
        self.requests = 0
        self.failures: list[str] = []

    def __call__(self, method: str, url: str, **kwargs) -> int:
        self.requests += 1
        try:
            with transaction.atomic():  # a savepoint: a failed statement does not poison the next request
                response = self.client.generic(method, url, **kwargs)
                status = response.status_code
                transaction.set_rollback(True)
        except Exception as exc:  # the view raised: what would be a 500 with a traceback
            self.failures.append(f"{method} {url[:200]!r}: {type(exc).__name__}: {str(exc)[:300]}")
            return 500
        if status >= 500 and status != 503:  # 503 is a chosen answer (statement timeout, a service down)
            self.failures.append(f"{method} {url[:200]!r}: HTTP {status}")
        return status


def _api_schema(client: Client) -> dict:
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def _operation_parts(raw: dict, path: str, method: str) -> list[tuple[str, str]]:
    """(where, name) of an operation's parameters and its JSON body's top-level fields."""
    spec = raw["paths"][path][method.lower()]
    parts = [(p["in"], p["name"]) for p in spec.get("parameters", []) if p["in"] in ("query", "path")]
    body = spec.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if "$ref" in body:
        body = raw["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    parts += [("body", name) for name in body.get("properties", {})]
    return parts


def _api_url(path_template: str, path_params: dict, query: dict) -> str:
    path = re.sub(r"\{(\w+)\}", lambda m: quote(str(path_params.get(m.group(1), "1")), safe=""), path_template)
    return f"{path}?{urlencode(query, doseq=True)}" if query else path


def test_every_api_operation_answers_hostile_input_without_server_error(django_user_model, inventory, capsys):
    calls = Calls(_client(django_user_model, "operator"))
    raw = _api_schema(calls.client)
    schema = schemathesis.openapi.from_dict(raw)
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        parts = _operation_parts(raw, operation.path, operation.method) or [("none", "")]
        if operation.method.upper() in ("POST", "PUT", "PATCH"):
            for body in (DEEP, DEEP_OBJECT):
                calls(operation.method.upper(), _api_url(operation.path, {}, {}), data=body,
                      content_type="application/json")

        @_settings(EXAMPLES)
        @given(case=operation.as_strategy(), part=st.sampled_from(parts), value=st.sampled_from(HOSTILE_JSON))
        def run(case, part, value):
            where, name = part
            path_params, query = dict(case.path_parameters or {}), dict(case.query or {})
            body = None if isinstance(case.body, NotSet) else case.body
            text = value if isinstance(value, str) else json.dumps(value)
            if where == "path":
                path_params[name] = text
            elif where == "query":
                query[name] = text
            elif where == "body":
                body = {**(body if isinstance(body, dict) else {}), name: value}
            kwargs = {}
            if case.method.upper() in ("POST", "PUT", "PATCH") and case.media_type in (None, "application/json"):
                kwargs = {"data": json.dumps(body if body is not None else {}), "content_type": "application/json"}
            calls(case.method.upper(), _api_url(case.path, path_params, query), **kwargs)

        run()
    with capsys.disabled():
        print(f"\nAPI as operator: {operations} operations, {calls.requests} requests, "
              f"{len(calls.failures)} server errors")
    assert operations > 50
    assert calls.failures == [], "\n".join(calls.failures)


ADMIN_NAMES = ["q", "o", "p", "e", "all", "_popup", "_to_field", "id__exact"]
ADMIN_VALUES = ["\x00", "0001-01-01", "18446744073709551616"]
# For pages: each family once (NUL, the edges of dates, numbers no column holds, separators, markup, size).
PAGE_VALUES = ["a\x00b", "0001-01-01", "9999-12-31T23:59:59Z", "18446744073709551616",
               'x\u2028y\r\n<a href="https://evil.example/x">%{y}</a>']
# Values that make a page use the others (the explorer reads its form only with a metric, and so on).
BASE = {"metric": "throughput_bps", "aggregate": "avg", "range": "24h", "group_by": "path", "view": "month",
        "date": "2026-03-01", "end": "2026-03-01T12:00:00Z", "at": "2026-03-01T12:00:00Z", "source_tz": "UTC",
        "start": "2026-03-02T00:00", "reference": "CHG-1", "status": "confirmed", "impact": "outage",
        "behaviour": "mute", "comment": "fuzz", "duration_s": "3600", "name": "fuzz", "time_zone": "UTC"}


@contextmanager
def names_read() -> Iterator[set[str]]:
    """The query-string and form names a request's code asks for (QueryDict get, getlist, in)."""
    seen: set[str] = set()
    # not __getitem__: iterating a QueryDict's items goes through it, and would count every name present
    originals = {name: getattr(MultiValueDict, name) for name in ("get", "getlist")}
    originals["__contains__"] = dict.__contains__

    def recording(name):
        def method(self, key, *args, **kwargs):
            if isinstance(key, str):
                seen.add(key)
            return originals[name](self, key, *args, **kwargs)
        return method

    for name in originals:
        setattr(QueryDict, name, recording(name))
    try:
        yield seen
    finally:
        for name in originals:
            delattr(QueryDict, name)


def hostile_sets(names: list[str], values: list[str], turn: int) -> list[dict[str, str]]:
    """The hostile parts of a page's requests: each value in all ``names`` at once, then each name alone with one
    value taken in turn (``turn`` moves the rotation on from page to page, so a name many pages read meets every
    value); with FULL_PAGES each name alone with every value."""
    if FULL_PAGES:
        return [{name: value} for value in values for name in names]
    together = [dict.fromkeys(names, value) for value in values] if names else []
    alone = [{name: values[(turn + index) % len(values)]} for index, name in enumerate(names)]
    return together + [part for part in alone if part not in together]  # one name alone: sent every value above


def _page_probes(calls, page, sample: dict[str, str], names: list[str], values: list[str], turn: int):
    """One page's requests: the names it reads made hostile (``hostile_sets``) among good values, GET and POST as
    a form where it takes one; its path parameters the same way; and a deeply nested JSON body."""
    url = page.url(sample)
    read: dict[str, set[str]] = {}
    for method in ("GET", "POST"):
        with names_read() as seen:
            body = urlencode({n: BASE.get(n, "1") for n in names})
            if method == "GET":
                status = calls("GET", f"{url}?{body}")
            else:
                status = calls("POST", url, data=body, content_type="application/x-www-form-urlencoded")
        if status != 405:
            read[method] = seen & set(names)
    for method, used in read.items():
        for hostile in hostile_sets(sorted(used), values, turn):
            query = urlencode({**{n: BASE[n] for n in used if n in BASE}, **hostile})
            if method == "GET":
                calls("GET", f"{url}?{query}")
            else:
                calls("POST", url, data=query, content_type="application/x-www-form-urlencoded")
    for hostile in hostile_sets(list(page.params), values, turn):
        calls("GET", page.url({**sample, **hostile}))
    if "POST" in read:
        calls("POST", url, data=DEEP, content_type="application/json")


@pytest.mark.usefixtures("ral_data")
@pytest.mark.timeout(1800 if FULL_PAGES else 600)
def test_every_page_answers_hostile_input_without_server_error(django_user_model, capsys):
    # Our pages as an operator (the role the dashboard is for); Django's admin as a superuser, its list and add
    # pages (an object's pages take the same parameters).
    operator, superuser = Calls(_client(django_user_model, "operator")), Calls(_client(django_user_model, "superuser"))
    names = parameter_names()
    samples = scenario_samples()
    found = pages()
    started = time.monotonic()
    for turn, page in enumerate(found):
        if page.template.startswith("admin/"):
            # the index and the lists: the admin's own parameters (its objects' pages take the same)
            if not page.params and not page.template.endswith(("add/", "logout/", "password_change/")):
                superuser.client.force_login(superuser.client.user)
                _page_probes(superuser, page, {}, ADMIN_NAMES, ADMIN_VALUES, turn)
            continue
        operator.client.force_login(operator.client.user)  # accounts/logout/ ends the session
        _page_probes(operator, page, page_sample(page, samples), names, PAGE_VALUES, turn)
    failures = operator.failures + superuser.failures
    with capsys.disabled():
        print(f"\npages{' (full)' if FULL_PAGES else ''}: {len(found)} URL patterns, {operator.requests} requests "
              f"as operator, {superuser.requests} as superuser (admin), {time.monotonic() - started:.0f} s, "
              f"{len(failures)} server errors")
    assert len(found) > 40
    assert failures == [], "\n".join(failures)
