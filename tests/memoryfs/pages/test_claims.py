"""Claims: cited prose lines, their sections, superseded markers and sources."""

from __future__ import annotations

from memoryfs.pages.claims import Claim, extract_claims, resolve_claim_sources
from memoryfs.pages.page import Source, parse_page

PAGE = """---
id: dana
title: Dana
type: person
updated: 2026-01-19
sources:
  - id: 1
    ref: sessions/transcripts/2026-01-05-figures.md#t1
    hash: bc1f626a
  - id: 2
    ref: sessions/transcripts/2026-01-12-lisbon.md#t4
  - id: 3
    ref: sessions/transcripts/2026-01-19-followup.md#t2
---
# Dana

Postdoc at the Marlow Institute [cite:1].
Works on [[reefsong]]   with a   team of four [cite: 2] [cite:1].

## Travel

- Flies to Lisbon on 2026-02-03 [cite:3]
  1. [x] Booked the hotel [cite:2]
> Quoted: prefers trains [cite:2]
- Talk slot moved ~~to Tuesday~~ to Wednesday [cite:3]
- Old plan (superseded by the 2026-01-19 call) [cite:2]

| fact | when |
|---|---|
| Badge collected [cite:3] | 2026-01-19 |

Use `[cite:9]` in code spans, and:

```
- fenced [cite:9]
```

    indented code [cite:9]

## History

### 2026-01-12

- Planned to fly on 2026-02-02 [cite:2]

## Now [cite:3]

- Lives in Hamburg [cite:1][cite:7]
"""


def _claims() -> list[Claim]:
    return extract_claims(parse_page(PAGE, "knowledge/people/dana.md"))


def test_claim_lines_text_and_citations() -> None:
    got = [(c.line, c.text, c.citations) for c in _claims()]
    assert got == [
        (17, "Postdoc at the Marlow Institute.", (1,)),
        (18, "Works on [[reefsong]] with a team of four.", (2, 1)),
        (22, "Flies to Lisbon on 2026-02-03", (3,)),
        (23, "Booked the hotel", (2,)),
        (24, "Quoted: prefers trains", (2,)),
        (25, "Talk slot moved ~~to Tuesday~~ to Wednesday", (3,)),
        (26, "Old plan (superseded by the 2026-01-19 call)", (2,)),
        (30, "| Badge collected | 2026-01-19 |", (3,)),
        (44, "Planned to fly on 2026-02-02", (2,)),
        (48, "Lives in Hamburg", (1, 7)),
    ]


def test_sections_and_superseded() -> None:
    got = [(c.line, c.section, c.superseded) for c in _claims()]
    assert got == [
        (17, "Dana", False),
        (18, "Dana", False),
        (22, "Travel", False),
        (23, "Travel", False),
        (24, "Travel", False),
        (25, "Travel", True),  # strikethrough
        (26, "Travel", True),  # "(superseded" marker
        (30, "Travel", False),
        (44, "2026-01-12", True),  # under ## History, even below a sub-heading
        (48, "Now [cite:3]", False),  # a sibling heading ends the History section
    ]


def test_headings_are_not_claims() -> None:
    assert all(not c.text.startswith("Now") for c in _claims())


def test_resolve_claim_sources_skips_unknown_numbers() -> None:
    page = parse_page(PAGE)
    last = _claims()[-1]
    assert resolve_claim_sources(page, last) == [
        Source(id=1, ref="sessions/transcripts/2026-01-05-figures.md#t1", hash="bc1f626a")
    ]
    second = _claims()[1]
    assert [s.id for s in resolve_claim_sources(page, second)] == [2, 1]


def test_superseded_page_marks_every_claim() -> None:
    page = parse_page(
        PAGE.replace("updated: 2026-01-19", "updated: 2026-01-19\nstatus: superseded")
    )
    assert all(c.superseded for c in extract_claims(page))


def test_setext_heading_and_no_citations() -> None:
    page = parse_page("---\nid: a\n---\nSuperseded facts\n---\n\nOld fact [cite:1]\n")
    assert [(c.line, c.section, c.superseded) for c in extract_claims(page)] == [
        (7, "Superseded facts", True)
    ]
    assert extract_claims(parse_page("---\nid: a\n---\nNo citations, `[cite:1]`.\n")) == []
