"""Import: the round trip, new inactive annotators, and bad lines that name their line and
field and write nothing."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate.imports import ImportFileError
from annotate.models import Annotation, AnnotationEvent, Key, Pattern, Study, TriggerPrefix
from annotate.permissions import ANNOTATOR_GROUP
from reports.exports import export_jsonl
from reports.imports import lines as file_lines
from reports.imports import messages, records
from reports.imports.load import study_import
from reports.report import report_build
from reports.selectors.report_filter import ReportFilter
from tests.factories import StudyFactory, UserFactory, annotate_key, key_with_prefixes

pytestmark = pytest.mark.django_db

ANNOTATION_SECTIONS = ("figure2", "coverage", "agreement", "pattern_jaccard")


def annotator(username: str, **fields):
    user = UserFactory(username=username, **fields)
    user.groups.add(Group.objects.get_or_create(name=ANNOTATOR_GROUP)[0])
    return user


def export_text(study) -> str:
    return "".join(export_jsonl(study=study))


def load(text: str, **kwargs):
    return study_import(file=io.BytesIO(text.encode("utf-8")), **kwargs)


def renamed(text: str, name: str) -> list[dict]:
    lines = [json.loads(line) for line in text.splitlines()]
    for line in lines:
        line["study"]["name"] = name
    return lines


def test_export_of_import_is_the_same_data_and_the_reports_are_equal(hand_study):
    # A third annotator and a larger key make the round trip less of a special case.
    carl = annotator("carl")
    key = key_with_prefixes(8, study=hand_study, layer=2, index=0)
    for person, patterns in [
        (carl, [("shallow", [8, 1, 5]), ("shallow+semantic", [2, 3, 4, 5])]),
        (get_user_model().objects.get(username="alice"), [("semantic", [1, 2, 3, 4])]),
    ]:
        annotate_key(key, person, patterns)
    original = export_text(hand_study)

    result = load(original, study_name="copy")
    assert result.study.name == "copy"
    assert (result.keys, result.prefixes) == (3, 18)
    assert (result.annotations, result.patterns) == (6, 7)
    again = export_text(result.study)
    assert renamed(again, "x") == renamed(original, "x")

    for submitted_only in (True, False):
        flt = ReportFilter(submitted_only=submitted_only)
        before = report_build(study=hand_study, flt=flt)
        after = report_build(study=result.study, flt=flt)
        for section in ANNOTATION_SECTIONS:
            assert after[section] == before[section], section


TOKEN_IDS = ("trigger_token_id", "next_token_id")


def without_token_ids(lines: list[dict]) -> list[dict]:
    """The lines as a file without the additive token ids would have them."""
    for line in lines:
        for prefix in line["prefixes"]:
            for name in TOKEN_IDS:
                prefix.pop(name, None)
    return lines


def test_a_null_next_token_round_trips_as_an_unknown_next_token(hand_study):
    # A file without token ids: the import can only tell a cut sentence from the rest.
    lines = without_token_ids(renamed(export_text(hand_study), "cut"))
    lines[0]["prefixes"][0]["next_token"] = None  # a cut sentence: the next token is unknown
    lines[0]["prefixes"][1]["next_token"] = "</s>"  # the end of a sentence
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    study = load(text).study
    stored = dict(
        TriggerPrefix.objects.filter(key__study=study, key__layer=1, rank__lte=3).values_list(
            "rank", "next_token_id"
        )
    )
    assert stored == {1: -2, 2: -1, 3: -1}
    assert TriggerPrefix.objects.get(key__study=study, key__layer=1, rank=1).next_token is None
    again = renamed(export_text(study), "cut")
    assert again[0]["prefixes"][0]["next_token_id"] == -2  # unknown, written as such
    assert {p["trigger_token_id"] for line in again for p in line["prefixes"]} == {-1}
    assert without_token_ids(again) == lines


def test_a_next_token_that_is_neither_a_string_nor_null_is_refused(hand_study):
    lines = renamed(export_text(hand_study), "bad")
    lines[1]["prefixes"][0]["next_token"] = 7
    with pytest.raises(ImportFileError) as info:
        load("\n".join(json.dumps(x) for x in lines) + "\n")
    assert info.value.errors == ["line 2: prefixes[0].next_token: must be a string"]


def test_import_takes_the_files_study_name_and_refuses_a_taken_one(hand_study):
    text = export_text(hand_study)
    with pytest.raises(ImportFileError, match="A study named 'hand study' already exists"):
        load(text)
    hand_study.delete()
    assert load(text).study.name == "hand study"


def test_unknown_annotators_become_inactive_accounts_without_password(hand_study):
    lines = renamed(export_text(hand_study), "other")
    lines[0]["annotations"][0]["annotator"] = "zed"
    result = load("\n".join(json.dumps(x) for x in lines) + "\n")
    assert result.users_created == ["zed"]
    zed = get_user_model().objects.get(username="zed")
    assert not zed.is_active
    assert not zed.has_usable_password()
    assert zed.groups.filter(name=ANNOTATOR_GROUP).exists()
    # Existing people keep their account as it was.
    assert get_user_model().objects.get(username="bob").is_active
    # Each imported annotation is assigned to its author and starts its audit trail.
    annotation = Annotation.objects.get(key__study=result.study, annotator=zed)
    event = AnnotationEvent.objects.get(annotation=annotation)
    assert event.action == "create"
    assert event.after["patterns"][0]["prefix_ranks"] == [1, 2, 3]


def _counts():
    return (
        Study.objects.count(),
        Key.objects.count(),
        TriggerPrefix.objects.count(),
        Annotation.objects.count(),
        Pattern.objects.count(),
        get_user_model().objects.count(),
    )


def _bad(lines: list[dict], how: str) -> str:
    if how == "missing field":
        del lines[1]["prefixes"][0]["sentence"]
    elif how == "two prefixes":
        lines[0]["annotations"][0]["patterns"][1]["prefix_ranks"] = [4, 5]
    elif how == "unknown label":
        lines[0]["annotations"][1]["labels"][3] = "deep"
    elif how == "rank out of range":
        lines[1]["prefixes"][4]["rank"] = 26
    elif how == "duplicate key":
        lines.append(json.loads(json.dumps(lines[0])))
    elif how == "label against patterns":
        lines[0]["annotations"][1]["labels"][4] = "semantic"
    elif how == "unknown kind":
        lines[0]["annotations"][0]["patterns"][0]["kind"] = "deep"
    elif how == "gap in ranks":
        lines[1]["prefixes"][4]["rank"] = 7
    elif how == "wrong schema":
        lines[1]["schema"] = "ffkv.annotations/v2"
    elif how == "status":
        lines[0]["annotations"][0]["status"] = "done"
    elif how == "unknown field":
        lines[0]["key"]["colour"] = "red"
    elif how == "lone surrogate":
        lines[1]["prefixes"][2]["sentence"] = "x\ud800"
    elif how == "unknown field with a lone surrogate":
        lines[0]["key"]["c\udc00"] = "red"
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    if how == "invalid json":
        first, second, *rest = text.splitlines()
        text = "\n".join([first, second[:-5], *rest]) + "\n"
    return text


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("missing field", "line 2: prefixes[0].sentence: required field missing"),
        (
            "two prefixes",
            "line 1: annotations[0].patterns[1].prefix_ranks: "
            "a pattern must cover at least 3 prefixes",
        ),
        ("unknown label", "line 1: annotations[1].labels[3]: unknown label 'deep'"),
        ("rank out of range", "line 2: prefixes[4].rank: must be between 1 and top_k (25)"),
        ("duplicate key", "line 3: key: layer 1, index 7 is already on line 1"),
        ("invalid json", "line 2: not valid JSON"),
        (
            "label against patterns",
            "line 1: annotations[1].labels[4]: 'semantic' does not follow from the patterns "
            "(expected 'not-covered')",
        ),
        (
            "unknown kind",
            "line 1: annotations[0].patterns[0].kind: "
            "must be 'shallow', 'semantic' or 'shallow+semantic'",
        ),
        (
            "gap in ranks",
            "line 2: prefixes: ranks must run from 1 to the number of prefixes without gaps",
        ),
        ("wrong schema", "line 2: schema: must be 'ffkv.annotations/v1'"),
        ("status", "line 1: annotations[0].status: must be 'draft' or 'submitted'"),
        ("unknown field", "line 1: key.colour: unknown field"),
        (
            "lone surrogate",
            "line 2: prefixes[2].sentence: must not contain a lone surrogate (\\ud800-\\udfff)",
        ),
        ("unknown field with a lone surrogate", "line 1: key.c\\udc00: unknown field"),
    ],
)
def test_a_bad_line_names_its_line_and_field_and_nothing_is_written(hand_study, how, expected):
    text = _bad(renamed(export_text(hand_study), "new"), how)
    before = _counts()
    with pytest.raises(ImportFileError) as info:
        load(text)
    assert info.value.errors == [expected]
    assert _counts() == before


def test_every_bad_line_is_listed_up_to_a_limit(hand_study, monkeypatch):
    monkeypatch.setattr(records, "MAX_ERRORS", 3)
    good = export_text(hand_study).splitlines()[0]
    text = "\n".join([good.replace("hand study", "n")] + ["{"] * 5) + "\n"
    with pytest.raises(ImportFileError) as info:
        load(text)
    assert info.value.errors == [
        "line 2: not valid JSON",
        "line 3: not valid JSON",
        "line 4: not valid JSON",
        messages.MORE_ERRORS.format(n=3),
    ]


def test_an_empty_file_or_a_bare_value_is_refused(db):
    with pytest.raises(ImportFileError, match="holds no keys"):
        load("\n\n")
    with pytest.raises(ImportFileError) as info:  # a JSON value, but no object
        load("[1, 2]\n")
    assert info.value.errors == [messages.NOT_JSONL.format(why=messages.NOT_JSONL_FIRST_LINE)]
    first = export_text(_one_key_study("v")).splitlines()[0].replace('"v"', '"v2"')
    with pytest.raises(ImportFileError, match="line 2: must be an object"):
        load(first + "\n[1, 2]\n")
    with pytest.raises(ImportFileError) as info:  # UTF-16: not the JSONL of an export
        study_import(file=io.BytesIO(b"\xff\xfe{}\n"))
    assert info.value.errors == [messages.NOT_JSONL.format(why=messages.NOT_JSONL_TEXT)]
    # A later line that is not UTF-8 is that line's error.
    good = export_text(_one_key_study("u")).splitlines()[0].replace('"u"', '"u2"')
    with pytest.raises(ImportFileError) as info:
        study_import(file=io.BytesIO(good.encode() + b"\n\xff\n"))
    assert info.value.errors == ["line 2: not valid UTF-8"]


def _one_key_study(name: str):
    study = StudyFactory(name=name)
    key_with_prefixes(3, study=study, layer=1, index=0)
    return study


CSV_EXPORT = "study,layer,index,rank\r\n" + "".join(f"s,1,{i},1\r\n" for i in range(40))


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (CSV_EXPORT.encode(), messages.NOT_JSONL_FIRST_LINE),
        (b"PK\x03\x04\x14\x00\x00\x00\x08\x00\x9a\xff" * 30, messages.NOT_JSONL_TEXT),
        (b"PAR1\x15\x04\x15\xc8\x01\x15\x90" * 30, messages.NOT_JSONL_TEXT),
        (b"\n\nhello\n" * 30, messages.NOT_JSONL_FIRST_LINE),
    ],
    ids=["csv", "zip", "parquet", "text"],
)
def test_a_file_that_is_not_jsonl_gets_one_error_that_says_so(db, body, why):
    # A CSV must get one message, not 20 lines of "not valid JSON".
    before = _counts()
    with pytest.raises(ImportFileError) as info:
        study_import(file=io.BytesIO(body))
    assert info.value.errors == [messages.NOT_JSONL.format(why=why)]
    assert info.value.code == "not_jsonl"
    assert "This is not a JSONL file" in info.value.errors[0]
    assert _counts() == before


def test_a_utf8_byte_order_mark_is_no_error(hand_study):
    text = export_text(hand_study).replace("hand study", "bom")
    assert load("\ufeff" + text).study.name == "bom"


def test_the_import_command_loads_a_file_and_reports_errors_without_a_traceback(
    hand_study, tmp_path, capsys
):
    path = tmp_path / "in.jsonl"
    path.write_text(export_text(hand_study))
    call_command("import", str(path), "--study-name", "from cli")
    assert "imported study 'from cli'" in capsys.readouterr().out
    assert Study.objects.filter(name="from cli").exists()

    # A taken name: the command line's own wording, its option named.
    with pytest.raises(CommandError) as info:
        call_command("import", str(path), "--study-name", "from cli")
    assert str(info.value) == (
        "nothing imported:\nA study named 'from cli' already exists; give the new study "
        "another name with --study-name NAME."
    )

    bad = tmp_path / "bad.jsonl"
    bad.write_text(_bad(renamed(export_text(hand_study), "other"), "two prefixes"))
    with pytest.raises(CommandError, match=r"nothing imported:\nline 1: annotations\[0\]"):
        call_command("import", str(bad))
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import", str(tmp_path / "missing.jsonl"))


def test_a_study_imported_twice_under_two_names_is_two_studies(db):
    study = StudyFactory(name="s")
    key = key_with_prefixes(3, study=study, layer=1, index=0)
    annotate_key(key, annotator("ann"), [("shallow", [1, 2, 3])])
    text = export_text(study)
    a, b = load(text, study_name="a"), load(text, study_name="b")
    assert a.study.pk != b.study.pk
    assert Annotation.objects.filter(key__study__name__in=["a", "b"]).count() == 2


def test_a_line_nested_too_deeply_is_that_lines_error_and_nothing_is_written(hand_study):
    good = export_text(hand_study).splitlines()[0].replace("hand study", "deep")
    before = _counts()
    with pytest.raises(ImportFileError) as info:
        load(good + "\n" + "[" * 5_000 + "\n")
    assert info.value.errors == [messages.NESTED_TOO_DEEPLY.format(line=2)]
    assert _counts() == before


@pytest.mark.parametrize(
    ("make_user", "username", "why"),
    [
        (
            lambda: UserFactory(username="carol", is_staff=True, is_superuser=True),
            "carol",
            "an admin",
        ),
        (lambda: UserFactory(username="mallory"), "mallory", "no annotator role"),
        (lambda: annotator("sam", is_staff=True), "sam", "an admin"),
    ],
    ids=["admin", "no role", "staff in the annotator group"],
)
def test_an_import_attaches_work_to_annotators_only(hand_study, make_user, username, why):
    make_user()
    lines = renamed(export_text(hand_study), "other")
    lines[1]["annotations"][1]["annotator"] = username  # bob's draft of key B, line 2
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    before = _counts()
    with pytest.raises(ImportFileError) as info:
        load(text)
    assert info.value.errors == [
        f"line 2: annotations[1].annotator: {username!r} is not an annotator ({why}); "
        "an import attaches work to annotators only"
    ]
    assert _counts() == before
    assert not AnnotationEvent.objects.filter(annotation__key__study__name="other").exists()


def test_an_inactive_annotator_takes_their_imported_work(hand_study):
    # A second import of the same people (a restore) finds the inactive annotator
    # accounts that the first one made: they are annotators, and take the work.
    lines = renamed(export_text(hand_study), "other")
    lines[0]["annotations"][0]["annotator"] = "zed"
    text = "\n".join(json.dumps(x) for x in lines) + "\n"
    assert load(text, study_name="first").users_created == ["zed"]
    again = load(text, study_name="second")
    assert again.users_created == []
    assert Annotation.objects.filter(key__study=again.study, annotator__username="zed").count() == 1


# --- notes, versions and times ---------------------------------------------------------


def test_notes_versions_and_times_come_back(hand_study):
    alice_a = Annotation.objects.get(key__layer=1, annotator__username="alice")
    Annotation.objects.filter(pk=alice_a.pk).update(note="why: rank 3", version=4)
    result = load(export_text(hand_study), study_name="timed")
    for original in Annotation.objects.filter(key__study=hand_study):
        copy = Annotation.objects.get(
            key__study=result.study,
            key__layer=original.key.layer,
            annotator=original.annotator,
        )
        fields = ("status", "note", "version", "created_at", "updated_at", "submitted_at")
        assert [getattr(copy, f) for f in fields] == [getattr(original, f) for f in fields]
    copy = Annotation.objects.get(
        key__study=result.study, key__layer=1, annotator=alice_a.annotator
    )
    # The audit trail's first state is the imported one, note and version included.
    assert AnnotationEvent.objects.get(annotation=copy).after["note"] == "why: rank 3"
    assert AnnotationEvent.objects.get(annotation=copy).after["version"] == 4


def test_a_v1_file_without_notes_or_times_imports_with_defaults(hand_study):
    lines = renamed(export_text(hand_study), "v1")
    for line in lines:
        for ann in line["annotations"]:
            for name in ("note", "version", "created_at", "updated_at", "submitted_at"):
                del ann[name]
            for pattern in ann["patterns"]:
                del pattern["created_at"], pattern["updated_at"]
    study = load("\n".join(json.dumps(x) for x in lines) + "\n").study
    rows = Annotation.objects.filter(key__study=study).values_list(
        "status", "note", "version", "submitted_at"
    )
    assert {(s, n, v, at is not None) for s, n, v, at in rows} == {
        ("submitted", "", 1, True),
        ("draft", "", 1, False),
    }


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (("note", 5), "annotations[0].note: must be a string"),
        (("note", "x" * 20_001), "annotations[0].note: must be at most 20000 characters"),
        (("version", 0), "annotations[0].version: must be between 1 and 2147483647"),
        (("created_at", "yesterday"), f"annotations[0].created_at: {messages.NOT_TIME}"),
        (("created_at", "2026-11-30T09:30:00"), f"annotations[0].created_at: {messages.NOT_TIME}"),
        (
            ("updated_at", "2000-01-01T00:00:00+00:00"),
            "annotations[0].updated_at: must not be before created_at",
        ),
        (("submitted_at", 7), f"annotations[0].submitted_at: {messages.NOT_TIME_OR_NULL}"),
        (
            ("pattern created_at", "1 Dec"),
            f"annotations[0].patterns[0].created_at: {messages.NOT_TIME}",
        ),
    ],
)
def test_a_bad_note_version_or_time_names_its_field(hand_study, change, expected):
    lines = renamed(export_text(hand_study), "bad times")
    name, value = change
    ann = lines[0]["annotations"][0]
    if name.startswith("pattern "):
        ann["patterns"][0][name.removeprefix("pattern ")] = value
    else:
        ann[name] = value
    before = _counts()
    with pytest.raises(ImportFileError) as info:
        load("\n".join(json.dumps(x) for x in lines) + "\n")
    assert info.value.errors == [f"line 1: {expected}"]
    assert _counts() == before


# --- archived unless live ---------------------------------------------------------------


def test_an_import_is_archived_without_assignments_unless_asked(hand_study):
    from annotate.models import Assignment, Batch

    text = export_text(hand_study)
    archived = load(text, study_name="archived").study
    assert archived.archived
    assert Batch.objects.get(study=archived).keys.count() == 2
    assert not Assignment.objects.filter(batch__study=archived).exists()
    live = load(text, study_name="live", live=True).study
    assert not live.archived and not Assignment.objects.filter(batch__study=live).exists()
    given = load(text, study_name="given", live=True, assign=True)
    assert not given.study.archived and given.assignments == 2
    with pytest.raises(ImportFileError) as info:
        load(text, study_name="no", assign=True)
    assert info.value.code == "assign_needs_live"
    assert not Study.objects.filter(name="no").exists()


def test_the_import_command_makes_a_live_study_only_with_live(hand_study, tmp_path, capsys):
    path = tmp_path / "in.jsonl"
    path.write_text(export_text(hand_study))
    call_command("import", str(path), "--study-name", "kept")
    assert "archived (read-only)" in capsys.readouterr().out
    assert Study.objects.get(name="kept").archived
    call_command("import", str(path), "--study-name", "again", "--live", "--assign")
    assert "live" in capsys.readouterr().out
    again = Study.objects.get(name="again")
    assert not again.archived and again.batches.get().assignments.count() == 2
    with pytest.raises(CommandError, match="--assign needs --live"):
        call_command("import", str(path), "--study-name", "x", "--assign")


# --- usernames the import would create ---------------------------------------------------


def _with_annotators(hand_study, names: dict[tuple[int, int], str]) -> str:
    """The hand study's export under another name, with annotators renamed: (line index,
    annotation index) -> username."""
    lines = renamed(export_text(hand_study), "other")
    for (line, a), name in names.items():
        lines[line]["annotations"][a]["annotator"] = name
    return "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n"


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (
            {(1, 1): "аӏісе"},  # wholly Cyrillic, reads as alice
            "line 2: annotations[1].annotator: 'аӏісе' can be mistaken for the existing "
            "account 'alice'; an import does not create an account that looks like another",
        ),
        (
            {(1, 0): "BOB"},
            "line 2: annotations[0].annotator: 'BOB' can be mistaken for the existing "
            "account 'bob'; an import does not create an account that looks like another",
        ),
        (
            {(0, 1): "cаrl"},  # a Cyrillic а among Latin letters
            "line 1: annotations[1].annotator: 'cаrl' mixes Latin, Cyrillic or Greek "
            "letters: write a username in one script.",
        ),
        (
            {(0, 1): "ｚｅｄ"},
            "line 1: annotations[1].annotator: 'ｚｅｄ' is not written in Unicode's normal form "
            "(NFKC reads it as 'zed'); an import creates accounts under normal names only",
        ),
        (
            {(0, 1): "zoe", (1, 1): "ΖΟΕ"},  # two new names of the file that look alike
            "line 2: annotations[1].annotator: 'ΖΟΕ' can be mistaken for 'zoe' (line 1); an "
            "import does not create two accounts that look alike",
        ),
    ],
    ids=["cyrillic", "case", "mixed", "fullwidth", "within the file"],
)
def test_an_import_refuses_to_create_a_look_alike_account(hand_study, names, expected):
    before = _counts()
    users = get_user_model().objects.count()
    with pytest.raises(ImportFileError) as info:
        load(_with_annotators(hand_study, names))
    assert info.value.errors == [expected]
    assert _counts() == before
    assert get_user_model().objects.count() == users


def test_an_import_creates_accounts_named_in_one_script(hand_study):
    result = load(_with_annotators(hand_study, {(0, 1): "Иван", (1, 1): "张三"}))
    assert result.users_created == ["Иван", "张三"]


# --- caps: mining's bounds, and a reader that reads a bounded amount ----------------------


def _one_line(hand_study) -> dict:
    return renamed(export_text(hand_study), "capped")[0]


def _refused(line: dict) -> list[str]:
    before = _counts()
    with pytest.raises(ImportFileError) as info:
        load(json.dumps(line) + "\n")
    assert _counts() == before
    return info.value.errors


def test_top_k_is_capped_as_mining_caps_it(hand_study):
    from annotate.limits import MAX_TOP_K
    from mining.apis import MiningRunListCreateApi
    from mining.core import MineConfig

    # An import takes any top_k that mining could keep (its running top-keep_k); mining
    # itself asks for less, as it keeps the top 2·top_k (docs/evidence.md).
    assert MineConfig().keep_k == MAX_TOP_K
    mined = MiningRunListCreateApi.InputSerializer().fields["top_k"].max_value
    assert mined == MineConfig().max_top_k == 28 < MAX_TOP_K
    line = _one_line(hand_study)
    line["study"]["top_k"] = 2**31 - 1
    assert _refused(line) == ["line 1: study.top_k: must be between 1 and 64"]


def test_a_key_with_more_prefixes_than_top_k_is_refused_before_they_are_read(hand_study):
    line = _one_line(hand_study)
    line["study"]["top_k"] = 64
    line["prefixes"] = [{}] * 65  # not one of them is looked at
    assert _refused(line) == ["line 1: prefixes: at most top_k (64) prefixes, got 65"]


def test_too_many_annotations_or_patterns_are_refused_with_the_limit(hand_study):
    line = _one_line(hand_study)
    line["annotations"] = [{}] * 1001
    assert _refused(line) == ["line 1: annotations: at most 1000 annotations per key, got 1001"]
    line = _one_line(hand_study)
    line["annotations"][0]["patterns"] = [{}] * 1001
    assert _refused(line) == [
        "line 1: annotations[0].patterns: at most 1000 patterns per annotation, got 1001"
    ]
    line = _one_line(hand_study)
    line["gold"] = {"annotator": None, "status": "draft", "patterns": [{}] * 1001, "labels": []}
    assert _refused(line) == [
        "line 1: gold.patterns: at most 1000 patterns per annotation, got 1001"
    ]


class _CountingStream:
    """A file of ``size`` bytes made on the fly (nothing written to disk): ``head`` then
    ``fill``; counts what was read."""

    def __init__(self, head: bytes, fill: bytes, size: int) -> None:
        self.head, self.fill, self.size, self.read_bytes = head, fill, size, 0

    def read(self, n: int = -1) -> bytes:
        n = self.size - self.read_bytes if n < 0 else min(n, self.size - self.read_bytes)
        out = (self.head[self.read_bytes : self.read_bytes + n]).ljust(n, self.fill)
        self.read_bytes += n
        return out

    def seek(self, offset: int) -> None:
        self.read_bytes = offset


JUNK_SIZE = 99 << 20


@pytest.mark.parametrize(
    "head",
    [b"", b"\xef\xbb\xbf\n\n  \t\n", b"id,layer,index\n"],
    ids=["junk", "after a byte order mark and blank lines", "a CSV header"],
)
def test_a_huge_junk_file_is_refused_after_its_first_chunk(db, head):
    stream = _CountingStream(head, b"x", JUNK_SIZE)
    with pytest.raises(ImportFileError) as info:
        study_import(file=stream)
    assert info.value.code == "not_jsonl"
    assert info.value.errors == [messages.NOT_JSONL.format(why=messages.NOT_JSONL_FIRST_LINE)]
    assert stream.read_bytes <= file_lines.READ_CHUNK


def test_a_huge_binary_file_is_refused_as_not_text_after_its_first_chunk(db):
    stream = _CountingStream(b"PK\x03\x04\x14\x00\x9a\xff", b"\x00", JUNK_SIZE)
    with pytest.raises(ImportFileError) as info:
        study_import(file=stream)
    assert info.value.errors == [messages.NOT_JSONL.format(why=messages.NOT_JSONL_TEXT)]
    assert stream.read_bytes <= file_lines.READ_CHUNK


def test_a_huge_first_line_is_refused_once_it_passes_the_line_limit(db):
    stream = _CountingStream(b'{"schema": "', b"x", JUNK_SIZE)
    with pytest.raises(ImportFileError) as info:
        study_import(file=stream)
    assert info.value.errors == ["line 1: longer than 16 MiB (a line of an export holds one key)"]
    assert stream.read_bytes <= file_lines.MAX_LINE_BYTES + file_lines.READ_CHUNK


def test_a_later_line_too_long_is_that_lines_error(hand_study, monkeypatch):
    good = export_text(hand_study).replace("hand study", "long").splitlines()
    monkeypatch.setattr(file_lines, "MAX_LINE_BYTES", max(len(x) for x in good) + 10)
    monkeypatch.setattr(file_lines, "READ_CHUNK", 97)
    text = "\n".join([good[0], "{" + "x" * 20_000, "{", good[1]]) + "\n"
    before = _counts()
    with pytest.raises(ImportFileError) as info:
        load(text)
    assert info.value.errors == [
        "line 2: longer than 0 MiB (a line of an export holds one key)",
        "line 3: not valid JSON",
    ]
    assert _counts() == before


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_the_file_reads_the_same_in_any_chunk_size(hand_study, monkeypatch, chunk):
    monkeypatch.setattr(file_lines, "READ_CHUNK", chunk)
    text = "\ufeff" + export_text(hand_study).replace("hand study", f"chunk {chunk}")
    text = text.replace("\n", "\n\n", 1)  # a blank line between the keys
    study = load(text).study
    assert export_text(study) == export_text(hand_study).replace("hand study", f"chunk {chunk}")
