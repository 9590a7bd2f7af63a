"""manage.py create_readonly_role: a PostgreSQL login that may only read the wanmon_* views."""

import os
import re

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from psycopg import sql

from wanmon.measurements.sql_views import VIEW_NAMES

ROLE_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class Command(BaseCommand):
    help = (
        "Create (or update) a read-only PostgreSQL role for psql, pandas or Grafana: LOGIN, SELECT on the "
        "documented wanmon_* views only. Idempotent."
    )

    def add_arguments(self, parser):
        parser.add_argument("--name", default="wanmon_readonly", help="role name (default wanmon_readonly)")
        parser.add_argument(
            "--password-env",
            default="WANMON_READONLY_PASSWORD",
            help="environment variable holding the password (never on the command line)",
        )
        parser.add_argument(
            "--tables", action="store_true", help="also grant SELECT on the raw measurements_* and inventory_* tables"
        )

    def handle(self, *args, name, password_env, tables, **options):
        if not ROLE_RE.match(name):
            raise CommandError(f"--name: {name!r} is not a plain lower-case PostgreSQL identifier")
        password = os.environ.get(password_env)
        if not password:
            raise CommandError(f"set the password in ${password_env} (it is not accepted on the command line)")
        role = sql.Identifier(name)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name])
            verb = "ALTER" if cursor.fetchone() else "CREATE"
            cursor.execute(
                sql.SQL("{} ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {}").format(
                    sql.SQL(verb), role, sql.Literal(password)
                )
            )
            cursor.execute(
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(
                    sql.Identifier(connection.settings_dict["NAME"]), role
                )
            )
            cursor.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role))
            for view in VIEW_NAMES:
                cursor.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(view), role))
            granted = list(VIEW_NAMES)
            if tables:
                cursor.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND "
                    "(tablename LIKE 'measurements\\_%%' OR tablename LIKE 'inventory\\_%%')"
                )
                for (table,) in cursor.fetchall():
                    cursor.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(table), role))
                    granted.append(table)
        self.stdout.write(f"{verb.lower()}d role {name}: SELECT on {len(granted)} relations")
