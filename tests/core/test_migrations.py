"""Migrations: the models and the migrations agree, and a database migrated before the squash upgrades.

The squashed migrations (docs/architecture.md, "Migrations") must name every migration they replace: a
database that recorded those names has nothing to run, and one that recorded only some of them is not
mistaken for a database that has the squashed schema.
"""

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.loader import MigrationLoader

# What wanmon databases recorded before the squash, per squashed migration.
REPLACED = {
    ("alerts", "0001_squashed_0003_incident_reopen_count_returned"): [
        "0001_initial",
        "0002_incident_event_reopened",
        "0003_incident_reopen_count_returned",
    ],
    ("diagnosis", "0001_squashed_0004_finding_absent_evaluations"): [
        "0001_initial",
        "0002_measurement_gap_code",
        "0003_diagnosiscycle_pathevaluation",
        "0004_finding_absent_evaluations",
    ],
    ("inventory", "0001_squashed_0002_path_rtt_ms"): ["0001_initial", "0002_path_rtt_ms"],
    ("maintenance", "0001_squashed_0005_source_mailbox"): [
        "0001_initial",
        "0002_bcop_provenance_notices",
        "0003_window_review",
        "0004_carrier_notification_site_notice",
        "0005_source_mailbox",
    ],
    ("measurements", "0001_squashed_0006_hosttcp_nic_speed"): [
        "0001_hypertables",
        "0002_sql_views",
        "0003_speed_float_batch_per_agent",
        "0004_snmpsample_status_host_error_extra",
        "0005_interfacewatermark",
        "0006_hosttcp_nic_speed",
    ],
    ("perfsonar", "0001_squashed_0002_grafana_annotations"): ["0001_initial", "0002_grafana_annotations"],
}


def _record_as_before_the_squash(cursor, *, leave_out: tuple[str, str] | None = None) -> None:
    """Rewrite django_migrations as a database migrated by the replaced files would have it."""
    for (app, squashed), names in REPLACED.items():
        # Applying a squashed migration records it and every name it replaces: start from neither.
        cursor.execute("DELETE FROM django_migrations WHERE app = %s AND name = ANY(%s)", [app, [squashed, *names]])
        for name in names:
            if (app, name) != leave_out:
                cursor.execute("INSERT INTO django_migrations (app, name, applied) VALUES (%s, %s, now())", [app, name])


def _plan() -> list:
    executor = MigrationExecutor(connection)
    return executor.migration_plan(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db
def test_models_and_migrations_agree():
    # makemigrations --check exits non-zero when a model change has no migration.
    call_command("makemigrations", check=True, dry_run=True, verbosity=0)


def test_squashed_migrations_replace_exactly_the_old_chain():
    loader = MigrationLoader(None, ignore_no_migrations=True)
    for (app, squashed), names in REPLACED.items():
        migration = loader.disk_migrations[(app, squashed)]
        assert migration.replaces == [(app, name) for name in names]
        for name in names:  # the replaced files are gone: only the squashed one is on disk
            assert (app, name) not in loader.disk_migrations


@pytest.mark.django_db(transaction=False)
def test_a_database_migrated_before_the_squash_has_nothing_to_run():
    assert _plan() == []
    with connection.cursor() as cursor:
        _record_as_before_the_squash(cursor)
    loader = MigrationLoader(connection)
    for key in REPLACED:
        assert key in loader.applied_migrations, key
    assert _plan() == []


@pytest.mark.django_db(transaction=False)
@pytest.mark.parametrize("squashed", sorted(REPLACED), ids="/".join)
def test_a_database_part_way_through_a_replaced_chain_is_not_taken_for_the_squashed_schema(squashed):
    app, _ = squashed
    with connection.cursor() as cursor:
        _record_as_before_the_squash(cursor, leave_out=(app, REPLACED[squashed][-1]))
    loader = MigrationLoader(connection)
    assert squashed not in loader.applied_migrations
    assert set(REPLACED) - {squashed} <= set(loader.applied_migrations)
