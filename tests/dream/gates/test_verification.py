"""Semantic verification: claims against their cited turns, and slot contradictions."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from gate_fixtures import JOB, JOB_TURNS, PATH, one_session_store, write_job_page
from hypothesis import given, settings
from hypothesis import strategies as st

from dream.gates.support import Support, check_claim, support_for
from dream.gates.verification import claim_dates, slot_of, verify_stage
from dream.landing.staging import Change
from memoryfs.pages.transcript import Transcript, Turn
from memoryfs.store.store import Store


def support(text: str, date: str = "2023-05-08", subject: tuple[str, ...] = ()) -> Support:
    turn = Turn(n=1, speaker="user", ts=f"{date}T13:56", text=text)
    t = Transcript(
        id="s", started=f"{date}T13:56", participants=("dana", "atlas"), scope={}, turns=(turn,)
    )
    return support_for([(t, turn)], subject)


def codes(claim: str, turn: str, subject: tuple[str, ...] = ()) -> list[str]:
    return [code for code, _ in check_claim(claim, support(turn, subject=subject))]


SUPPORTED = [
    ("Marta is a nurse at the UKE in Hamburg.", "Marta is a nurse at the UKE in Hamburg."),
    ("Prefers figures as PDF, not PNG.", "Please always give me figures as PDF, not PNG."),
    ("Writes figures at 150 dpi.", "The script writes PNG at 150 dpi."),
    ("Has 3 figures to redo.", "I have three figures to redo."),
    (
        "Goes bouldering with [[marta-silva|Marta]] on Thursdays.",
        "Marta and I go bouldering on Thursday.",
    ),
    ("Talked to Dana and Atlas.", "We talked."),  # participants are known names
    (
        'Went to the support group on 7 May 2023 ("yesterday").',
        "I went to the support group yesterday.",
    ),
    ("Went to the support group in May 2023.", "I went to the support group yesterday."),
    ("Went to the support group on 2023-05-07.", "I went to the support group yesterday."),
    ("Said so on 8 May 2023.", "I said so."),  # the session date
    ("Ran a race the week of 1 May 2023.", "I ran a race last week."),
    ("The workshop is on 12 March 2023.", "The workshop is on 12 March."),
    ("Moved here in 2019.", "I moved here in 2019."),
    ("She may come along.", "She might come along."),  # "may" is not a month
    ("The parser is 40x faster.", "The new parser is about 40x faster than the old one."),
    ("Present on Friday the 20th.", "Can you present on Friday the 20th?"),
    ('Ships on 12 May 2023 ("next Friday"), the 12th.', "It ships next Friday."),
    ("Costs 1,200 euros.", "It costs 1200 euros."),
    ("Was a postdoc (superseded 9 February 2026).", "I am a postdoc."),
    # regression (conv-41): the unit of "5K" is not a name 'K'
    ("Ran a 5K charity run.", "I ran a 5K charity run last weekend."),
    ("Ran 10KM by 3PM, the 2ND time.", "Ran 10KM by 3PM, the 2ND time."),
    # what dream.language.dates resolves, the gate accepts: a past "on Friday", a duration's start
    ('Won a tournament on 5 May 2023 ("on Friday").', "I won a tournament on Friday!"),
    ("Has known them for 4 years (since 2019).", "I have known them for 4 years."),
]


@pytest.mark.parametrize(("claim", "turn"), SUPPORTED)
def test_supported_claims_pass(claim: str, turn: str) -> None:
    assert check_claim(claim, support(turn)) == []


UNSUPPORTED = [
    ("Marta works with Gunther.", "Marta works a lot.", "DV101"),
    ("Writes figures at 300 dpi.", "The script writes PNG at 150 dpi.", "DV102"),
    ("Writes figures at 40 dpi.", "The script writes PNG at 140 dpi.", "DV102"),
    ("Version 4 ships.", "Version 1.4 ships.", "DV102"),
    ("Ships on the 14th.", "It ships next Friday.", "DV102"),
    ("Went to the group on 6 May 2023.", "I went to the support group yesterday.", "DV103"),
    ("Went to the group on 2023-05-06.", "I went to the support group yesterday.", "DV103"),
    ("Ran a race the week of 24 April 2023.", "I ran a race last week.", "DV103"),
    ("The workshop is on 13 March 2023.", "The workshop is on 12 March.", "DV103"),
    ("Moved here in 2018.", "I moved here in 2019.", "DV103"),
    ("Visited [[lisbon|Lisbon]].", "I visited a city.", "DV101"),
    ("Ran a 5K with Gunther.", "I ran a 5K.", "DV101"),
]


@pytest.mark.parametrize(("claim", "turn", "code"), UNSUPPORTED)
def test_unsupported_claims_are_rejected(claim: str, turn: str, code: str) -> None:
    assert codes(claim, turn) == [code]


def test_the_page_title_is_a_name_like_any_other() -> None:
    claim = "Data descriptor figures for Reefsong."
    assert codes(claim, "The data descriptor figures.") == ["DV101"]
    # the page a claim is on is no evidence: "Dana was fired by Google" on Google's page
    assert codes(claim, "The data descriptor figures.", subject=("Reefsong",)) == ["DV101"]
    assert codes("Dana was fired by Google.", "I got fired.", subject=("Google",)) == ["DV101"]
    # where the turn names the subject in part, the claim may name it in full
    claim = "Jonas Weber fixed the figures."
    assert codes(claim, "Jonas fixed the figures.") == ["DV101"]
    assert codes(claim, "Jonas fixed the figures.", subject=("Jonas Weber", "Jonas")) == []


def test_claim_dates_blank_what_they_find() -> None:
    found, rest = claim_dates("Met on 7 May 2023 and again in June 2024, plus 2025.")
    assert [(d.isoformat(), g) for (d, g, _), _raw in found] == [
        ("2023-05-07", "day"),
        ("2024-06-01", "month"),
        ("2025-01-01", "year"),
    ]
    assert [raw for _, raw in found] == ["7 May 2023", "June 2024", "2025"]
    assert "2023" not in rest and "June" not in rest


def test_claim_dates_never_raise_on_odd_input() -> None:
    for text in ("31 February 2023", "99 May", "May 0", "2023-13-45", "", "May"):
        claim_dates(text)
    assert claim_dates("31 February 2023")[0][0][0][1] == "month"  # no such day: the month


@pytest.mark.parametrize(
    ("claim", "subject", "expected"),
    [
        (
            "Works as a postdoc at the Marlow Institute.",
            (),
            ("role", "postdoc at marlow institute"),
        ),
        (
            "Dana works as staff scientist since 9 February 2026 [cite:2]",
            ("Dana",),
            ("role", "staff scientist"),
        ),
        ("2026-02-09: works at Tidewater Analytics", (), ("employer", "tidewater analytics")),
        ("Role: staff scientist", (), ("role", "staff scientist")),
        ("Lives in Hamburg (Eimsbüttel).", (), ("city", "hamburg")),
        ("She moved to Berlin.", (), ("city", "berlin")),
        ("Moved to Munich on the weekend of 24 June 2023.", (), ("city", "munich")),
        ("Moved to Krakow in June 2023 [cite:4]", (), ("city", "krakow")),
        ("Prefers figures as PDF, not PNG.", (), ("preference:figures", "pdf")),
        ("Likes green tea.", (), None),
        ("Works on Reefsong.", (), None),
    ],
)
def test_slot_detection(
    claim: str, subject: tuple[str, ...], expected: tuple[str, str] | None
) -> None:
    assert slot_of(claim, subject) == expected


# -- the gate over a store ------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return one_session_store(tmp_path, JOB, JOB_TURNS)


REF = "sessions/transcripts/2026-02-10-job.md#t1"


def test_two_current_values_for_one_slot_contradict(store: Store) -> None:
    base = store.head()
    write_job_page(
        store, "\n## Work\n\n- Works as a postdoc [cite:1]\n- Works as staff scientist [cite:2]\n"
    )
    report = verify_stage(store, store.root, base, [Change("A", PATH)])
    assert [(p.code, p.line) for p in report.problems] == [("DV201", 20)]
    assert (
        "contradicts line 19" in report.problems[0].message
        and "slot role" in report.problems[0].message
    )


def test_a_superseded_value_does_not_contradict(store: Store) -> None:
    base = store.head()
    write_job_page(
        store,
        "\n## Work\n\n- Works as staff scientist [cite:2]\n\n## History\n\n"
        "- Works as a postdoc (superseded 2026-02-10) [cite:1]\n",
    )
    report = verify_stage(store, store.root, base, [Change("A", PATH)])
    assert report.ok and report.stats["claims_checked"] == 2


def test_only_new_or_changed_claims_are_checked(store: Store) -> None:
    write_job_page(
        store, "\n- Works with Gunther [cite:1]\n"
    )  # unsupported, but already in the base
    base = store.commit("hand-written page", [PATH])
    write_job_page(
        store,
        "\n- Works with Gunther [cite:1]\n\n## History\n\n"
        "- Works as a postdoc (superseded) [cite:1]\n",
    )
    report = verify_stage(store, store.root, base, [Change("M", PATH)])
    assert report.ok and report.stats == {"claims_checked": 1, "claims_superseded": 1}
    write_job_page(store, "\n- Works with Gunther and Olaf [cite:1]\n")
    report = verify_stage(store, store.root, base, [Change("M", PATH)])
    assert [p.format() for p in report.problems] == [
        f"{PATH}:17: DV101 name 'Gunther' is not in the cited turn in 'Works with Gunther and "
        f"Olaf' (cites [1] {REF})",
        f"{PATH}:17: DV101 name 'Olaf' is not in the cited turn in 'Works with Gunther and "
        f"Olaf' (cites [1] {REF})",
    ]


def test_a_claim_citing_another_turn_is_checked_again(store: Store) -> None:
    """Unchanged is the same text citing the same turns: the same line pointed at
    another source is a changed claim."""
    write_job_page(
        store, "\n- Works with Gunther [cite:1]\n"
    )  # unsupported, but already in the base
    base = store.commit("hand-written page", [PATH])
    write_job_page(store, "\n- Works with Gunther [cite:2]\n")
    report = verify_stage(store, store.root, base, [Change("M", PATH)])
    assert [p.code for p in report.problems] == ["DV101"]
    assert report.stats["claims_checked"] == 1


def test_relative_date_resolution_is_the_shared_one() -> None:
    s = support("I moved last Saturday.", date="2023-05-08")
    assert (dt.date(2023, 5, 6), "day") in s.dates


def test_the_base_side_line_reading_agrees_with_extract_claims() -> None:
    from dream.gates.verification import _line_claims, _plain
    from memoryfs.pages.claims import extract_claims
    from memoryfs.pages.page import parse_page

    body = (
        "\n# Dana\n\nIntro without citations.\n\n## Work\n\n- Works as staff scientist [cite:2]\n"
        "1. Numbered claim with two [cite:1] sources [cite:3]\n> - Quoted claim [cite:1]\n"
        "- [x] Task claim [cite:2]\n- ~~Old title~~ renamed [cite:1]\n"
        "- Was a postdoc (superseded 2026-02-09) [cite:1]\n\n"
        "```\n- not a claim [cite:9]\n```\n\n## History\n\n- Lived in Kiel [cite:3]\n"
        "### Older\n\n- Studied in Bremen [cite:1]\n\n## Now\n\n- Lives in Hamburg [cite:2]\n"
    )
    page = parse_page(f"---\nid: dana\ntitle: Dana\ntype: person\nupdated: 2026-01-01\n---\n{body}")
    exact = [(_plain(c.text), c.citations, c.superseded) for c in extract_claims(page)]
    light = [(_plain(t), cites, sup) for t, cites, sup in _line_claims(page)]
    assert light == exact


_PIECES = st.sampled_from(
    ["(superseded on 2023-01-01)", "(Replaced", "(SUPERSEDED", "(ſuperseded x)", "(", ")",
     "[[a|b]]", "[[a]]", "[x](y)", "[", "]", "~~s~~", "~", "**", "__", "_", "`", " ", "\n",
     "\t", "word", '("last month")', "2023"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet="ab [](|)~*_`\n\tsupersededonreplaced2023-", max_size=40)
    | st.lists(_PIECES, max_size=12).map("".join)
)
def test_plain_takes_the_short_way_only_when_no_rewrite_applies(text: str) -> None:
    """``claimtext.plain`` skips its rewrites for a text holding none of the characters
    they need; the result is the same as going through all of them."""
    from dream.gates import claimtext

    assert claimtext.plain(text) == claimtext._plain_markup(text)
