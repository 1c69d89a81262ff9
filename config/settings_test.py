"""The small test overlay on top of the one settings module."""

from .settings import *  # noqa: F403
from .settings import REST_FRAMEWORK

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
REST_FRAMEWORK = {**REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"login": "5/min"}}
CELERY_TASK_ALWAYS_EAGER = False
