"""Bounds on what a write may carry, shared by the services, the API and the import, so
that a huge value is a clear 400 and not a slow write (docs/reliability.md, "Headers and
limits")."""

from __future__ import annotations

MAX_DESCRIPTION = 2_000  # characters of a pattern's description
MAX_NOTE = 20_000  # characters of an annotation's note
MAX_RANKS = 1_000  # prefixes named by one pattern
MAX_RANK = 100_000
MAX_VERSION = 2**31 - 1
MAX_LAYER = 10_000  # layers are numbered from 1
MAX_LIST = 1_000  # items of a comma-separated list in a query string
# A study's top_k, as an import takes it: mining keeps a running top-64 per key
# (mining.core.MineConfig.keep_k). A mined study's top_k is smaller still (at most 28:
# mining keeps the top 2·top_k, docs/evidence.md), and the mining API caps it there.
MAX_TOP_K = 64
# Annotators of one key: an assignment's overlap (annotators per key) is at most this.
MAX_ANNOTATORS_PER_KEY = 1_000
# Patterns of one annotation (an annotator's, or a key's gold) that an import takes.
MAX_PATTERNS_PER_ANNOTATION = 1_000
