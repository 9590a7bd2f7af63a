"""An operator's posted form on a window's page is answered: done, or why not (never silently dropped)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from wanmon.inventory.models import Carrier
from wanmon.maintenance.services import maintenance_window_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def window(topology):
    return maintenance_window_create(reference="GEANT-CHG-0042", carrier=Carrier.objects.get(code="GEANT"),
                                     start=datetime(2026, 3, 10, 3, 0, tzinfo=UTC),
                                     end=datetime(2026, 3, 10, 4, 30, tzinfo=UTC), affects=["geant-ams"])


def test_a_comment_is_added_and_said_so(operator_client, window):
    page = operator_client.post(f"/maintenance/{window.pk}/comment/", {"text": "confirmed"}, follow=True)
    assert "Comment added." in page.content.decode()
    assert window.events.filter(kind="comment", note="confirmed").count() == 1


def test_a_comment_the_form_refuses_says_why_and_adds_nothing(operator_client, window):
    page = operator_client.post(f"/maintenance/{window.pk}/comment/", {"text": "x" * 5001}, follow=True)
    assert page.status_code == 200
    assert "at most 5000 characters" in page.content.decode()
    assert not window.events.filter(kind="comment").exists()
