"""Evidence beyond the top-k (docs/evidence.md): pattern rules, the MiniLM embedder, the
held-out scores and the machine's suggestions.

``rules`` is pure Python and safe in web processes; ``embedding`` imports torch lazily,
so only the Celery jobs and commands that score or suggest load the model.
"""
