"""The Celery application. Tasks live in the apps and use ``@shared_task``.

The embedded file-system broker's folders are made by the settings, for web and worker
processes alike.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("ffkv")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
