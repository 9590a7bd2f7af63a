"""``manage.py psconfig_url --site CODE`` (or ``--mesh``): a pSConfig template's URL, its token created if needed."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand
from django.urls import reverse

from wanmon.inventory.choices import HostRole
from wanmon.inventory.management.commands._common import site_option
from wanmon.perfsonar.services import psconfig_token_ensure


class Command(BaseCommand):
    help = (
        "Print on standard output the full URL of a site's pSConfig template (or the whole mesh's), creating its "
        "read-only token if needed. A site's template archives every run to wanmon with the token of the site's "
        "agent '<site>-perfsonar' (created if missing). On the toolkit: psconfig remote add URL"
    )

    def add_arguments(self, parser):
        scope = parser.add_mutually_exclusive_group(required=True)
        scope.add_argument("--site", help="site code, e.g. FZK: the tests of that site's perfSONAR hosts")
        scope.add_argument("--mesh", action="store_true", help="every test of the mesh (no archive: see the docs)")

    def handle(self, *args, **options):
        site = site_option(options["site"])
        access = psconfig_token_ensure(site=site)
        path = reverse("perfsonar-psconfig", kwargs={"token": access.secret})
        url = f"{settings.WANMON_BASE_URL.rstrip('/')}{path}"
        scope = f"site {site.code}" if site else "the whole mesh"
        state = "created" if access.created else "existing"
        # The URL alone on standard output (URL=$(manage.py psconfig_url ...)); the rest is for people.
        self.stderr.write(f"pSConfig template of {scope} ({state} read-only token); {access.note}.")
        if site is not None and not site.hosts.filter(role=HostRole.TEST).exists():
            self.stderr.write(f"warning: site {site.code} has no test host in the inventory: its template has no task")
        self.stderr.write(f"on the perfSONAR toolkit: psconfig remote add {url}")
        self.stdout.write(url)
