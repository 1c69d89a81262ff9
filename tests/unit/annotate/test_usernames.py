"""Usernames: the normal form, the skeleton of look-alikes, and mixed scripts."""

from __future__ import annotations

import pytest

from annotate.usernames import (
    username_mixes_scripts,
    username_normal,
    username_scripts,
    username_skeleton,
)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("cаrol", "carol"),  # Cyrillic а
        ("ａlice", "alice"),  # fullwidth a
        ("ALICE", "alice"),
        ("ΑΒΕ", "abe"),  # Greek capitals
        ("Нор", "hop"),  # Cyrillic capital en, o, er
        ("ѕаѕһа", "sasha"),
        ("ɑlıce", "alice"),  # Latin alpha and dotless i
    ],
)
def test_look_alikes_share_a_skeleton(a, b):
    assert username_skeleton(a) == username_skeleton(b)


@pytest.mark.parametrize(("a", "b"), [("carol", "carl"), ("bob", "bob2"), ("张三", "张四")])
def test_different_names_keep_different_skeletons(a, b):
    assert username_skeleton(a) != username_skeleton(b)


def test_the_normal_form_is_nfkc_without_surrounding_spaces():
    assert username_normal(" ａｌｉｃｅ ") == "alice"
    assert username_normal("ﬁona") == "fiona"  # the fi ligature
    assert username_normal("Иван") == "Иван"


@pytest.mark.parametrize(
    ("name", "mixed"),
    [
        ("cаrol", True),
        ("Σofia", True),
        ("Иванσ", True),  # Cyrillic with Greek
        ("Иван", False),
        ("Σοφία", False),
        ("张三", False),
        ("张san", False),  # Han beside Latin: no look-alikes between them
        ("bob_2@x.y-z+1", False),
        ("ｃａｒｏｌ", False),
    ],
)
def test_mixed_scripts(name, mixed):
    assert username_mixes_scripts(name) is mixed


def test_scripts_ignore_digits_and_punctuation():
    assert username_scripts("a1.b_c") == {"LATIN"}
    assert username_scripts("123") == set()
