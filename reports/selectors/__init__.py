"""Reads for the reports and the exports: a study into arrays, or into export records.

``study_arrays`` costs a fixed number of queries whatever the size of the study; each
returns integer columns read straight into numpy arrays (on PostgreSQL as one binary
array per column), never model instances. ``export_chunks`` costs a fixed number of
queries per chunk of keys and holds one chunk at a time.
Labels are derived from patterns exactly as the workspace derives them
(``annotate.labels``: ``LABEL_OF_BITS`` for arrays, ``prefix_labels`` for records).
"""
