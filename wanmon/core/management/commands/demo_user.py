"""Create or update the demo superuser from DJANGO_SUPERUSER_USERNAME/PASSWORD/EMAIL."""

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Create the demo login (idempotent; resets its password to DJANGO_SUPERUSER_PASSWORD)."

    def handle(self, *args, **options):
        username = os.environ.get("DJANGO_SUPERUSER_USERNAME")
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD")
        if not username or not password:
            raise CommandError("set DJANGO_SUPERUSER_USERNAME and DJANGO_SUPERUSER_PASSWORD")
        user, created = get_user_model().objects.get_or_create(
            username=username, defaults={"email": os.environ.get("DJANGO_SUPERUSER_EMAIL", "")}
        )
        user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
        self.stdout.write(f"{'created' if created else 'updated'} user {username}")
