"""The reports API, admins only (annotators never see reports: docs/annotation.md,
"Reports"): the report of a study (JSON and CSV), exports (streamed, or as a background
job with progress) and the upload of a JSONL file into a new study."""
