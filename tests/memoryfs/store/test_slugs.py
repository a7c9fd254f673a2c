"""Slugs spell names in ASCII: marks dropped, letters spelt out, other scripts hashed.

Regression: a note about "Gröpelingen" was named "...-gr-pelingen" (the note's words were
cut at every letter outside ASCII), and "Straße" lost its "ß" in page ids.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine_fixtures import consolidate, write_session

from dream.phases.notes import _base
from dream.wiki.subjects import Subject
from memoryfs.ingest import ingest
from memoryfs.pages.page import parse_page
from memoryfs.store.slugs import ascii_words, slugify
from memoryfs.store.store import Store
from memoryfs.validate.rules import validate_store

_SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def test_latin_letters_fold_to_a_readable_word() -> None:
    assert slugify("Gröpelingen") == "gropelingen"
    assert slugify("Straße des 17. Juni") == "strasse-des-17-juni"
    assert slugify("Ærøskøbing") == "aeroskobing"
    assert slugify("Łódź Fabryczna") == "lodz-fabryczna"
    assert slugify("Þórshöfn") == "thorshofn"
    assert slugify("Œuvre ﬁnale") == "oeuvre-finale"
    assert slugify("Ĳmuiden") == "ijmuiden"


def test_greek_and_cyrillic_are_spelt_letter_by_letter() -> None:
    assert slugify("Ηράκλειο") == "irakleio"
    assert slugify("Πλάκα Ουρανός") == "plaka-ouranos"
    assert slugify("Новосибирск") == "novosibirsk"
    assert slugify("Щукино") == "shchukino"
    assert slugify("Подольск-2") == "podolsk-2"


def test_a_script_without_spelling_gets_a_stable_unique_hash() -> None:
    kyoto, osaka = slugify("京都", empty="place"), slugify("大阪", empty="place")
    assert re.fullmatch(r"place-[0-9a-f]{8}", kyoto)
    assert kyoto != osaka
    assert slugify("京都", empty="place") == kyoto  # the same name, the same id
    assert slugify("ソウル") != slugify("서울") != slugify("تونس")
    assert all(slugify(n) for n in ("京都", "תל אביב", "मुंबई", "!!!", "—"))
    # a readable part is kept, and the unspelt word keeps two names apart
    assert slugify("Café 京都").startswith("cafe-") and slugify("Café 京都") != slugify("Café 大阪")
    assert slugify("2026") == "2026"
    assert ascii_words("Grüße aus Köln") == ["grusse", "aus", "koln"]


def test_note_names_keep_whole_words() -> None:
    mara = Subject("mara", "Mara", "person", "knowledge/people/mara.md")
    assert (
        _base(mara, "Mara moved to Gröpelingen in Bremen.", "2026-05-04")
        == "mara-2026-05-04-moved-gropelingen-bremen"
    )
    a = _base(mara, "Mara likes 京都 best.", "2026-05-04")
    b = _base(mara, "Mara likes 大阪 best.", "2026-05-04")
    assert a != b and _SLUG_RE.match(a) and a.startswith("mara-2026-05-04-likes-")
    assert _base(mara, "京都", "2026-05-04") == _base(mara, "京都", "2026-05-04")


def test_pages_and_notes_of_accented_names_are_spelt_and_valid(tmp_store: Store) -> None:
    write_session(
        tmp_store,
        "2026-05-04-flat",
        "2026-05-04T09:00",
        [
            ("user", "We moved to Gröpelingen in Bremen last month, the flat is near the river."),
            ("assistant", "How do you like it so far?"),
            ("user", "My colleague Ólafur Þórsson lives in Reykjavík and visits in June."),
            ("user", "My friend Ελένη Βλάχου moved to Ηράκλειο in April."),
        ],
    )
    consolidate(tmp_store)
    memory = tmp_store.memory
    files = sorted((memory / "knowledge").rglob("*.md")) + sorted((memory / "notes").rglob("*.md"))
    stems = {p.stem for p in files}
    assert {"gropelingen", "olafur-thorsson", "eleni-vlachou", "irakleio"} <= stems
    assert any(s.startswith("dana-2026-05-04-") and "gropelingen" in s for s in stems)
    for path in files:
        assert _SLUG_RE.match(path.stem), path
        assert parse_page(path.read_text(encoding="utf-8"), path.name).id == path.stem
    assert validate_store(tmp_store) == []


def test_session_ids_from_file_names_are_spelt(tmp_store: Store, tmp_path: Path) -> None:
    log = tmp_path / "Café Grünau.jsonl"
    log.write_text(
        '{"role": "user", "content": "hello there", "ts": "2026-05-04T09:00:00"}\n',
        encoding="utf-8",
    )
    ingest(tmp_store, [log])
    assert (tmp_store.memory / "sessions" / "transcripts" / "cafe-grunau.md").exists()
