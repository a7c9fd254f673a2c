"""Speakers are known: the store's user and assistant by role, scope id and display name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.memoryfs_app import app
from dream.gates.support import check_claim, support_for
from memoryfs.errors import MemoryFSError
from memoryfs.pages.speakers import Roster, display_name
from memoryfs.pages.transcript import Transcript, Turn
from memoryfs.store.config import load_config
from memoryfs.store.store import Store, init_store


@pytest.mark.parametrize(
    ("scope_id", "name"),
    [
        ("alex", "Alex"),
        ("john-zhang", "John Zhang"),
        ("kim_lee", "Kim Lee"),
        ("j.smith", "J. Smith"),
        ("ana-maria", "Ana Maria"),
        ("user42", "User42"),
        ("McKay", "McKay"),
    ],
)
def test_display_name_from_the_id(scope_id: str, name: str) -> None:
    assert display_name(scope_id) == name


def test_roster_roles() -> None:
    r = Roster("john-zhang", "helper")
    assert (r.user_name, r.assistant_name) == ("John Zhang", "Helper")
    assert [
        r.role(x) for x in ("user", "John-Zhang", "assistant", "helper", "tool", "Caroline")
    ] == [
        "user",
        "user",
        "assistant",
        "assistant",
        "assistant",
        "",
    ]
    assert r.person("user") == "John Zhang" and r.person("assistant") == ""
    assert r.person("Caroline") == "Caroline" and r.name("assistant") == "Helper"


def test_init_records_display_names(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s", "alex", "helper", user_name="Alex Moreau")
    cfg = load_config(store.root / "memory.toml")
    assert (cfg.user_name, cfg.roster.assistant_name) == ("Alex Moreau", "Helper")
    text = (store.root / "memory.toml").read_text()
    assert 'user_name = "Alex Moreau"' in text and 'assistant_name = "Helper"' in text
    # editable by hand: the next open reads the new name
    (store.root / "memory.toml").write_text(text.replace("Alex Moreau", "Alexandra Moreau"))
    assert Store.open(store.root).config.roster.user_name == "Alexandra Moreau"


def test_default_name_is_derived_never_the_raw_id(tmp_path: Path) -> None:
    store = init_store(tmp_path / "s", "john-zhang", "atlas")
    assert store.config.roster.user_name == "John Zhang"
    # an older memory.toml without the keys derives them too
    text = (store.root / "memory.toml").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith(("user_name", "assistant_name"))]
    (store.root / "memory.toml").write_text("\n".join(lines) + "\n")
    assert Store.open(store.root).config.roster.user_name == "John Zhang"


def test_bad_display_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MemoryFSError, match="user name"):
        init_store(tmp_path / "s", "alex", "helper", user_name="Alex\nMoreau")
    assert not (tmp_path / "s" / "memory.toml").exists()
    store = init_store(tmp_path / "t", "alex", "helper")
    cfg = store.root / "memory.toml"
    cfg.write_text(cfg.read_text().replace('user_name = "Alex"', "user_name = 3"))
    with pytest.raises(MemoryFSError, match="user_name"):
        load_config(cfg)


def test_cli_init_takes_names(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "init",
            str(tmp_path / "s"),
            "--user",
            "alex",
            "--assistant",
            "helper",
            "--user-name",
            "Alex Moreau",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["userName"] == "Alex Moreau" and data["assistantName"] == "Helper"


def _chat(roster: Roster | None, text: str, speaker: str = "user") -> tuple[Transcript, Turn]:
    turn = Turn(1, speaker, "2025-03-05T10:00", text)
    t = Transcript(
        id="2025-03-05-move",
        started="2025-03-05T10:00",
        participants=("user", "assistant"),
        scope={"user": "alex", "assistant": "helper"},
        turns=(turn,),
        roster=roster,
    )
    return t, turn


def test_a_claim_about_the_speaker_is_supported_by_who_spoke() -> None:
    said = "From April we live at Kastanienallee 12."
    claim = "From April Alex Moreau and others live at Kastanienallee 12."
    roster = Roster("alex", "helper", "Alex Moreau")
    assert check_claim(claim, support_for([_chat(roster, said)])) == []
    # the assistant is named by the store too
    assert (
        check_claim("Helper suggested Kastanienallee 12.", support_for([_chat(roster, said)])) == []
    )
    # a name neither the turn nor the roster holds is still unsupported
    problems = check_claim(
        "Alex and Jordan live at Kastanienallee 12.", support_for([_chat(roster, said)])
    )
    assert [code for code, _ in problems] == ["DV101"]
    # without the store's roster, the scope id gives the name
    assert check_claim("Alex lives at Kastanienallee 12.", support_for([_chat(None, said)])) == []
