"""The endpoints agents upload to answer 503 + Retry-After when the database fails while the token is checked:
the upload is kept and sent again, where a 500 would make an agent split its batch and park its records."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from wanmon.measurements.api.auth import AgentTokenAuthentication


@pytest.mark.parametrize("url", ["/api/v1/ingest", "/api/v1/perfsonar/archive"])
def test_a_database_outage_while_the_token_is_checked_is_503_with_retry_after(client, monkeypatch, url):
    def down(self, request):
        raise OperationalError("connection to server at 127.0.0.1 failed")

    monkeypatch.setattr(AgentTokenAuthentication, "authenticate", down)
    response = client.post(url, data=b"{}", content_type="application/json", HTTP_AUTHORIZATION="Bearer secret")
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert response.json() == {"errors": [{"path": "", "message": "database unavailable, retry later"}]}
