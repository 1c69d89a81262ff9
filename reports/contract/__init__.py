"""The JSONL v1 contract (docs/data-format.md, "JSONL v1"), declared once: every field of
every level of a line (``records``), and the columns of the CSV and Parquet tables
(``tables``). The export writes from it, the import validates against it, and
docs/data-format.md's tables are rendered from it (``docs``, ``manage.py contract``)."""
