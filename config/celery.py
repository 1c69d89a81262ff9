"""The Celery application. Tasks live in the apps and use ``@shared_task``."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("ffkv")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
