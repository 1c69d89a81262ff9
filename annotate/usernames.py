"""Usernames as people read them: one normal form, and the look-alikes that must not be
two accounts.

A name is stored in Unicode's NFKC form (fullwidth ``ａlice`` is ``alice``), as Django's
own sign-in form reads it. Two names are confusable when their skeletons are equal: NFKC,
then the Cyrillic and Greek letters that look like Latin ones mapped to those (a small
table of the common look-alikes, upper and lower case apart, since an uppercase Greek eta
looks like H and a lowercase one like n), then case folded. So ``cаrol`` (a Cyrillic а)
and ``CAROL`` both have the skeleton ``carol``.

A name that mixes Latin letters with Cyrillic or Greek ones (or Cyrillic with Greek) is
refused outright: no one writes a name so but to pass for another. A name written wholly
in one script (Chinese, Cyrillic, Greek) is fine; digits and ``@.+-_`` belong to none.

Pure Python, no Django: the services check new names against the accounts there are.
"""

from __future__ import annotations

import unicodedata

# Cyrillic and Greek letters that read as a Latin letter, and that letter. Not Unicode's
# full confusables table (thousands of entries): the letters a person could type or
# paste into a username field and take for Latin ones.
_LOOKALIKES = {
    # Cyrillic, lower case
    "а": "a",
    "в": "b",
    "е": "e",
    "ё": "e",
    "к": "k",
    "м": "m",
    "н": "h",
    "о": "o",
    "п": "n",
    "р": "p",
    "с": "c",
    "т": "t",
    "у": "y",
    "х": "x",
    "ь": "b",
    "ѕ": "s",
    "і": "i",
    "ї": "i",
    "ј": "j",
    "һ": "h",
    "ԁ": "d",
    "ԛ": "q",
    "ԝ": "w",
    "ӏ": "l",
    "ү": "y",
    "ѵ": "v",
    # Cyrillic, upper case
    "А": "A",
    "В": "B",
    "Е": "E",
    "Ё": "E",
    "К": "K",
    "М": "M",
    "Н": "H",
    "О": "O",
    "Р": "P",
    "С": "C",
    "Т": "T",
    "У": "Y",
    "Х": "X",
    "Ѕ": "S",
    "І": "I",
    "Ї": "I",
    "Ј": "J",
    "Ԁ": "D",
    "Ԛ": "Q",
    "Ԝ": "W",
    "Ӏ": "I",
    "Ү": "Y",
    "Һ": "H",
    # Greek, lower case
    "α": "a",
    "β": "b",
    "γ": "y",
    "ε": "e",
    "η": "n",
    "ι": "i",
    "κ": "k",
    "μ": "u",
    "ν": "v",
    "ο": "o",
    "ρ": "p",
    "σ": "o",
    "ς": "c",
    "τ": "t",
    "υ": "u",
    "χ": "x",
    "ω": "w",
    # Greek, upper case
    "Α": "A",
    "Β": "B",
    "Ε": "E",
    "Ζ": "Z",
    "Η": "H",
    "Ι": "I",
    "Κ": "K",
    "Μ": "M",
    "Ν": "N",
    "Ο": "O",
    "Ρ": "P",
    "Τ": "T",
    "Υ": "Y",
    "Χ": "X",
    # Latin letters outside ASCII that read as ASCII ones
    "ı": "i",
    "ɑ": "a",
    "ɡ": "g",
}
_TABLE = str.maketrans(_LOOKALIKES)
# The scripts whose letters pass for each other's.
LOOKALIKE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")


def username_normal(name: str) -> str:
    """The form a username is stored and looked up in: NFKC, without surrounding spaces."""
    return unicodedata.normalize("NFKC", name).strip()


def username_skeleton(name: str) -> str:
    """What a name reads as: equal skeletons are names a person can mistake for each other."""
    return unicodedata.normalize("NFKC", name).translate(_TABLE).casefold()


def username_scripts(name: str) -> set[str]:
    """Which of ``LOOKALIKE_SCRIPTS`` the name's letters are written in."""
    scripts = set()
    for char in unicodedata.normalize("NFKC", name):
        if char.isascii() and not char.isalpha():
            continue
        script = unicodedata.name(char, "").split(" ", 1)[0]
        if script in LOOKALIKE_SCRIPTS:
            scripts.add(script)
    return scripts


def username_mixes_scripts(name: str) -> bool:
    """Whether the name has letters of two of Latin, Cyrillic and Greek."""
    return len(username_scripts(name)) > 1
