"""The rename of carrier notifications to carrier notices (migration 0006) keeps every row and every link."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = ("maintenance", "0001_squashed_0005_source_mailbox")
AFTER = ("maintenance", "0006_carrier_notice")


def _migrate(target: tuple[str, str]):
    with connection.cursor() as cursor:
        # In the test's transaction: rows just written must be checked before a table of theirs is altered.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state(target).apps


@pytest.mark.django_db(transaction=False)
def test_carrier_notices_their_windows_and_trail_survive_the_rename_both_ways():
    # given a database as it was before the rename, with a notification applied to a window and in its trail
    apps = _migrate(BEFORE)
    Notification = apps.get_model("maintenance", "CarrierNotification")
    Window = apps.get_model("maintenance", "MaintenanceWindow")
    Event = apps.get_model("maintenance", "MaintenanceEvent")
    now = timezone.now()
    old = Notification.objects.create(source="email", sender="noc@colt.example", raw=b"From: noc@colt.example\r\n",
                                      sha256="a" * 64, parser="colt", status="parsed", report={"notification_id": 1})
    window = Window.objects.create(reference="CRQ1-1", start=now, end=now + timedelta(hours=2), notification=old)
    Event.objects.create(window=window, kind="created", time=now, notification=old)

    # when it is migrated: the same rows, under the new names
    apps = _migrate(AFTER)
    notice = apps.get_model("maintenance", "CarrierNotice").objects.get()
    assert (notice.pk, bytes(notice.raw), notice.sender, notice.report) == (
        old.pk, b"From: noc@colt.example\r\n", "noc@colt.example", {"notification_id": 1})
    assert apps.get_model("maintenance", "MaintenanceWindow").objects.get().carrier_notice_id == notice.pk
    assert list(notice.windows.values_list("reference", flat=True)) == ["CRQ1-1"]
    assert list(notice.events.values_list("kind", flat=True)) == ["created"]
    with connection.cursor() as cursor:  # the table keeps its name: nothing was copied
        cursor.execute("SELECT count(*) FROM maintenance_maintenancenotification")
        assert cursor.fetchone() == (1,)

    # and back again, for a rollback of the upgrade
    apps = _migrate(BEFORE)
    assert apps.get_model("maintenance", "MaintenanceWindow").objects.get().notification_id == old.pk
    _migrate(AFTER)
