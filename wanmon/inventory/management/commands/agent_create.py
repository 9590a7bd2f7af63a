"""``manage.py agent_create --site CODE [--name NAME]``: register a site agent and print its token once."""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from wanmon.inventory.choices import AgentScope
from wanmon.inventory.models import Equipment, Site
from wanmon.inventory.services import agent_create


class Command(BaseCommand):
    help = (
        "Register an agent for a site and print its API token on standard output, once: only a SHA-256 of it "
        "is stored. The default name is '<site>-agent-<n>'."
    )

    def add_arguments(self, parser):
        parser.add_argument("--site", required=True, help="site code, e.g. FZK")
        parser.add_argument("--name", help="agent name (default: <site code in lower case>-agent-<n>)")
        parser.add_argument("--equipment", action="append", default=[], metavar="NAME",
                            help="equipment the agent may poll via SNMP (repeatable)")
        parser.add_argument("--archive-only", action="store_true",
                            help="the token archives perfSONAR runs only (a toolkit's default-archives file)")
        parser.add_argument("--json", action="store_true", help='print {"name", "site", "token"} as JSON')

    def handle(self, *args, **options):
        site = Site.objects.filter(code=options["site"]).first()
        if site is None:
            raise CommandError(f"unknown site {options['site']!r}")
        names = options["equipment"]
        equipment = list(Equipment.objects.filter(name__in=names))
        missing = sorted(set(names) - {e.name for e in equipment})
        if missing:
            raise CommandError(f"unknown equipment: {', '.join(missing)}")
        try:
            scope = AgentScope.ARCHIVE if options["archive_only"] else AgentScope.AGENT
            agent, token = agent_create(site=site, name=options["name"], equipment=equipment, scope=scope)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        if options["json"]:
            self.stdout.write(json.dumps({"name": agent.name, "site": site.code, "token": token}))
            return
        # The token alone on standard output (TOKEN=$(manage.py agent_create ...)); the rest is for people.
        self.stderr.write(
            f"created agent {agent.name!r} for site {site.code}; its token is printed below, once: "
            "only its SHA-256 is stored. Put it in the agent's token_file."
        )
        self.stdout.write(token)
