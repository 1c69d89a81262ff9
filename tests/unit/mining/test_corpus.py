"""Corpus readers, the sentence splitter and WikiText cleaning."""

from __future__ import annotations

import json

import pytest

from mining.core import MiningError, iter_sentences, split_sentences
from mining.core.corpus import clean_wikitext_line

from .conftest import WIKITEXT_VALID


def test_splitter_keeps_abbreviations_initials_and_decimals_inside_sentences():
    text = (
        "Mr. Smith met Dr. Jones in the U.S. Army on Jan. 5. He paid $3.50, e.g. for tea. "
        'J. R. R. Tolkien wrote it! Was it good? "Yes." The end'
    )
    assert split_sentences(text) == [
        "Mr. Smith met Dr. Jones in the U.S. Army on Jan. 5.",
        "He paid $3.50, e.g. for tea.",
        "J. R. R. Tolkien wrote it!",
        "Was it good?",
        '"Yes."',
        "The end",
    ]


def test_splitter_needs_a_sentence_start_after_the_period():
    assert split_sentences("It is 3.5 km long. it goes on.  Next one.") == [
        "It is 3.5 km long. it goes on.",
        "Next one.",
    ]
    assert split_sentences("   ") == []


def test_wikitext_lines_are_cleaned_back_to_natural_text():
    line = (
        " Homarus gammarus , known as the <unk> lobster , weighs 0 @.@ 7 – 2 @,@ 200 kg ( 24 "
        "in ) . It is \" lobster red \" , a well @-@ known fact . Kubrick 's film did n't fail . "
    )
    assert clean_wikitext_line(line, "[UNK]") == (
        "Homarus gammarus, known as the [UNK] lobster, weighs 0.7 – 2,200 kg (24 in). "
        "It is \"lobster red\", a well-known fact. Kubrick's film didn't fail."
    )
    assert clean_wikitext_line(" = = Description = = \n") is None
    assert clean_wikitext_line(" = Homarus gammarus = \n") is None
    assert clean_wikitext_line(" \n") is None
    assert "<unk>" in clean_wikitext_line(" a <unk> b \n", None)


def test_text_file_documents_are_blank_line_separated(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("First doc line one\ncontinues. Second sentence.\n\nNew doc. Again.\n")
    assert list(iter_sentences(str(path))) == [
        "First doc line one continues.",
        "Second sentence.",
        "New doc.",
        "Again.",
    ]
    assert list(iter_sentences(str(path), "lines")) == [
        "First doc line one",
        "continues. Second sentence.",
        "New doc. Again.",
    ]


def test_duplicates_are_dropped_keeping_the_first_and_max_sentences_counts_unique(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("A one. B two. A one.\n\nB two. C three. D four.\n")
    assert list(iter_sentences(str(path))) == ["A one.", "B two.", "C three.", "D four."]
    assert list(iter_sentences(str(path), max_sentences=3)) == ["A one.", "B two.", "C three."]


def test_jsonl_reads_the_text_field(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"text": "One. Two."}) + "\n\n" + json.dumps({"text": "Three."}))
    assert list(iter_sentences(str(path))) == ["One.", "Two.", "Three."]
    path.write_text('{"text": "ok"}\n{"title": "no text"}\n')
    with pytest.raises(MiningError, match=r"c\.jsonl:2: no string \"text\" field"):
        list(iter_sentences(str(path)))
    path.write_text('{"text": "ok"}\n{broken\n')
    with pytest.raises(MiningError, match=r"c\.jsonl:2: not valid JSON"):
        list(iter_sentences(str(path)))


def test_non_utf8_bytes_name_the_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine line.\nalso fine.\nbroken \xff byte.\n")
    with pytest.raises(MiningError) as info:
        list(iter_sentences(str(path)))
    message = str(info.value)
    assert f"{path}:3: not valid UTF-8" in message and "\n" not in message


def test_missing_file_is_named(tmp_path):
    with pytest.raises(MiningError, match=r"corpus file .*nope\.txt' does not exist"):
        list(iter_sentences(str(tmp_path / "nope.txt")))


def test_unknown_builtin_corpus_is_an_error():
    with pytest.raises(MiningError, match="unknown builtin corpus 'builtin:nope'"):
        list(iter_sentences("builtin:nope"))


def test_wikitext_file_by_suffix_and_by_prefix(tmp_path):
    path = tmp_path / "w.tokens"
    path.write_text(" \n = Title = \n \n It is a <unk> , big . Yes . \n")
    assert list(iter_sentences(str(path), unk_token="[UNK]")) == ["It is a [UNK], big.", "Yes."]
    other = tmp_path / "w.txt"
    other.write_text(path.read_text())
    assert list(iter_sentences(f"wikitext:{other}")) == ["It is a <unk>, big.", "Yes."]


def test_hf_reader_loads_a_local_dataset_directory(tmp_path):
    data = tmp_path / "ds"
    data.mkdir()
    rows = [{"text": "Alpha one. Beta two."}, {"text": ""}, {"text": "Gamma three."}]
    (data / "train.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert list(iter_sentences(f"hf:{data}::train")) == ["Alpha one.", "Beta two.", "Gamma three."]


def test_hf_reader_errors_name_the_dataset(tmp_path):
    with pytest.raises(MiningError, match="bad dataset spec 'hf:nothing'"):
        list(iter_sentences("hf:nothing"))
    with pytest.raises(MiningError, match=f"cannot load dataset 'hf:{tmp_path}/none::train'"):
        list(iter_sentences(f"hf:{tmp_path}/none::train"))


@pytest.mark.slow
def test_builtin_wiki_vital_has_about_ten_thousand_articles_of_sentences():
    sentences = list(iter_sentences("builtin:wiki-vital"))
    assert 20_000 < len(sentences) < 60_000
    assert len(set(sentences)) == len(sentences)
    assert sum(len(s.split()) for s in sentences) > 500_000


@pytest.mark.slow
def test_wikitext_validation_file_reads_naturally():
    if not WIKITEXT_VALID.is_file():
        pytest.skip(f"shared corpus absent: {WIKITEXT_VALID}")
    sentences = list(iter_sentences(str(WIKITEXT_VALID), max_sentences=500))
    assert len(sentences) == 500
    assert not any("@-@" in s or s.startswith("= ") or " ," in s for s in sentences)
