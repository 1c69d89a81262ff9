"""Where a pattern's rule fires (docs/evidence.md, "Rules"), on hand-built prefixes."""

from __future__ import annotations

import pytest

from annotate.evidence.rules import RuleError, rule_hits, rule_matches, validate_rule

# (text of the prefix, trigger token as decoded)
EXAMPLES = [
    ("The capital of France", " France"),  # 0
    ("He lives in france", " france"),  # 1
    ("A history of the", " the"),  # 2
    ("Later on the ", " "),  # 3: trailing space, the trigger a bare space
    ("They were walking", "ing"),  # 4: the trigger is the end of a word
    ("She kept talking", " talking"),  # 5
    ("In the King", " King"),  # 6
    ("Walking", "Walking"),  # 7: one word, no leading space
]


def fired(rule: dict[str, str]) -> list[int]:
    return [i for i, hit in enumerate(rule_hits(rule, EXAMPLES)) if hit]


def test_token_rule_compares_the_trigger_without_its_leading_space() -> None:
    assert fired({"type": "token", "value": "france"}) == [0, 1]  # lowercase: any case
    assert fired({"type": "token", "value": "France"}) == [0]  # a capital: exact case
    assert fired({"type": "token", "value": "the"}) == [2]
    assert fired({"type": "token", "value": "ing"}) == [4]  # the whole token, not its end
    assert fired({"type": "token", "value": "walking"}) == [7]


def test_ngram_rule_is_the_end_of_the_text_without_trailing_spaces() -> None:
    assert fired({"type": "ngram", "value": "of the"}) == [2]
    assert fired({"type": "ngram", "value": "on the"}) == [3]  # "Later on the " ends so
    assert fired({"type": "ngram", "value": "capital of france"}) == [0]
    assert fired({"type": "ngram", "value": "Capital of France"}) == []  # case-sensitive


def test_suffix_rule_is_the_end_of_the_last_word() -> None:
    assert fired({"type": "suffix", "value": "ing"}) == [4, 5, 6, 7]  # "King" too
    assert fired({"type": "suffix", "value": "ce"}) == [0, 1]
    assert fired({"type": "suffix", "value": "King"}) == [6]
    assert fired({"type": "suffix", "value": "KING"}) == []
    assert rule_matches({"type": "suffix", "value": "x"}, "", "") is False  # no word at all


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("token", "null or an object"),
        ({"type": "regex", "value": "a"}, "rule type must be one of token, ngram, suffix"),
        ({"type": "token"}, "non-empty string"),
        ({"type": "token", "value": "  "}, "non-empty string"),
        ({"type": "token", "value": "a b"}, "one word"),
        ({"type": "suffix", "value": "a b"}, "one word"),
        ({"type": "ngram", "value": "a b c d"}, "final 1–3 tokens"),
        ({"type": "token", "value": "x" * 101}, "at most 100 characters"),
        ({"type": "token", "value": "a", "case": "x"}, "not case"),
    ],
)
def test_a_bad_rule_is_refused_with_what_is_wrong(rule: object, message: str) -> None:
    with pytest.raises(RuleError, match=message):
        validate_rule(rule)


def test_a_good_rule_is_kept_as_given() -> None:
    assert validate_rule(None) is None
    assert validate_rule({"type": "ngram", "value": "of the"}) == {
        "type": "ngram",
        "value": "of the",
    }
