"""The import's error messages, each a module constant that the tests assert: a line's
message names its line and field (``FIELD_ERROR``), a file's names what is wrong with it."""

from __future__ import annotations

from annotate.limits import MAX_ANNOTATORS_PER_KEY, MAX_PATTERNS_PER_ANNOTATION
from annotate.models import KeyFlag
from annotate.services.patterns import PATTERN_MIN_PREFIXES

from ..contract.records import (
    SCHEMA,
)

NOT_JSON = "line {line}: not valid JSON"
NESTED_TOO_DEEPLY = "line {line}: not valid JSON (nested too deeply)"
NOT_UTF8 = "line {line}: not valid UTF-8"
FIELD_ERROR = "line {line}: {field}: {message}"
EMPTY_FILE = "The file holds no keys."
# Worded for no one interface: the command line and the browser's form add how to give
# another name (ImportFileError.code "study_name_taken").
STUDY_NAME_TAKEN = "A study named {name!r} already exists; give the new study another name."
NOT_JSONL = (
    "This is not a JSONL file: {why}. Import takes a JSONL export (ffkv.annotations/v1: "
    "UTF-8 text, one JSON object per line); CSV and Parquet exports cannot be imported."
)
NOT_JSONL_TEXT = "it is not UTF-8 text"
NOT_JSONL_FIRST_LINE = "its first line is not a JSON object"
LINE_TOO_LONG = "line {line}: longer than {limit} MiB (a line of an export holds one key)"
STUDY_NAME_INVALID = "The study name must be 1 to 200 characters."
MORE_ERRORS = "... and more errors (only the first {n} are listed)."
MISSING = "required field missing"
UNKNOWN_FIELD = "unknown field"
NOT_OBJECT = "must be an object"
NOT_LIST = "must be a list"
NOT_INT = "must be an integer"
NOT_NUMBER = "must be a finite number"
NOT_STRING = "must be a string"
OUT_OF_RANGE = "must be between {lo} and {hi}"
TOO_LONG = "must be at most {n} characters"
EMPTY_STRING = "must not be empty"
NUL_CHARACTER = "must not contain a NUL character"
SURROGATE_CHARACTER = "must not contain a lone surrogate (\\ud800-\\udfff)"
SCHEMA_WRONG = f"must be {SCHEMA!r}"
STUDY_DIFFERS = "differs from the study of line {line}"
RANK_OUT_OF_RANGE = "must be between 1 and top_k ({top_k})"
TOO_MANY_PREFIXES = "at most top_k ({top_k}) prefixes, got {n}"
TOO_MANY_ANNOTATIONS = f"at most {MAX_ANNOTATORS_PER_KEY} annotations per key, got {{n}}"
TOO_MANY_PATTERNS = f"at most {MAX_PATTERNS_PER_ANNOTATION} patterns per annotation, got {{n}}"
RANK_REPEATED = "rank {rank} appears twice"
RANKS_NOT_CONTIGUOUS = "ranks must run from 1 to the number of prefixes without gaps"
NO_PREFIXES = "a key needs at least one prefix"
DUPLICATE_KEY = "layer {layer}, index {index} is already on line {line}"
PAIR_NOT_TWO = "must be a [token, probability] pair"
STATUS_UNKNOWN = "must be 'draft' or 'submitted'"
KIND_UNKNOWN = "must be 'shallow', 'semantic' or 'shallow+semantic'"
PATTERN_TOO_FEW = f"a pattern must cover at least {PATTERN_MIN_PREFIXES} prefixes"
PATTERN_RANK_REPEATED = "a pattern cannot cover the same prefix twice"
PATTERN_RANK_UNKNOWN = "rank {rank} is not a prefix of this key"
ANNOTATOR_TWICE = "{name!r} annotates this key twice"
ANNOTATOR_INVALID = "is not a valid username (letters, digits and @.+-_ only, 150 at most)"
LABEL_UNKNOWN = "unknown label {label!r}"
LABEL_COUNT = "one label per prefix: expected {n}, got {m}"
LABEL_MISMATCH = "{label!r} does not follow from the patterns (expected {expected!r})"
# The additive fields (docs/data-format.md, "Additive fields")
NOT_BOOL = "must be true or false"
NOT_STRING_OR_NULL = "must be a string or null"
NOT_NUMBER_OR_NULL = "must be a finite number or null"
TOO_MANY_ENTRIES = "must have at most {n} entries"
LAYER_ABOVE_N_LAYERS = "must be at most study.n_layers ({n})"
INDEX_NOT_BELOW_D_FF = "must be below study.d_ff ({n})"
VOCAB_DIFFERS = "must equal study.vocab_size ({n})"
COUNTS_ON_ENCODER = "must be empty for an encoder (is_causal false)"
VALUE_IDS_COUNT = "one id per value_top_tokens entry (or none): expected {n}, got {m}"
HISTOGRAM_COUNTS = "one more count than edges: expected {n}, got {m}"
HISTOGRAM_EDGES = "must ascend"
NEXT_ID_NOT_UNKNOWN = "must be -2 where next_token is null (the sentence was cut)"
NEXT_ID_UNKNOWN = "-2 (unknown) only where next_token is null"
TRIGGER_SPAN_PAIR = "trigger_start and trigger_end go together: both integers, or both null"
TRIGGER_SPAN_RANGE = "must be a span of text: 0 <= trigger_start < trigger_end <= {n}"
NOT_TIME = "must be an ISO 8601 date and time with a UTC offset (2026-12-01T09:30:00+00:00)"
NOT_TIME_OR_NULL = f"{NOT_TIME} or null"
UPDATED_BEFORE_CREATED = "must not be before created_at"
NOT_NEGATIVE_NUMBER = "must be a finite number, 0 or more"
NOT_INT_OR_NULL = "must be an integer from 1, or null"
SOURCE_NOT_ANNOTATORS = "an annotator's pattern must be 'written' or 'suggestion'"
SOURCE_UNKNOWN = "must be 'written' or 'adopted'"
SOURCE_OF_WRITTEN = "only an adopted pattern has a source (must be null)"
SOURCE_PATTERN_NEEDS_ANNOTATOR = "needs source_annotator, one of this key's annotators"
SOURCE_ANNOTATOR_NOT_HERE = "{name!r} does not annotate this key (source_pattern names a pattern)"
SOURCE_PATTERN_OUT_OF_RANGE = "{name!r} has {n} patterns on this key: must be from 0 to {last}"
FLAG_REASON_UNKNOWN = "must be one of " + ", ".join(repr(r) for r in KeyFlag.Reason.values)
FLAG_TWICE = "{name!r} flags this key twice (one flag per annotator and key)"
TOO_MANY_FLAGS = f"at most {MAX_ANNOTATORS_PER_KEY} flags per key, got {{n}}"
TOKEN_BYTES_NOT_HEX = "must be the token's bytes as lowercase hex (two digits a byte, at most 200)"
# Evidence beyond the top-k (docs/evidence.md)
TOKENS_PAIR = "tokens and token_coefficients go together: both lists, or neither"
TOKEN_COUNT = "one coefficient per token: expected {n}, got {m}"
TOO_MANY_HELDOUT = "at most top_k ({top_k}) held-out examples, got {n}"
HELDOUT_RANK_RANGE = "must be between top_k+1 ({lo}) and 2·top_k ({hi})"
HELDOUT_RANKS_NOT_CONTIGUOUS = "held-out ranks must run from top_k+1 ({lo}) without gaps"
TOO_MANY_EXAMPLES = "at most {n} entries, got {m}"
SAMPLE_KIND_UNKNOWN = "must be 'band' or 'random'"
BAND_NOT_BELOW = "must be below band_high ({high})"
NOT_IN_BAND = (
    "a band sample's coefficient lies in its band, from band_low ({low}) to band_high ({high})"
)
RANDOM_HAS_BAND = "a random sample has no band: must be null"
SENTENCE_TWICE = (
    "sentence {index} is already at {where} (a set holds a sentence once; a sample is never "
    "a top-k sentence, a held-out one never a visible one)"
)
RULE_ON_SEMANTIC = "a rule goes only on a shallow or shallow+semantic pattern"
SCORE_NOT_UNIT = "must be a number from 0 to 1, or null"
