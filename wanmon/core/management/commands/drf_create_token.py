"""``manage.py drf_create_token USER [-r] [--days N] [--name TEXT]``: a new personal API token, printed once.

Kept under Django REST framework's command name and output ("Generated token KEY for user USER"), which scripts
and the README use; unlike DRF's, the token is stored as a hash and expires, so it is new on every run.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from wanmon.core.services import api_token_create, api_token_revoke_all


class Command(BaseCommand):
    help = (
        "Create a personal API token for USER (Authorization: Token <key>) and print it once: only its SHA-256 is "
        "stored. It expires after --days (default WANMON_API_TOKEN_DAYS, 90)."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", help="the user the token acts as (with the user's roles)")
        parser.add_argument("-r", "--reset", action="store_true", help="revoke the user's other tokens first")
        parser.add_argument("--days", type=int, help="days until it expires (default WANMON_API_TOKEN_DAYS)")
        parser.add_argument("--name", default="", help="what it is for, shown in the admin")

    def handle(self, *args, **options):
        username = options["username"]
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"unknown user {username!r}")
        if options["days"] is not None and options["days"] < 1:
            raise CommandError("--days: a token is valid for at least 1 day")
        if options["reset"]:
            revoked = api_token_revoke_all(user=user)
            self.stderr.write(f"revoked {revoked} token(s) of {username}")
        token, secret = api_token_create(user=user, days=options["days"], name=options["name"])
        self.stderr.write(
            f"valid until {token.expires_at:%Y-%m-%d %H:%M} UTC; shown this once (only its SHA-256 is stored)"
        )
        self.stdout.write(f"Generated token {secret} for user {username}")
