"""The sources block read and written without PyYAML gives PyYAML's values and bytes."""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryfs.pages.page import parse_page, render_meta
from memoryfs.pages.sources_yaml import dump_meta, load_meta

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _load(raw: str) -> Any:
    return yaml.load(raw, Loader=_LOADER)


def _dump(data: dict[str, Any]) -> str:
    return str(
        yaml.dump(
            data,
            Dumper=_DUMPER,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=10_000,
        )
    )


# strings YAML reads as something else, or cannot write plain, next to ordinary ones
_TRICKY = [
    "sessions/transcripts/2023-05-09-a.md#t11",
    "86f76877",
    "01234567",
    "12345678",
    "1e10",
    "0x1f",
    "yes",
    "No",
    "null",
    "~",
    "1_000",
    "12:30",
    "2023-05-09",
    "a #b",
    "a: b",
    "-a",
    "'q'",
    ".inf",
    "é",
    "",
    " x",
    "x ",
    "<<",
    "=",
]
_TEXT = st.sampled_from(_TRICKY) | st.text(alphabet="ab09:#-_./ 'é\n", max_size=10)
_ENTRY = st.fixed_dictionaries(
    {
        "id": st.integers(min_value=0, max_value=10**6),
        "ref": _TEXT,
        "at": st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 1, 1)),
        "hash": _TEXT,
    }
)
_VALUE = st.one_of(_TEXT, st.integers(), st.dates(), st.lists(_TEXT, max_size=3))


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["id", "title", "zz", "aliases", "updated"]), _VALUE),
    st.lists(_ENTRY, min_size=1, max_size=4),
    st.booleans(),
)
def test_both_ways_agree_with_pyyaml(head: dict[str, Any], entries: list[Any], last: bool) -> None:
    meta = dict(head)
    meta["sources"] = entries
    if not last:
        meta["zzz-after"] = "tail value"
    reference = _dump(meta)
    fast = dump_meta(meta, _dump)
    if fast is not None:
        assert fast == reference
    loaded = load_meta(reference, _load)
    if loaded is not None:
        expected = _load(reference)
        assert loaded == expected and list(loaded) == list(expected)


def test_dream_shape_takes_the_fast_way_both_ways() -> None:
    refs = ["sessions/transcripts/a.md#t1", "sessions/transcripts/b.md#t12"]
    sources = [
        {"id": n, "ref": ref, "at": dt.date(2023, 5, 9 + n), "hash": f"{n}f76877a"}
        for n, ref in enumerate(refs, start=1)
    ]
    meta = {"id": "dana", "title": "Dana", "updated": dt.date(2023, 7, 12), "sources": sources}
    text = dump_meta(meta, _dump)
    assert text is not None and text == _dump(meta)
    assert load_meta(text, _load) == meta


def test_values_yaml_reads_otherwise_fall_back() -> None:
    entry = {"id": 1, "ref": "x.md#t1", "at": dt.date(2023, 5, 9), "hash": "01234567"}
    meta = {"id": "p", "sources": [entry]}
    assert dump_meta(meta, _dump) == _dump(meta)  # quoted: plain, it would read as an int
    assert "hash: '01234567'" in _dump(meta)
    raw = "id: p\nsources:\n- id: 1\n  ref: x.md#t1\n  at: 2023-05-09\n  hash: 01234567\n"
    assert load_meta(raw, _load) is None  # an int hash: PyYAML decides what it is
    shared = dt.date(2023, 5, 9)  # one date object twice: YAML writes an anchor
    twice = [dict(entry, hash="ab12", at=shared), dict(entry, id=2, hash="cd34", at=shared)]
    assert dump_meta({"id": "p", "sources": twice}, _dump) is None


def test_pages_parse_and_render_the_same_either_way() -> None:
    text = (
        "---\nid: dana\ntitle: Dana\ntype: person\nupdated: 2023-07-12\nsources:\n"
        "- id: 1\n  ref: sessions/transcripts/a.md#t1\n  at: 2023-05-09\n  hash: 86f76877\n"
        "extra: kept\n---\n# Dana\n"
    )
    page = parse_page(text, "knowledge/people/dana.md")
    raw = text.split("---\n")[1]
    assert page.meta == _load(raw) and list(page.meta) == list(_load(raw))
    assert render_meta(page.meta) == render_meta(
        dict(page.meta, sources=list(page.meta["sources"]))
    )
