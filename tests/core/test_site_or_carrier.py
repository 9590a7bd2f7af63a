"""A router and a calendar feed's token belong to a site or to a carrier, never to both: the database says no."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from wanmon.inventory.models import Carrier, Equipment, Site
from wanmon.maintenance.models import FeedToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def owners() -> tuple[Site, Carrier]:
    return Site.objects.create(code="CERN", name="CERN", tier=0), Carrier.objects.create(code="GEANT", name="GEANT")


@pytest.mark.parametrize(
    ("build", "constraint"),
    [
        (lambda name, site, carrier: Equipment(name=name, site=site, carrier=carrier), "equipment"),
        (
            lambda name, site, carrier: FeedToken(
                name=name, site=site, carrier=carrier, token_hash=name.ljust(64, "0"), token_prefix=name[:12]
            ),
            "feedtoken",
        ),
    ],
    ids=["equipment", "feed-token"],
)
def test_a_row_with_both_a_site_and_a_carrier_is_refused(owners, build, constraint):
    site, carrier = owners
    build("site-only", site, None).save()
    build("carrier-only", None, carrier).save()
    with pytest.raises(IntegrityError, match=f"_{constraint}_site_or_carrier"), transaction.atomic():
        build("both", site, carrier).save()
