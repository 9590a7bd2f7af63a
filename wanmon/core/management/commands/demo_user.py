"""Create the demo superuser from DJANGO_SUPERUSER_USERNAME/PASSWORD/EMAIL; an existing one keeps its password."""

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

#: The last line printed when the user exists with another password (scripts/demo then does not print one).
OTHER_PASSWORD = "has another password"


class Command(BaseCommand):
    help = ("Create the demo login (idempotent). An existing user keeps its password: resetting it would end "
            "every session of a running demo and undo a password its users chose.")

    def handle(self, *args, **options):
        username = os.environ.get("DJANGO_SUPERUSER_USERNAME")
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD")
        if not username or not password:
            raise CommandError("set DJANGO_SUPERUSER_USERNAME and DJANGO_SUPERUSER_PASSWORD")
        user, created = get_user_model().objects.get_or_create(
            username=username, defaults={"email": os.environ.get("DJANGO_SUPERUSER_EMAIL", "")}
        )
        if created:
            user.set_password(password)
        if created or not (user.is_staff and user.is_superuser):
            user.is_staff = user.is_superuser = True
            user.save()
        if created:
            self.stdout.write(f"created user {username}")
        elif user.check_password(password):
            self.stdout.write(f"kept user {username} and its password")
        else:
            self.stdout.write(f"kept user {username}: it {OTHER_PASSWORD} than DJANGO_SUPERUSER_PASSWORD (not reset)")
