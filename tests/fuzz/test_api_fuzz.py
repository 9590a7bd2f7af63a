"""Property-based fuzzing of the whole API from its OpenAPI schema (/api/schema/) with schemathesis.

Every operation gets a bounded number of generated requests as each kind of caller: anonymous, a viewer
and an operator (personal API tokens) and a site agent (its bearer token). Where a caller can only be
refused (anonymous everywhere, an agent outside its own endpoints, a viewer's writes) one request per
operation checks the refusal; elsewhere WANMON_FUZZ_EXAMPLES (5) requests explore the input. Every
answer must be no server error (5xx) and, where the schema documents the status, match
the documented body. Requests go over HTTP to a live server on the test database; hypothesis is
derandomized, so a failure is reproduced by running the test again.
"""

import logging
import os

import pytest
import schemathesis
from django.contrib.auth.models import Group
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from tests.measurements.conftest import make_agent
from wanmon.core.permissions import OPERATOR_GROUP, VIEWER_GROUP
from wanmon.core.services import api_token_create
from wanmon.inventory.models import Carrier, Equipment, Interface, Site

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]

EXAMPLES = int(os.environ.get("WANMON_FUZZ_EXAMPLES", "5"))
AGENT_PATHS = ("/api/v1/ingest", "/api/v1/perfsonar/archive")


def _examples(role: str, operation) -> int:
    """How many requests an operation gets as this caller (see the module docstring)."""
    if role == "operator":
        return EXAMPLES
    if role == "viewer":
        return EXAMPLES if operation.method.upper() in ("GET", "HEAD") else 1
    if role == "agent":
        return EXAMPLES if operation.path.startswith(AGENT_PATHS) else 1
    return 1
CHECKS = [not_a_server_error, response_schema_conformance]


@pytest.fixture
def callers(django_user_model, settings):
    """Authorization headers per role, over a small inventory the generated ids sometimes hit."""
    settings.WANMON_API_USER_RATE = None  # the fuzzer is one very busy user
    settings.WANMON_API_ANON_RATE = None
    settings.WANMON_INGEST_RATE_LIMIT = "100000/min"
    geant = Carrier.objects.create(code="GEANT", name="GEANT")
    cern = Site.objects.create(code="CERN", name="CERN", tier=0)
    Site.objects.create(code="FZK", name="KIT", tier=1)
    par = Equipment.objects.create(name="geant-par", carrier=geant)
    Interface.objects.create(equipment=par, name="xe-1/0/0", if_index=501, speed_mbps=10000)
    _, agent_token = make_agent(cern, "cern-agent-1", [par])
    headers = {"anonymous": {}, "agent": {"Authorization": f"Bearer {agent_token}"}}
    for role, group in (("viewer", VIEWER_GROUP), ("operator", OPERATOR_GROUP)):
        user = django_user_model.objects.create_user(f"fuzz-{role}", password="not-used-here-9x")
        user.groups.add(Group.objects.get_or_create(name=group)[0])
        headers[role] = {"Authorization": f"Token {api_token_create(user=user)[1]}"}
    return headers


@pytest.fixture(autouse=True)
def _quiet_refusals():
    """Thousands of 4xx answers are the point here: log only server errors (with their tracebacks)."""
    logger = logging.getLogger("django.request")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def _schema(admin_client):
    response = admin_client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return schemathesis.openapi.from_dict(response.json())


@pytest.mark.parametrize("role", ["anonymous", "viewer", "operator", "agent"])
def test_api_answers_no_server_error_and_keeps_to_its_schema(role, callers, live_server, admin_client):
    headers = callers[role]
    schema = _schema(admin_client)
    failures, operations, requests = [], 0, [0]
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @hypothesis_settings(max_examples=_examples(role, operation), deadline=None, derandomize=True, database=None,
                             phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def run(case):
            requests[0] += 1
            response = case.call(base_url=live_server.url, headers=headers, timeout=60)
            case.validate_response(response, checks=CHECKS, headers=headers)

        try:
            run()
        except (Exception, BaseExceptionGroup) as exc:  # collect them all: one run names every failing operation
            failures.append(f"{operation.label}: {str(exc)[:1500]}")
    print(f"{role}: {operations} operations, {requests[0]} requests, {len(failures)} failing")
    assert operations > 50
    assert failures == [], "\n\n".join(failures)
