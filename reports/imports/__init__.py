"""Import the JSONL v1 (docs/data-format.md, "Import") into a new study: validate every
line, then write in one go (``load.study_import``).

Two passes over the file: the first validates every line (and stops collecting after
``records.MAX_ERRORS`` errors); only a file without errors is read a second time and written, in
one transaction. So a bad line anywhere means nothing is written, and memory holds one
chunk of keys at a time, not the file.

Additive fields (docs/data-format.md, "Additive fields": v1 stays v1; the import
validates and keeps each one), as ``reports.exports`` writes them, so that a mined study
exported and imported gives the same report:

- ``study``: ``n_layers``, ``d_ff``, ``vocab_size`` (integers, 0: not known; every key's
  layer at most n_layers and index below d_ff), ``is_causal``, ``show_value_tokens``
  (booleans), ``value_agreement`` ({} or §4's counts over every key in the format
  ffkv.value-agreement/v1, checked as the report reads them, against n_layers and
  vocab_size; {} for an encoder), ``mining_definitions`` (names to a text or null);
- ``key``: ``value_top_token_ids`` (none, or one id per value_top_tokens entry),
  ``density`` (0 to 1), ``max_coefficient``, ``mean_coefficient``, ``histogram`` ({} or
  ascending ``edges`` and one more ``counts``), ``perturbation`` (first, last, random: a
  number or null);
- ``prefixes[i]``: ``trigger_token_id`` (-1: none), ``next_token_id`` (-1: the end of the
  sentence, or none; -2, unknown, exactly where next_token is null), ``suffix``,
  ``trigger_start`` and ``trigger_end`` (together: the trigger's character span in
  ``text``, 0 <= start < end <= len(text), or both null: unknown),
  ``trigger_token_bytes`` and ``next_token_bytes`` (the token's raw bytes as lowercase
  hex, at most 100 bytes, where it alone is part of a multi-byte character; "" none).

A file without them imports as a v1 file: no token ids (so §4 over the sampled keys has
no keys), no counts of §4 over every key, no mining definitions, no perturbation or key
statistics, vocabulary size 0, n_layers the largest layer and d_ff the largest index + 1,
each prefix's suffix the rest of its sentence, no trigger span (the workspace then finds
the trigger at the end of the text).

- ``annotations[j]``: ``note`` (at most ``MAX_NOTE`` characters), ``version`` (from 1),
  ``created_at``, ``updated_at`` (ISO 8601 with a UTC offset; updated not before
  created), ``submitted_at`` (the same, or null); each pattern's ``created_at`` and
  ``updated_at``.

- ``annotations[j]``: ``active_seconds`` (a finite number, 0 or more),
  ``guideline_version`` (from 1, or null), ``check`` (true or false: made on a check
  key; the export keeps such annotations, the reports leave them out); each pattern's
  ``source``, which for an annotator's pattern can only be "written".
- ``gold`` (per key): null, or the key's gold annotation, checked as an annotation is
  (status, patterns by the 3-prefix rule, labels that follow from them, note, version,
  times) with ``annotator`` its curator's username or null, ``is_check``, and per
  pattern ``source`` ("written", the default, or "adopted"), ``source_annotator`` and
  ``source_pattern``: null both for a written pattern; for an adopted one a username or
  null (any username: an account may annotate no key of the file), and null or the
  0-based place of the adopted pattern in the ``patterns`` of that annotator's
  annotation on the same line, which must exist.

- ``flags`` (per key): the annotators' flags on the key, each ``reason`` (a known one),
  ``annotator`` (a username: one flag each, an unknown one becomes an inactive
  annotator), ``note`` and ``created_at`` (optional: empty, the time of the import),
  checked as a flag is when it is raised (``annotate.services.flags.key_flag_checked``).

A file without them: an empty note, version 1, the time of the import (submitted_at too
for a submitted annotation), no active time, no guideline version, no check
annotations, no gold, no flags. A curator unknown here becomes an inactive member of the
curator group; a known one must be an admin or in that group (``annotate.imports``).

What the round trip normalises (export(import(x)) equals x up to these): lines come out
in (layer, index) order, prefixes by rank, annotations by annotator; a pattern's
prefix_ranks ascending; a pattern's description without surrounding spaces; integers
given for float fields (coefficient, density, histogram edges, perturbation) come back
as floats; additive fields that x lacks come out with the values the import gave them; times come
out in UTC (``+00:00``).
A null next_token (the sentence was cut: docs/data-format.md, "JSONL v1") stays null.

The study object is the same on every line: a line whose study is written as the last
valid one's is not checked again (its §4 counts are the largest part of it).
"""
