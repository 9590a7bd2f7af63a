"""``manage.py agent_revoke NAME``: revoke an agent's token at once."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from wanmon.inventory.models import Agent
from wanmon.inventory.services import agent_revoke


class Command(BaseCommand):
    help = "Revoke the agent NAME: its token is refused from now on (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("name", help="agent name")

    def handle(self, *args, **options):
        agent = Agent.objects.filter(name=options["name"]).first()
        if agent is None:
            raise CommandError(f"unknown agent {options['name']!r}")
        if agent.revoked_at is not None:
            self.stdout.write(f"agent {agent.name!r} was already revoked at {agent.revoked_at.isoformat()}")
            return
        agent_revoke(agent=agent)
        self.stdout.write(f"revoked agent {agent.name!r} of site {agent.site.code}")
