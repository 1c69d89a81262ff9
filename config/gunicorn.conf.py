"""gunicorn's settings: one file for every way ffkv is served.

The Dockerfile, docker-compose's ``web`` and ``bench/api_load.py`` all start
``gunicorn -c config/gunicorn.conf.py config.wsgi:application``, so the API benchmark
(docs/benchmarks.md) measures what is deployed. The environment overrides each number for
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
- ``forwarded_allow_ips`` follows the app's proxy setting, ``FFKV_TRUSTED_PROXIES``:
  gunicorn's own default trusted ``X-Forwarded-Proto`` from 127.0.0.1 whatever that
  said, so a client on the host (or anything relaying from it) could make Django take
  plain HTTP for HTTPS. With no trusted proxy (0, the default) gunicorn trusts no peer's
  forwarded headers; with one or more, the peers named in ``FFKV_PROXY_ADDRESSES``
  (addresses or networks, comma-separated), or any peer where it is unset or ``*``:
  Django then trusts the proxy's header from any peer anyway (``SECURE_PROXY_SSL_HEADER``),
  which is sound only where the proxies alone can reach this port.
"""

from __future__ import annotations

import ipaddress
import os


def _forwarded_allow_ips() -> str:
    raw = os.environ.get("FFKV_TRUSTED_PROXIES", "").strip() or "0"
    try:
        proxies = int(raw)
    except ValueError:
        proxies = -1
    if proxies < 0:
        raise ValueError(f"FFKV_TRUSTED_PROXIES must be 0 or more, not {raw!r}")
    addresses = [a.strip() for a in os.environ.get("FFKV_PROXY_ADDRESSES", "").split(",")]
    addresses = [a for a in addresses if a]
    if proxies == 0:
        if addresses:
            raise ValueError(
                "FFKV_PROXY_ADDRESSES names proxies, but FFKV_TRUSTED_PROXIES is 0: set it "
                "to the number of proxies in front of the app, or leave the addresses out"
            )
        return ""
    for address in addresses:
        if address != "*":
            try:
                ipaddress.ip_network(address)
            except ValueError:
                raise ValueError(
                    f"FFKV_PROXY_ADDRESSES: {address!r} is not an address or a network"
                ) from None
    return ",".join(addresses) or "*"


bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
preload_app = os.environ.get("GUNICORN_PRELOAD", "1") == "1"
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "65"))
forwarded_allow_ips = _forwarded_allow_ips()
