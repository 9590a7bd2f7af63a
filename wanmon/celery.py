"""The Celery application: Redis broker, configuration from Django settings (CELERY_*)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wanmon.settings")

app = Celery("wanmon")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
