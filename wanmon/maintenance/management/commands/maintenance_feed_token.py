"""manage.py maintenance_feed_token create NAME [--site CODE | --carrier CODE] | revoke NAME | list."""

from django.core.management.base import BaseCommand, CommandError

from wanmon.inventory.management.commands._common import carrier_option, site_option
from wanmon.maintenance.models import FeedToken
from wanmon.maintenance.services import feed_token_create, feed_token_revoke, feed_urls


class Command(BaseCommand):
    help = "Create (prints the subscription URL once), revoke or list iCalendar feed tokens."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="a new token; prints its feed URLs once")
        create.add_argument("name")
        create.add_argument("--site", help="limit the token to this site's feed")
        create.add_argument("--carrier", help="limit the token to this carrier's feed")
        revoke = sub.add_parser("revoke", help="revoke every active token of this name")
        revoke.add_argument("name")
        sub.add_parser("list", help="tokens (never their secret)")

    def handle(self, *args, **options):
        action = options["action"]
        if action == "create":
            site, carrier = site_option(options.get("site")), carrier_option(options.get("carrier"))
            if site and carrier:
                raise CommandError("limit a token to a site or to a carrier, not both")
            token, secret = feed_token_create(name=options["name"], site=site, carrier=carrier)
            urls = feed_urls(secret, site=site, carrier=carrier)
            self.stdout.write(f"token {token.name} ({token.token_prefix}...) created; this is shown once:")
            self.stdout.write(urls["url"])
            self.stdout.write(urls["webcal"])
        elif action == "revoke":
            tokens = FeedToken.objects.filter(name=options["name"], revoked_at__isnull=True)
            if not tokens:
                raise CommandError(f"no active token named {options['name']!r}")
            for token in tokens:
                feed_token_revoke(token=token)
                self.stdout.write(f"revoked {token}")
        else:
            for token in FeedToken.objects.select_related("site", "carrier"):
                scope = "all"
                if token.site:
                    scope = f"site {token.site.code}"
                elif token.carrier:
                    scope = f"carrier {token.carrier.code}"
                state = f"revoked {token.revoked_at:%Y-%m-%d}" if token.revoked_at else "active"
                self.stdout.write(f"{token.name}\t{token.token_prefix}...\t{scope}\t{state}")
