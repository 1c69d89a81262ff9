"""Every field of a JSONL v1 line, level by level, in the order the export writes them.

A field is *required* (the v1 contract: a line without it is refused) or *additive*
(added since without changing v1: an export writes it, an import validates it where the
file has it and gives it a value of its own where not; docs/data-format.md, "Additive
fields"). ``column`` names the model's column the export reads under the field's name
(None: the export computes it); ``written`` says whether the export writes the field on
every line or only where it is set. The bounds (``lo``, ``hi``, ``max_len``) are the
import's checks; the caps come from ``annotate.limits``, shared with the API.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from annotate.limits import (
    MAX_ANNOTATORS_PER_KEY,
    MAX_DESCRIPTION,
    MAX_NOTE,
    MAX_PATTERNS_PER_ANNOTATION,
    MAX_TOP_K,
    MAX_VERSION,
)

SCHEMA = "ffkv.annotations/v1"
MAX_INT = 2**31 - 1
MIN_INT = -(2**31)
# A username, as sign-up takes it (django.contrib.auth's AbstractUser.username).
MAX_USERNAME = 150
# Text fields of a study, as its columns hold them (annotate.models.Study).
MAX_STUDY_NAME = 200
MAX_STUDY_TEXT = 500
# A token as a prefix holds it (annotate.models.TriggerPrefix).
MAX_TOKEN = 200
# Entries of a key's ``heldout_random`` or ``samples`` (mining stores 25 and 50; the
# line's size bounds them too).
MAX_KEY_EXAMPLES = 1_000
# A sample's band: 1 (the lowest) to this (docs/evidence.md, "What is stored per sampled key").
N_BANDS = 5
SAMPLE_KINDS = ("band", "random")
SOURCES = ("written", "suggestion")
GOLD_SOURCES = ("written", "adopted")
SCORE_NAMES = ("detection", "embedding", "shuffled_detection", "shuffled_embedding")

ALWAYS = "always"
IF_SET = "if set"  # written only where the value is not empty


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # as the docs name it: string, integer, number, boolean, object, list, time
    description: str
    required: bool = False
    rule: str = ""  # the constraint, in words, beyond the type
    column: str | None = None
    written: str = ALWAYS
    lo: int | None = None
    hi: int | None = None
    max_len: int | None = None
    nullable: bool = False


@dataclass(frozen=True)
class Level:
    """One object of a line: its path in a line (``prefixes[i]``) and its fields."""

    name: str
    path: str
    fields: tuple[Field, ...]

    # Computed once: the import reads them on every line.
    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @cached_property
    def required(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields if f.required)

    @cached_property
    def additive(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields if not f.required)

    @cached_property
    def _by_name(self) -> dict[str, Field]:
        return {f.name: f for f in self.fields}

    def __getitem__(self, name: str) -> Field:
        return self._by_name[name]

    def columns(self, *, written: str | None = None) -> tuple[str, ...]:
        """The model columns the export reads for this level, in the fields' order."""
        return tuple(
            f.column
            for f in self.fields
            if f.column is not None and (written is None or f.written == written)
        )

    def column_fields(self, *, written: str | None = None) -> tuple[str, ...]:
        """The names of the fields read from a column, in the same order as ``columns``."""
        return tuple(
            f.name
            for f in self.fields
            if f.column is not None and (written is None or f.written == written)
        )


def _time(name: str, description: str, *, nullable: bool = False) -> Field:
    return Field(
        name,
        "time or null" if nullable else "time",
        description,
        rule="ISO 8601 with a UTC offset",
        column=name,
        nullable=nullable,
    )


LINE = Level(
    "line",
    "",
    (
        Field("schema", "string", "the format's name", required=True, rule=f'`"{SCHEMA}"`'),
        Field("study", "object", "the study (`study` below), the same on every line", True),
        Field("key", "object", "the key (`key` below)", True),
        Field(
            "prefixes",
            "list",
            "the key's trigger examples (`prefixes[i]` below)",
            True,
            rule="1 to `top_k`, ranks from 1 without gaps",
        ),
        Field(
            "heldout",
            "list",
            "the key's held-out examples, ranks `top_k`+1 … 2·`top_k` (`heldout[i]` below); "
            "curators' and admins' only, never shown to an annotator",
            rule="at most `top_k`; ranks from `top_k`+1 without gaps",
        ),
        Field(
            "heldout_random",
            "list",
            "the key's held-out negatives: sentences drawn uniformly from the corpus "
            "(`heldout_random[i]` below); curators' and admins' only",
            rule=f"at most {MAX_KEY_EXAMPLES:,}",
            hi=MAX_KEY_EXAMPLES,
        ),
        Field(
            "samples",
            "list",
            "the key's samples below its top: bands 1 … 5, then the random ones "
            "(`samples[i]` below)",
            rule=f"at most {MAX_KEY_EXAMPLES:,}; no sentence in two of the key's sets",
            hi=MAX_KEY_EXAMPLES,
        ),
        Field(
            "annotations",
            "list",
            "one per annotator of the key (`annotations[j]` below)",
            True,
            rule=f"at most {MAX_ANNOTATORS_PER_KEY:,}; one per annotator",
            hi=MAX_ANNOTATORS_PER_KEY,
        ),
        Field(
            "gold",
            "object or null",
            "the key's curated annotation (`gold` below), or null",
            nullable=True,
        ),
        Field(
            "flags",
            "list",
            "the annotators' flags on the key (`flags[i]` below), by username",
            rule=f"at most {MAX_ANNOTATORS_PER_KEY:,}; one per annotator",
            hi=MAX_ANNOTATORS_PER_KEY,
        ),
    ),
)

STUDY = Level(
    "study",
    "study",
    (
        Field(
            "name",
            "string",
            "the study's name",
            True,
            rule=f"1 to {MAX_STUDY_NAME} characters",
            column="name",
            max_len=MAX_STUDY_NAME,
        ),
        Field(
            "model",
            "string",
            "the model mined",
            True,
            rule=f"at most {MAX_STUDY_TEXT} characters",
            column="model_name",
            max_len=MAX_STUDY_TEXT,
        ),
        Field(
            "corpus",
            "string",
            "the corpus mined",
            True,
            rule=f"at most {MAX_STUDY_TEXT} characters",
            column="corpus",
            max_len=MAX_STUDY_TEXT,
        ),
        Field(
            "top_k",
            "integer",
            "trigger examples kept per key",
            True,
            rule=f"1 to {MAX_TOP_K} (mining's running top-K)",
            column="top_k",
            lo=1,
            hi=MAX_TOP_K,
        ),
        Field(
            "seed",
            "integer",
            "the mining run's seed",
            True,
            rule="a 32-bit signed integer",
            column="seed",
            lo=MIN_INT,
            hi=MAX_INT,
        ),
        Field(
            "n_layers",
            "integer",
            "the model's layers (0: not known)",
            rule="0 or more; every key's layer at most this",
            column="n_layers",
            lo=0,
            hi=MAX_INT,
        ),
        Field(
            "d_ff",
            "integer",
            "keys per layer (0: not known)",
            rule="0 or more; every key's index below this",
            column="d_ff",
            lo=0,
            hi=MAX_INT,
        ),
        Field(
            "is_causal",
            "boolean",
            "a decoder (true) or an encoder",
            column="is_causal",
        ),
        Field(
            "vocab_size",
            "integer",
            "the vocabulary's size (0: not known)",
            rule="0 or more",
            column="vocab_size",
            lo=0,
            hi=MAX_INT,
        ),
        Field(
            "show_value_tokens",
            "boolean",
            "whether annotators see the value's top tokens",
            column="show_value_tokens",
        ),
        Field(
            "value_agreement",
            "object",
            "§4 over every key (`ffkv.value-agreement/v1`)",
            rule="`{}` for an encoder or where not counted; checked as the report reads it",
            column="value_agreement",
        ),
        Field(
            "mining_definitions",
            "object",
            "what the run ranked, in words, and the checkpoint's note",
            rule="at most 50 names of 100 characters, each a text or null",
            column="mining_definitions",
        ),
    ),
)

KEY = Level(
    "key",
    "key",
    (
        Field(
            "layer",
            "integer",
            "the key's layer, from 1",
            True,
            rule="1 or more",
            column="layer",
            lo=1,
            hi=MAX_INT,
        ),
        Field(
            "index",
            "integer",
            "the key's index in its layer, from 0",
            True,
            rule="0 or more",
            column="index",
            lo=0,
            hi=MAX_INT,
        ),
        Field(
            "value_top_tokens",
            "list",
            "the value projection's top tokens as `[token, probability]` pairs",
            True,
            rule="empty where not computed",
            column="value_top_tokens",
        ),
        Field(
            "value_top_token_ids",
            "list",
            "the ids of `value_top_tokens`",
            rule="none, or one integer per entry",
            column="value_top_token_ids",
        ),
        Field(
            "density",
            "number",
            "the share of the corpus's positions where the key is active",
            rule="0 to 1",
            column="density",
            lo=0,
            hi=1,
        ),
        Field(
            "max_coefficient",
            "number",
            "the largest memory coefficient",
            column="max_coefficient",
        ),
        Field(
            "mean_coefficient",
            "number",
            "the mean memory coefficient",
            column="mean_coefficient",
        ),
        Field(
            "histogram",
            "object",
            "the per-sentence maxima's counts",
            rule="`{}`, or ascending `edges` and one more `counts`",
            column="histogram",
        ),
        Field(
            "perturbation",
            "object",
            "§3.2's mean relative change per removal (`first`, `last`, `random`)",
            rule="each a number or null; `{}` where not measured",
            column="perturbation",
        ),
    ),
)

PREFIX = Level(
    "prefix",
    "prefixes[i]",
    (
        Field(
            "rank",
            "integer",
            "the example's rank, from 1",
            True,
            rule="1 to `top_k`, once each",
            column="rank",
            lo=1,
        ),
        Field("coefficient", "number", "its memory coefficient", True, column="coefficient"),
        Field("text", "string", "the prefix", True, column="text"),
        Field(
            "trigger_token",
            "string",
            "the prefix's last token",
            True,
            rule=f"at most {MAX_TOKEN} characters",
            column="trigger_token",
            max_len=MAX_TOKEN,
        ),
        Field(
            "next_token",
            "string or null",
            'the token after it: `"</s>"` at the end of the sentence, null where the '
            "sentence was cut",
            True,
            rule=f"at most {MAX_TOKEN} characters",
            column="next_token",
            max_len=MAX_TOKEN,
            nullable=True,
        ),
        Field("sentence", "string", "the whole sentence", True, column="sentence"),
        Field(
            "sentence_index",
            "integer",
            "the sentence's place in the corpus, from 0",
            True,
            rule="0 or more",
            column="sentence_index",
            lo=0,
            hi=MAX_INT,
        ),
        Field(
            "position",
            "integer",
            "the trigger token's place in the sentence, from 0",
            True,
            rule="0 or more",
            column="position",
            lo=0,
            hi=MAX_INT,
        ),
        Field(
            "trigger_token_id",
            "integer",
            "the trigger token's id",
            rule="-1 (none) or more",
            column="trigger_token_id",
            lo=-1,
            hi=MAX_INT,
        ),
        Field(
            "next_token_id",
            "integer",
            "the next token's id",
            rule="-1: the end of the sentence, or none; -2: unknown, exactly where "
            "`next_token` is null",
            column="next_token_id",
            lo=-2,
            hi=MAX_INT,
        ),
        Field(
            "suffix",
            "string",
            "the rest of the sentence (which an encoder saw)",
            column="suffix",
        ),
        Field(
            "trigger_start",
            "integer or null",
            "where the trigger starts in `text`, in code points",
            rule="with `trigger_end`: 0 <= start < end <= len(text), or both null",
            column="trigger_start",
            nullable=True,
        ),
        Field(
            "trigger_end",
            "integer or null",
            "where the trigger ends in `text`",
            rule="with `trigger_start`",
            column="trigger_end",
            nullable=True,
        ),
        Field(
            "trigger_token_bytes",
            "string",
            "the trigger token's raw bytes as lowercase hex",
            rule="at most 100 bytes; written only where the token is part of a multi-byte "
            "character",
            column="trigger_token_bytes",
            written=IF_SET,
        ),
        Field(
            "next_token_bytes",
            "string",
            "the next token's raw bytes as lowercase hex",
            rule="as `trigger_token_bytes`",
            column="next_token_bytes",
            written=IF_SET,
        ),
        Field(
            "tokens",
            "list",
            "the token strings, decoded one by one: a causal model's prefix, an encoder's "
            "whole sentence",
            rule=f"strings of at most {MAX_TOKEN} characters; `[]` where not computed",
            column="tokens",
        ),
        Field(
            "token_coefficients",
            "list",
            "the key's memory coefficient at each of `tokens`",
            rule="finite numbers, as many as `tokens`",
            column="token_coefficients",
        ),
    ),
)

# The fields of every stored example but the top-k's ``rank`` (docs/evidence.md).
_EXAMPLE = tuple(f for f in PREFIX.fields if f.name != "rank")

HELDOUT = Level(
    "held-out example",
    "heldout[i]",
    (
        Field(
            "rank",
            "integer",
            "the example's rank, after the top-k",
            True,
            rule="`top_k`+1 to 2·`top_k`, once each",
            column="rank",
            lo=1,
        ),
        *_EXAMPLE,
    ),
)

HELDOUT_RANDOM = Level("held-out random example", "heldout_random[i]", _EXAMPLE)

SAMPLE = Level(
    "sample",
    "samples[i]",
    (
        Field(
            "kind",
            "string",
            "`band` or `random`",
            True,
            rule="`band` or `random`; the bands first, by band",
            column="kind",
        ),
        Field(
            "band",
            "integer or null",
            "the band, 1 the lowest; null for a random sample",
            True,
            rule=f"1 to {N_BANDS} for a band sample, null for a random one",
            column="band",
            lo=1,
            hi=N_BANDS,
            nullable=True,
        ),
        Field(
            "band_low",
            "number or null",
            "the band's lower bound (the band is (`band_low`, `band_high`]); null for a "
            "random sample",
            True,
            rule="below `band_high`, and the `coefficient` between them (end points "
            "included); null for a random sample",
            column="band_low",
            nullable=True,
        ),
        Field(
            "band_high",
            "number or null",
            "the band's upper bound",
            True,
            rule="above `band_low`; null for a random sample",
            column="band_high",
            nullable=True,
        ),
        *_EXAMPLE,
    ),
)

# A key's stored examples beyond its top-k: the line's field, its level, and the kind(s)
# of ``annotate.models.KeyExample`` it holds.
EXAMPLE_SETS = (
    ("heldout", HELDOUT, ("heldout",)),
    ("heldout_random", HELDOUT_RANDOM, ("heldout_random",)),
    ("samples", SAMPLE, SAMPLE_KINDS),
)

_NOTE = Field(
    "note",
    "string",
    "the annotator's note",
    rule=f"at most {MAX_NOTE:,} characters",
    column="note",
    max_len=MAX_NOTE,
)
_VERSION = Field(
    "version",
    "integer",
    "the annotation's version, from 1",
    rule="1 or more",
    column="version",
    lo=1,
    hi=MAX_VERSION,
)
_TIMES = (
    _time("created_at", "when it was made"),
    Field(
        "updated_at",
        "time",
        "when it last changed",
        rule="ISO 8601 with a UTC offset; not before `created_at`",
        column="updated_at",
    ),
    _time("submitted_at", "when it was submitted, or null", nullable=True),
)
_STATUS = Field(
    "status",
    "string",
    "`draft` or `submitted`",
    True,
    rule="`draft` or `submitted`",
    column="status",
)
_LABELS = Field(
    "labels",
    "list",
    "one label per prefix, in rank order",
    True,
    rule='each what the patterns give (docs/science.md, "Labels")',
)

ANNOTATION = Level(
    "annotation",
    "annotations[j]",
    (
        Field(
            "annotator",
            "string",
            "the annotator's username",
            True,
            rule=f"a valid username, at most {MAX_USERNAME} characters; once per key",
            column="annotator__username",
            max_len=MAX_USERNAME,
        ),
        _STATUS,
        _NOTE,
        _VERSION,
        *_TIMES,
        Field(
            "active_seconds",
            "number",
            "the seconds the annotator worked on the key",
            rule="0 or more",
            column="active_seconds",
            lo=0,
        ),
        Field(
            "guideline_version",
            "integer or null",
            "the guidelines' version the annotator read",
            rule="1 or more, or null",
            column="guideline_version",
            lo=1,
            hi=MAX_INT,
            nullable=True,
        ),
        Field(
            "check",
            "boolean",
            "made on a check key (the export keeps it, the reports leave it out)",
            column="is_check",
        ),
        Field(
            "patterns",
            "list",
            "the annotator's patterns (`annotations[j].patterns[q]` below)",
            True,
            rule=f"at most {MAX_PATTERNS_PER_ANNOTATION:,}",
            hi=MAX_PATTERNS_PER_ANNOTATION,
        ),
        _LABELS,
    ),
)

_DESCRIPTION = Field(
    "description",
    "string",
    "what the prefixes share",
    True,
    rule=f"1 to {MAX_DESCRIPTION:,} characters (surrounding spaces dropped)",
    column="description",
    max_len=MAX_DESCRIPTION,
)
_KIND = Field(
    "kind",
    "string",
    "`shallow`, `semantic` or `shallow+semantic`",
    True,
    rule="`shallow`, `semantic` or `shallow+semantic`",
    column="kind",
)
_PREFIX_RANKS = Field(
    "prefix_ranks",
    "list",
    "the ranks of the prefixes the pattern covers",
    True,
    rule="at least 3, each a rank of the key, once",
)
_PATTERN_TIMES = (
    _time("created_at", "when it was written"),
    Field(
        "updated_at",
        "time",
        "when it last changed",
        rule="ISO 8601 with a UTC offset; not before `created_at`",
        column="updated_at",
    ),
)

_RULE = Field(
    "rule",
    "object or null",
    'a shallow pattern\'s rule, `{"type": "token" | "ngram" | "suffix", "value": str}` '
    '(docs/evidence.md, "Rules"), or null',
    rule="null, or a valid rule on a `shallow` or `shallow+semantic` pattern",
    column="rule",
    nullable=True,
)
_SCORES = Field(
    "scores",
    "object",
    "the held-out scores: `detection`, `embedding`, `shuffled_detection`, "
    '`shuffled_embedding` (docs/evidence.md, "Scores")',
    rule="`{}` until scored; else each of the four 0 to 1 or null",
    column="scores",
)

PATTERN = Level(
    "pattern",
    "annotations[j].patterns[q]",
    (
        _DESCRIPTION,
        _KIND,
        _PREFIX_RANKS,
        *_PATTERN_TIMES,
        Field(
            "source",
            "string",
            "how it was made",
            rule='`"written"` or `"suggestion"` (accepted from the machine\'s suggestions; '
            "kept through edits)",
            column="source",
        ),
        _RULE,
        _SCORES,
    ),
)

GOLD = Level(
    "gold",
    "gold",
    (
        Field(
            "annotator",
            "string or null",
            "the curator's username, or null",
            True,
            rule="a valid username; an admin or in the curator group",
            column="curator__username",
            max_len=MAX_USERNAME,
            nullable=True,
        ),
        _STATUS,
        _NOTE,
        _VERSION,
        Field("is_check", "boolean", "the key is a check key", column="is_check"),
        *_TIMES,
        Field(
            "patterns",
            "list",
            "the gold patterns (`gold.patterns[q]` below)",
            True,
            rule=f"at most {MAX_PATTERNS_PER_ANNOTATION:,}",
            hi=MAX_PATTERNS_PER_ANNOTATION,
        ),
        _LABELS,
    ),
)

GOLD_PATTERN = Level(
    "gold pattern",
    "gold.patterns[q]",
    (
        _DESCRIPTION,
        _KIND,
        _PREFIX_RANKS,
        Field(
            "source",
            "string",
            "how it was made",
            rule='`"written"` (the default) or `"adopted"`',
        ),
        Field(
            "source_annotator",
            "string or null",
            "whose pattern it adopted",
            rule="a username, or null; null for a written one",
            nullable=True,
        ),
        Field(
            "source_pattern",
            "integer or null",
            "the adopted pattern's 0-based place in that annotator's `patterns` on the line",
            rule="null where gone or unknown; null for a written one",
            nullable=True,
        ),
        *_PATTERN_TIMES,
        _RULE,
        _SCORES,
    ),
)

FLAG = Level(
    "flag",
    "flags[i]",
    (
        Field(
            "reason",
            "string",
            "why the key is flagged",
            True,
            rule="a known reason (a note needed for `other`)",
            column="reason",
        ),
        Field(
            "note",
            "string",
            "the flagger's note",
            rule=f"at most {MAX_NOTE:,} characters",
            column="note",
            max_len=MAX_NOTE,
        ),
        Field(
            "annotator",
            "string",
            "the flagger's username",
            True,
            rule="a valid username; one flag per annotator",
            column="annotator__username",
            max_len=MAX_USERNAME,
        ),
        _time("created_at", "when it was raised"),
    ),
)

LEVELS = (
    LINE,
    STUDY,
    KEY,
    PREFIX,
    HELDOUT,
    HELDOUT_RANDOM,
    SAMPLE,
    ANNOTATION,
    PATTERN,
    GOLD,
    GOLD_PATTERN,
    FLAG,
)
