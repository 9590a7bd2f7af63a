"""Uploads over real HTTPS to the real centre: the agent trusts exactly its ``ca_file``.

The test is its own PKI (``cryptography``'s x509 builder): CA "A" (the site's grid CA, given to
the agent as ``central.ca_file``) and CA "B" (any other). A TLS front on 127.0.0.1
(:class:`~tests.agents.harness.IngestProxy` with an ``ssl`` server context) forwards to
pytest-django's live server, so an accepted upload lands in the database.

* certificate from A for 127.0.0.1: the upload succeeds, the row is stored;
* certificate from B (valid, right address, wrong CA): refused before any HTTP is spoken, so
  neither the token nor a record leaves the agent; the record stays in the spool, the error
  (CERTIFICATE_VERIFY_FAILED) is logged, and it goes as soon as the right certificate is back;
* certificate from A for another name: refused too (the address is checked, not only the CA).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agents.spool import Spool
from tests.agents.conftest import HOST_TCP_LO, ROOT, issue_server_certificate, make_ca, write_config
from tests.agents.harness import (
    WAIT_S,
    IngestProxy,
    agent_argv,
    count_rows,
    host_tcp_rows,
    register_agent,
    server_tls_context,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.integration]


def once(config: Path) -> tuple[int, list[dict]]:
    result = subprocess.run(
        agent_argv("once", "--config", str(config)), cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S
    )
    return result.returncode, [json.loads(line) for line in result.stderr.splitlines()]


def refused_uploads(logs: list[dict]) -> list[dict]:
    return [log for log in logs if log["message"] == "upload failed; will retry"]


def test_https_upload_trusts_the_configured_ca_and_refuses_a_certificate_from_another(live_server, tmp_path):
    _, token = register_agent()
    site_ca, other_ca = make_ca("site grid CA"), make_ca("some other CA")
    ca_file = site_ca.write(tmp_path / "ca.pem")
    good = server_tls_context(*issue_server_certificate(site_ca, tmp_path, stem="good"))
    foreign = server_tls_context(*issue_server_certificate(other_ca, tmp_path, stem="foreign"))
    misnamed = server_tls_context(
        *issue_server_certificate(site_ca, tmp_path, ip=None, dns="wanmon.example.org", stem="misnamed")
    )
    spool = Spool(tmp_path / "spool")

    def config_for(proxy: IngestProxy) -> Path:
        assert proxy.url.startswith("https://127.0.0.1:")
        return write_config(
            tmp_path, url=proxy.url, body=HOST_TCP_LO, central=f'ca_file = "{ca_file}"\ntimeout_s = 30\n', token=token
        )

    # --- the site's CA: uploaded over TLS, stored
    with IngestProxy(live_server.url, tls=good) as proxy:
        status, logs = once(config_for(proxy))
    assert status == 0, logs
    assert [r.status for r in proxy.ingest_requests] == [200] and proxy.tls_failures == []
    assert len(host_tcp_rows()) == 1 and spool.status().records_waiting == 0

    # --- a server certificate from another CA: refused, nothing sent, the record kept
    with IngestProxy(live_server.url, tls=foreign) as proxy:
        status, logs = once(config_for(proxy))
    assert status == 1
    (refused,) = refused_uploads(logs)
    assert "CERTIFICATE_VERIFY_FAILED" in refused["error"] and refused["level"] == "warning"
    assert proxy.requests == [] and proxy.tls_failures  # the handshake failed: no HTTP, no token
    assert [log["records_uploaded"] for log in logs if log["message"] == "once: done"] == [0]
    assert spool.status().records_waiting == 1 and spool.status().rejected_records == 0
    assert len(host_tcp_rows()) == 1

    # --- the site's CA, but a certificate for another name: refused as well
    with IngestProxy(live_server.url, tls=misnamed) as proxy:
        status, logs = once(config_for(proxy))
    assert status == 1
    (refused,) = refused_uploads(logs)
    assert "CERTIFICATE_VERIFY_FAILED" in refused["error"] and "mismatch" in refused["error"]
    assert proxy.requests == [] and spool.status().records_waiting == 2

    # --- the right certificate again: what waited goes, each record once
    with IngestProxy(live_server.url, tls=good) as proxy:
        status, logs = once(config_for(proxy))
    assert status == 0, logs
    assert spool.status().records_waiting == 0
    times = [time for time, _, _ in host_tcp_rows()]
    assert len(times) == 4 and len(set(times)) == 4
    assert count_rows("measurements_ingestbatch") == 4
