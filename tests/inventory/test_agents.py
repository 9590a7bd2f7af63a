"""Agents: token printed once, only its hash stored, revocation effective at once."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from wanmon.inventory.choices import AgentScope
from wanmon.inventory.models import Agent, Site
from wanmon.inventory.services import (
    agent_assign_equipment,
    agent_authenticate,
    agent_create,
    agent_mark_seen,
    agent_revoke,
    agent_token_rotate,
)

pytestmark = pytest.mark.django_db


def _create(capsys, *args) -> tuple[str, str]:
    call_command("agent_create", *args)
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_agent_create_prints_the_token_once_and_stores_only_its_hash(reverse_path_loss, capsys):
    out, err = _create(capsys, "--site", "FZK")
    token = out.strip()
    agent = Agent.objects.get()

    # the token alone on stdout (scriptable), the explanation on stderr
    assert len(out.splitlines()) == 1 and len(token) == 43
    assert "fzk-agent-1" in err and "only its SHA-256 is stored" in err
    # stored: the SHA-256 hex of the token and its first 8 characters; never the token itself
    assert agent.name == "fzk-agent-1" and agent.site.code == "FZK"
    assert agent.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert agent.token_prefix == token[:8]
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM inventory_agent")
        assert all(token not in str(value) for row in cursor.fetchall() for value in row)
    assert agent_authenticate(token=token) == agent


def test_default_names_count_up_and_an_explicit_name_is_kept(reverse_path_loss, capsys):
    _create(capsys, "--site", "FZK")
    _create(capsys, "--site", "FZK")
    _create(capsys, "--site", "CERN", "--name", "cern-poller")
    assert sorted(Agent.objects.values_list("name", flat=True)) == ["cern-poller", "fzk-agent-1", "fzk-agent-2"]
    with pytest.raises(CommandError, match="an agent named 'cern-poller' already exists"):
        _create(capsys, "--site", "CERN", "--name", "cern-poller")


def test_agent_create_json_and_equipment(reverse_path_loss, capsys):
    out, _ = _create(capsys, "--site", "CERN", "--equipment", "cern-border", "--equipment", "geant-gva", "--json")
    data = json.loads(out)
    assert data["name"] == "cern-agent-1" and data["site"] == "CERN"
    agent = agent_authenticate(token=data["token"])
    assert sorted(agent.equipment.values_list("name", flat=True)) == ["cern-border", "geant-gva"]


def test_an_archive_only_token_archives_perfsonar_runs_and_is_refused_by_the_ingest(reverse_path_loss, capsys, client):
    token = _create(capsys, "--site", "FZK", "--archive-only")[0].strip()
    assert Agent.objects.get().scope == AgentScope.ARCHIVE
    response = client.post("/api/v1/ingest", data=json.dumps({"batch_id": "x", "records": []}),
                           content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 403 and "perfSONAR runs only" in response.json()["errors"][0]["message"]
    # the archive takes its token (the body is then judged: an empty one is malformed, not unauthorised)
    response = client.put("/api/v1/perfsonar/archive", data="{}", content_type="application/json",
                          HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 400


def test_agent_create_rejects_unknown_site_and_equipment(reverse_path_loss, capsys):
    with pytest.raises(CommandError, match="unknown site 'XYZ'"):
        _create(capsys, "--site", "XYZ")
    with pytest.raises(CommandError, match="unknown equipment: nope"):
        _create(capsys, "--site", "CERN", "--equipment", "nope")
    assert Agent.objects.count() == 0


def test_agent_revoke_rejects_the_token_at_once(reverse_path_loss, capsys):
    token = _create(capsys, "--site", "FZK")[0].strip()
    assert agent_authenticate(token=token) is not None

    call_command("agent_revoke", "fzk-agent-1")
    assert "revoked agent 'fzk-agent-1' of site FZK" in capsys.readouterr().out
    assert agent_authenticate(token=token) is None
    assert Agent.objects.get().revoked_at is not None

    # idempotent, and an unknown name is an error
    call_command("agent_revoke", "fzk-agent-1")
    assert "already revoked" in capsys.readouterr().out
    with pytest.raises(CommandError, match="unknown agent 'nobody'"):
        call_command("agent_revoke", "nobody")


@pytest.mark.parametrize("bad", ["", "x" * 500, "not-a-token", "wrong" * 8 + "abc"])
def test_authenticate_refuses_anything_else(reverse_path_loss, bad):
    agent_create(site=Site.objects.get(code="FZK"))
    assert agent_authenticate(token=bad) is None


def test_token_rotation_and_equipment_assignment(reverse_path_loss):
    from wanmon.inventory.models import Equipment

    agent, old = agent_create(site=Site.objects.get(code="CERN"))
    new = agent_token_rotate(agent=agent)
    assert agent_authenticate(token=old) is None
    assert agent_authenticate(token=new) == agent

    agent_assign_equipment(agent=agent, equipment=Equipment.objects.filter(name="cern-border"))
    agent_assign_equipment(agent=agent, equipment=Equipment.objects.filter(name="geant-gva"))
    assert sorted(agent.equipment.values_list("name", flat=True)) == ["cern-border", "geant-gva"]
    agent_assign_equipment(agent=agent, equipment=Equipment.objects.filter(name="geant-fra"), replace=True)
    assert list(agent.equipment.values_list("name", flat=True)) == ["geant-fra"]

    agent_mark_seen(agent=agent, version="1.2.3")
    agent.refresh_from_db()
    assert agent.version == "1.2.3" and agent.last_seen_at is not None

    agent_revoke(agent=agent)
    with pytest.raises(ValidationError):
        agent_token_rotate(agent=agent)
