import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# Import every view now rather than on each worker's first request. With gunicorn's
# preload_app the master pays it once and the workers share those pages. The views never
# import torch, numba or transformers: the workers do (tests/unit/test_web_imports.py).
get_resolver().url_patterns  # noqa: B018
# What was just loaded lives as long as the process (about 270,000 objects when the views
# still imported torch). Left to the collector, every full collection walks them all and stops the
# worker's threads for 150-360 ms (measured under bench/api_load.py), the API's slowest
# requests. Frozen, a collection sees only what requests allocate; forked workers
# inherit the frozen set and no longer write to its pages either.
gc.freeze()
