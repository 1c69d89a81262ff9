"""gunicorn's settings: one file for every way ffkv is served.

The Dockerfile, docker-compose's ``web`` and ``bench/api_load.py`` all start
``gunicorn -c config/gunicorn.conf.py config.wsgi:application``, so the API benchmark
(DESIGN §8) measures what is deployed. The environment overrides each number for
another host (``WEB_CONCURRENCY`` is gunicorn's usual name for the worker count).

Sized for the reference host: 2 cores that also run PostgreSQL.

- ``gthread``: gunicorn faces browsers directly (docker-compose has no buffering proxy in
  front), and sync workers are only safe behind one: a slow or idle keep-alive client
  holds a whole sync process. A gthread worker parks idle connections in its poller.
- 2 workers, one per core: each request is Python-bound while it runs (the GIL), so a
  third process on 2 cores only adds context switches and memory.
- 4 threads each: about half of a request's time is spent waiting on PostgreSQL
  (measured: 10-13 round trips per annotator request), and another thread runs then;
  8 requests in flight for 20 annotators who think 1-3 s between requests.
- ``preload_app``: the app is loaded once in the master and shared by the workers, not
  loaded on each worker's first request. (Web processes never import torch: only the
  Celery workers that mine do.)
- ``keepalive`` above the think time of an annotator and above the 60 s idle timeout of
  common load balancers: a connection closed by the server just as the client reuses it
  fails that request (locust counts it as an error; browsers retry).
"""

from __future__ import annotations

import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
preload_app = os.environ.get("GUNICORN_PRELOAD", "1") == "1"
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "65"))
