"""Reads of the annotation domain, one module per sub-domain (as ``annotate.apis``).

Every selector that an API request calls costs a fixed number of queries, whatever the
number of keys, prefixes, patterns or annotators (``tests/api`` counts them).
"""
