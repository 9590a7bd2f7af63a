"""The documented SQL views exist and a read-only role can read them, and nothing else."""

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from tests.measurements.test_ingest_api import batch, post, throughput
from wanmon.measurements.sql_views import VIEW_NAMES

pytestmark = pytest.mark.django_db(transaction=True)


def test_views_exist_and_show_names_not_ids(client, topo):
    assert post(client, batch([throughput()]), topo["cern_token"]).status_code == 200
    with connection.cursor() as c:
        c.execute("SELECT viewname FROM pg_views WHERE viewname LIKE 'wanmon\\_%%'")
        assert {r[0] for r in c.fetchall()} == set(VIEW_NAMES)
        c.execute("SELECT src, dst, protocol, throughput_bps FROM wanmon_throughput_tests")
        assert c.fetchall() == [("CERN", "FZK", "tcp", 9.0e8)]


def test_readonly_role_reads_views_but_cannot_write_or_read_users(topo, monkeypatch):
    monkeypatch.setenv("WANMON_READONLY_PASSWORD", "ro-secret-1")
    call_command("create_readonly_role", "--name", "wanmon_ro_test")
    call_command("create_readonly_role", "--name", "wanmon_ro_test")  # idempotent
    s = connection.settings_dict
    dsn = f"host={s['HOST']} port={s['PORT']} dbname={s['NAME']} user=wanmon_ro_test password=ro-secret-1"
    try:
        with psycopg.connect(dsn, autocommit=True) as ro:
            assert ro.execute("SELECT count(*) FROM wanmon_interface_rates_1h").fetchone() == (0,)
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                ro.execute("SELECT * FROM auth_user")
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                ro.execute("DELETE FROM measurements_throughputtest")
    finally:
        with connection.cursor() as c:
            c.execute("DROP OWNED BY wanmon_ro_test")
            c.execute("DROP ROLE wanmon_ro_test")
