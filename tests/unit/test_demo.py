"""`make demo`'s set-up step: accounts made once, printed, reused on the next run."""

import json

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from annotate.permissions import user_is_annotator

pytestmark = pytest.mark.django_db


def test_demo_setup_creates_the_accounts_and_is_idempotent(settings, tmp_path, capsys):
    settings.DATA_DIR = tmp_path
    call_command("demo", setup_only=True)
    first = capsys.readouterr().out
    accounts = json.loads((tmp_path / "demo-accounts.json").read_text())
    assert set(accounts) == {"carol", "alice", "bob"}
    for name, password in accounts.items():
        assert f"password: {password}" in first
        user = authenticate(username=name, password=password)
        assert user is not None
    carol = authenticate(username="carol", password=accounts["carol"])
    alice = authenticate(username="alice", password=accounts["alice"])
    assert carol is not None and carol.is_staff and not user_is_annotator(carol)
    assert alice is not None and not alice.is_staff and user_is_annotator(alice)

    call_command("demo", setup_only=True)
    assert json.loads((tmp_path / "demo-accounts.json").read_text()) == accounts
    assert authenticate(username="bob", password=accounts["bob"]) is not None
