"""manage.py storage_policies: enable TimescaleDB compression when the running edition offers it."""

from django.core.management.base import BaseCommand

from wanmon.measurements.storage import storage_policies_apply


class Command(BaseCommand):
    help = "Enable compression of older chunks on the TimescaleDB community edition; nothing on the Apache edition."

    def handle(self, *args, **options):
        report = storage_policies_apply()
        if report.community:
            self.stdout.write(f"TimescaleDB community edition: compression enabled on {', '.join(report.compression)}")
        else:
            edition = report.license or "absent"
            self.stdout.write(f"TimescaleDB edition {edition}: no compression (Apache-2 features only)")
