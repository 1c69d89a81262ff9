"""The columns of the CSV and Parquet exports: four tables, each column with its
Parquet type (CSV writes the same columns as text) and what it holds. The rows are the
JSONL line's fields flattened (``reports.contract.records``); docs/data-format.md,
"CSV and Parquet", says how."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STRING = "string"
INT32 = "int32"
INT64 = "int64"
FLOAT64 = "float64"
BOOL = "bool"
TIME = "timestamp (UTC)"
RANKS = "list of int32"
# A list of texts or of numbers: a Parquet list, a JSON array in a CSV cell.
STRINGS = "list of string"
FLOATS = "list of float64"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    description: str


@dataclass(frozen=True)
class Table:
    name: str  # the file's name in the zip, without its suffix
    description: str
    columns: tuple[Column, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def time_columns(self) -> frozenset[str]:
        return frozenset(c.name for c in self.columns if c.type == TIME)

    def arrow_schema(self) -> Any:
        import pyarrow as pa

        types = {
            STRING: pa.string(),
            INT32: pa.int32(),
            INT64: pa.int64(),
            FLOAT64: pa.float64(),
            BOOL: pa.bool_(),
            TIME: pa.timestamp("us", tz="UTC"),
            RANKS: pa.list_(pa.int32()),
            STRINGS: pa.list_(pa.string()),
            FLOATS: pa.list_(pa.float64()),
        }
        return pa.schema([(c.name, types[c.type]) for c in self.columns])


_KEY_COLUMNS = (
    Column("study", STRING, "the study's name"),
    Column("layer", INT32, "the key's layer, from 1"),
    Column("index", INT64, "the key's index, from 0"),
)

LABELS = Table(
    "labels",
    "one row per prefix × annotator (a key no one annotated: one row per prefix)",
    (
        *_KEY_COLUMNS,
        Column("rank", INT32, "the prefix's rank"),
        Column("coefficient", FLOAT64, "its memory coefficient"),
        Column("text", STRING, "the prefix"),
        Column("trigger_token", STRING, "its last token"),
        Column("next_token", STRING, "the token after it"),
        Column("sentence", STRING, "the sentence"),
        Column("sentence_index", INT64, "the sentence's place in the corpus"),
        Column("position", INT32, "the trigger token's place in the sentence"),
        Column("annotator", STRING, "the annotator's username (the curator's on a gold row)"),
        Column("status", STRING, "the annotation's status"),
        Column("label", STRING, "the prefix's label"),
        Column("patterns", STRING, "the numbers of the patterns covering it (`1;3`)"),
        Column("gold", BOOL, "a row of the key's gold annotation"),
        Column("check", BOOL, "the annotation's `check`, or the gold's `is_check`"),
    ),
)

PATTERNS = Table(
    "patterns",
    "one row per key × annotator × pattern (an annotation without patterns: one row)",
    (
        *_KEY_COLUMNS,
        Column("annotator", STRING, "the annotator's username (the curator's on a gold row)"),
        Column("status", STRING, "the annotation's status"),
        Column("note", STRING, "its note"),
        Column("version", INT64, "its version"),
        Column("created_at", TIME, "when it was made"),
        Column("updated_at", TIME, "when it last changed"),
        Column("submitted_at", TIME, "when it was submitted"),
        Column("gold", BOOL, "a row of the key's gold annotation"),
        Column("check", BOOL, "the annotation's `check`, or the gold's `is_check`"),
        Column("active_seconds", FLOAT64, "the annotator's active time (empty on gold)"),
        Column("guideline_version", INT64, "the guidelines read (empty on gold)"),
        Column("pattern", INT32, "the pattern's number, from 1"),
        Column("description", STRING, "its description"),
        Column("kind", STRING, "its kind"),
        Column("prefix_ranks", RANKS, "the ranks it covers (`1;2;5` in CSV)"),
        Column("pattern_created_at", TIME, "when the pattern was written"),
        Column("pattern_updated_at", TIME, "when it last changed"),
        Column("source", STRING, "`written` or `suggestion`; on a gold row `written` or `adopted`"),
        Column("source_annotator", STRING, "whose pattern a gold pattern adopted"),
        Column("source_pattern", INT32, "the adopted pattern's `pattern` number"),
        Column("rule_type", STRING, "its rule's `type` (`token`, `ngram`, `suffix`); empty: none"),
        Column("rule_value", STRING, "its rule's `value`"),
        Column("detection", FLOAT64, "`scores.detection`; empty where not scored or null"),
        Column("embedding", FLOAT64, "`scores.embedding`"),
        Column("shuffled_detection", FLOAT64, "`scores.shuffled_detection`"),
        Column("shuffled_embedding", FLOAT64, "`scores.shuffled_embedding`"),
    ),
)

FLAGS = Table(
    "flags",
    "one row per flag",
    (
        *_KEY_COLUMNS,
        Column("annotator", STRING, "the flagger's username"),
        Column("reason", STRING, "why"),
        Column("note", STRING, "the flagger's note"),
        Column("created_at", TIME, "when it was raised"),
    ),
)

EXAMPLES = Table(
    "examples",
    "one row per stored example of a key: its top-k (`prefixes`), then `heldout`, "
    "`heldout_random` and `samples`, in the JSONL's order",
    (
        *_KEY_COLUMNS,
        Column("set", STRING, "`prefixes`, `heldout`, `heldout_random` or `samples`"),
        Column("rank", INT32, "the rank (top-k and held-out examples; empty otherwise)"),
        Column("kind", STRING, "a sample's `band` or `random` (empty otherwise)"),
        Column("band", INT32, "a band sample's band, 1 the lowest"),
        Column("band_low", FLOAT64, "its lower bound"),
        Column("band_high", FLOAT64, "its upper bound"),
        Column("coefficient", FLOAT64, "its memory coefficient"),
        Column("text", STRING, "the prefix"),
        Column("trigger_token", STRING, "its last token"),
        Column("next_token", STRING, "the token after it"),
        Column("sentence", STRING, "the sentence"),
        Column("sentence_index", INT64, "the sentence's place in the corpus"),
        Column("position", INT32, "the trigger token's place in the sentence"),
        Column("tokens", STRINGS, "the token strings (a JSON array in CSV)"),
        Column("token_coefficients", FLOATS, "the coefficient at each token (a JSON array in CSV)"),
    ),
)

TABLES = (LABELS, PATTERNS, FLAGS, EXAMPLES)
