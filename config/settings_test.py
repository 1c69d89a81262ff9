"""The small test overlay on top of the one settings module."""

import os
from pathlib import Path

# Tests keep their runtime data (file-system broker, mining stores) apart from the demo's,
# so that a message a test queued is never consumed by `make demo`'s worker.
os.environ.setdefault("FFKV_DATA_DIR", str(Path(__file__).resolve().parent.parent / "var" / "test"))

from .settings import *  # noqa: F403
from .settings import REST_FRAMEWORK

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
REST_FRAMEWORK = {
    **REST_FRAMEWORK,
    "DEFAULT_THROTTLE_RATES": {
        "login": "5/min",
        "login_username": "5/min",
        "password_link": "5/min",
    },
}
CELERY_TASK_ALWAYS_EAGER = False
