"""The LoCoMo importer: sessions, dates, photo captions, dia_id mapping, malformed ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import LOCOMO

from memoryfs.errors import IngestError
from memoryfs.ingest import ingest
from memoryfs.ingest.locomo import load_locomo, normalize_dia_id, parse_locomo_datetime
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.store import init_store

SCOPE = {"user": "u", "assistant": "a"}


def _conv() -> dict[str, object]:
    return {
        "sample_id": "conv-t",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Caroline",
                    "dia_id": "D1:1",
                    "text": "I went to a support group yesterday.",
                },
                {
                    "speaker": "Melanie",
                    "dia_id": "D1:2",
                    "text": "Look at this!",
                    "img_url": ["http://x"],
                    "blip_caption": "a photo of a pottery bowl",
                    "query": "SECRET-QUERY",
                },
                {"speaker": "Caroline", "dia_id": "D:1:3", "text": "Lovely."},
                {"speaker": "Melanie", "dia_id": "??", "text": "Thanks."},
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [],
            "session_1_summary": "SECRET-SUMMARY",
        },
        "event_summary": {"events_session_1": "SECRET-EVENT"},
        "observation": {"session_1_observation": "SECRET-OBSERVATION"},
        "qa": [{"question": "q", "answer": "a", "evidence": ["D1:1"], "category": 2}],
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("D3:5", "D3:5"),
        ("D:11:26", "D11:26"),
        ("D30:05", "D30:5"),
        (" d2 : 7 ", "D2:7"),
        ("D1", None),
        ("", None),
        (7, None),
        ("D0:1", None),
    ],
)
def test_normalize_dia_id(raw: object, expected: str | None) -> None:
    assert normalize_dia_id(raw) == expected


def test_parse_locomo_datetime() -> None:
    assert parse_locomo_datetime("1:56 pm on 8 May, 2023").isoformat() == "2023-05-08T13:56:00"
    assert parse_locomo_datetime("10:37 am on 27 June, 2023").isoformat() == "2023-06-27T10:37:00"
    with pytest.raises(ValueError, match="unrecognized"):
        parse_locomo_datetime("sometime in May")


def test_importer_reads_turns_only_and_maps_dia_ids(tmp_path: Path) -> None:
    src = tmp_path / "conv.json"
    src.write_text(json.dumps([_conv()]), encoding="utf-8")
    (conv,) = load_locomo(src, SCOPE)
    assert conv.id == "conv-t" and len(conv.sessions) == 1
    s = conv.sessions[0]
    assert s.id == "2023-05-08-conv-t-s01" and s.started == "2023-05-08T13:56"
    assert s.turns[1].text == "Look at this!\n\n[shared a photo: a photo of a pottery bowl]"
    assert conv.dia_map == {
        "D1:1": "sessions/transcripts/2023-05-08-conv-t-s01.md#t1",
        "D1:2": "sessions/transcripts/2023-05-08-conv-t-s01.md#t2",
        "D1:3": "sessions/transcripts/2023-05-08-conv-t-s01.md#t3",
    }
    assert any("malformed dia_id '??'" in p for p in conv.problems)
    store = init_store(tmp_path / "store", "u", "a")
    ingest(store, [src])
    text = store.transcript_path(s.id).read_text(encoding="utf-8")
    for secret in ("SECRET-QUERY", "SECRET-SUMMARY", "SECRET-EVENT", "SECRET-OBSERVATION"):
        assert secret not in text
    assert parse_transcript(text).meta["dia_ids"] == ["D1:1", "D1:2", "D1:3", "??"]


def test_bad_locomo_inputs_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{ nope", encoding="utf-8")
    with pytest.raises(IngestError, match="not a readable LoCoMo JSON"):
        load_locomo(bad, SCOPE)
    bad.write_text(json.dumps({"speaker_a": "A"}), encoding="utf-8")
    with pytest.raises(IngestError, match="speaker_a"):
        load_locomo(bad, SCOPE)
    conv = _conv()
    conv["conversation"]["session_1_date_time"] = "whenever"  # type: ignore[index]
    bad.write_text(json.dumps(conv), encoding="utf-8")
    with pytest.raises(IngestError, match="unrecognized LoCoMo date"):
        load_locomo(bad, SCOPE)


def test_a_session_without_usable_turns_is_skipped_and_said(tmp_path: Path) -> None:
    conv = _conv()
    conv["conversation"]["session_2"] = [None, "text"]  # type: ignore[index]
    conv["conversation"]["session_2_date_time"] = "2:00 pm on 9 May, 2023"  # type: ignore[index]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(conv), encoding="utf-8")
    (loaded,) = load_locomo(path, SCOPE)
    assert [len(t.turns) for t in loaded.sessions] == [4]  # no empty transcript
    assert any("session_2 has no turn that is an object" in p for p in loaded.problems)


def test_one_session_number_twice_is_refused(tmp_path: Path) -> None:
    conv = _conv()
    inner = conv["conversation"]
    inner["session_01"] = list(inner["session_1"])  # type: ignore[index]
    path = tmp_path / "c.json"
    path.write_text(json.dumps(conv), encoding="utf-8")
    with pytest.raises(IngestError, match="'session_01' and 'session_1' are both session 1"):
        load_locomo(path, SCOPE)


@pytest.mark.skipif(not LOCOMO.is_dir(), reason="shared LoCoMo data not present")
def test_shared_conversations_import_every_turn() -> None:
    for path in sorted(LOCOMO.glob("conv-*.json")):
        (conv,) = load_locomo(path, SCOPE)
        raw = json.loads(path.read_text(encoding="utf-8"))
        n_raw = sum(
            len(v) for k, v in raw.items() if k.startswith("session_") and isinstance(v, list)
        )
        assert sum(len(s.turns) for s in conv.sessions) == n_raw
        evidence = [e for q in conv.qa for e in q.get("evidence", [])]
        mapped = [normalize_dia_id(e) in conv.dia_map for e in evidence]
        assert sum(mapped) / len(mapped) > 0.98
