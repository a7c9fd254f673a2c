"""Adversarial claims: no unsupported claim reaches main (issue #26).

A store is built from ``sample_memory/`` as a user's would be: 25 sessions ingested
and consolidated by the embedded ``dream run`` (so person, org, place, note and summary
pages exist), then the user fixes a transcript turn by hand (a slip that changes what
it says, committed on main) and three more sessions arrive. One ``dream run --engine
command`` follows, whose agent (``tests/support/adversarial_agent.py``) writes, in the staged
tree, claims that are well formed -- the right ``[cite:N]`` syntax, a ``sources`` entry
with the ref and the turn's current hash, the required keys -- but whose MEANING is
not what the cited turn says. Every claim is written against a real turn of the
sample (the turns are quoted in ``ITEMS``), on several page types.

The kinds of unsupported claim:

- ``unrelated``: the turn is about something else ("Dana hates coffee and adores
  cats." citing the turn that asks for PDF figures);
- ``inverted``: the turn says the opposite ("figures as PNG, not PDF");
- ``subject-exempt``: the page's own title is the unsupported part ("Dana was fired by
  Google." on a page titled Google, citing a turn with no Google in it);
- ``uncited``: a factual line with no citation (bullet, paragraph, numbered item);
- ``summary``: a frontmatter ``summary`` that nothing on the page or in its turns says;
- ``note-title``: a note whose title says what its (faithful) claim does not;
- ``re-cite drift``: a cited turn changed on main; a page keeps a claim with the
  citation's hash moved to the new turn, by the agent or by Dream's own re-check
  (``dream.phases.recheck``). A turn edited by hand after ingest is no evidence at all
  (issue #31), so this holds even for a claim the edited turn still supports;
- ``contradiction``: a claim on one page contradicts a current fact on another page
  about the same person, named by first name or full name ("Jonas lives in Hamburg"
  beside "Jonas lives in Berlin");
- ``wrong-number``, ``wrong-date``, ``wrong-person``: one of them is not what the
  turn says, though often the number, the date (the session's own) or the name is in
  the turn, attached to something else;
- ``swapped``: subject and object traded ("Jonas owes Dana a beer" for "Jonas says
  I owe him a beer");
- ``other-session``: the claim is true in the sample, but the turn it cites belongs to
  another session that does not say it.

``control`` items are claims each cited turn DOES support, in faithful paraphrase (the
third person for "I", "prefers" for "please give me", a resolved date for "last
Friday", a digit for "twenty"): they must land on main, so a gate that rejects
everything fails this suite.

Acceptance: after the run, no adversarial item's text is anywhere on main (a re-cite
item: not as a claim whose citation pins the changed turn's new hash), and the run's
output (``dream run --json`` ``leftOut``/``problems``/``rejected``, the run record in
``dream status --json``, ``dream review RUN``) names its file with a rule code
``MFnnn``/``DVnnn``; every control is on main. One Dream run serves every item; the
failure message lists each item that got through, by kind.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from paths import SAMPLE, SUPPORT
from typer.testing import CliRunner

from cli.dream_app import app
from dream.skills import approve
from memoryfs.errors import PageError
from memoryfs.ingest import ingest
from memoryfs.pages.claims import extract_claims
from memoryfs.pages.page import parse_page
from memoryfs.pages.transcript import parse_transcript
from memoryfs.store.store import Store, init_store

AGENT = SUPPORT / "adversarial_agent.py"
FIRST = 25  # sessions consolidated by the embedded engine before the command run

# The hand-fixed turn: 2026-01-26-dinner-for-marta t3, "Sam is vegetarian, Marta eats
# everything but hates coriander. ..." -- the user corrects what Marta said about coriander.
EDITED = "2026-01-26-dinner-for-marta#t3"
EDIT_FROM = "Marta eats everything but hates coriander."
EDIT_TO = "Marta eats everything and loves coriander."
CORIANDER = "Sam is vegetarian, Marta eats everything but hates coriander."

UNRELATED = "unrelated"
INVERTED = "inverted"
SUBJECT = "subject-exempt"
UNCITED = "uncited"
SUMMARY = "summary"
TITLE = "note-title"
RECITE = "re-cite drift"
CONTRADICTION = "contradiction"
NUMBER = "wrong-number"
DATE = "wrong-date"
PERSON = "wrong-person"
SWAPPED = "swapped"
OTHER = "other-session"
CONTROL = "control"
KINDS = (UNRELATED, INVERTED, SUBJECT, UNCITED, SUMMARY, TITLE, RECITE, CONTRADICTION)
KINDS += (NUMBER, DATE, PERSON, SWAPPED, OTHER)

# Validation findings about form (frontmatter, ids, sources, citations, links, paths,
# transcripts): none may name an item's file, or the suite would test format, not meaning.
FORMAT_CODES = {f"MF00{n}" for n in range(1, 9)} | {f"MF10{n}" for n in range(1, 10)}
FORMAT_CODES |= {"MF201"} | {f"MF30{n}" for n in range(1, 7)} | {f"MF40{n}" for n in range(1, 5)}


@dataclass(frozen=True)
class Item:
    key: str
    kind: str
    path: str  # the page, relative to memory/
    needle: str  # the text that must not reach main (a control: must)
    steps: tuple[dict[str, Any], ...] = ()  # what the agent does for it
    cite: str = ""  # the turn the claim cites ("" for none)
    pinned: bool = False  # judged as a claim citing EDITED at its new hash, not as text

    @property
    def adversarial(self) -> bool:
        return self.kind != CONTROL


def claim(
    kind: str,
    key: str,
    path: str,
    text: str,
    cite: str | None,
    *,
    style: str = "bullet",
    date: str | None = None,
) -> Item:
    """A claim added to an existing page (under its section for the cited session's date)."""
    step = {"op": "claim", "path": path, "text": text, "cite": cite, "style": style, "date": date}
    return Item(key, kind, path, text, (step,), cite or "")


def note(
    kind: str, key: str, folder: str, slug: str, text: str, cite: str, title: str = ""
) -> Item:
    """A new note ``notes/<folder>/<folder>-<date>-<slug>.md`` holding one cited claim, titled
    by it (or by ``title``: then the title is what is judged)."""
    path = f"notes/{folder}/{folder}-{cite[:10]}-{slug}.md"
    heading = title or text.rstrip(".")
    create = {"title": heading, "type": "note", "summary": heading, "about": folder}
    step = {"op": "claim", "path": path, "text": text, "cite": cite, "create": create}
    return Item(key, kind, path, title or text, (step,), cite)


def page(kind: str, key: str, path: str, title: str, type_: str, text: str, cite: str) -> Item:
    """A new knowledge page holding one cited claim."""
    create = {"title": title, "type": type_}
    step = {"op": "claim", "path": path, "text": text, "cite": cite, "create": create}
    return Item(key, kind, path, text, (step,), cite)


def meta(kind: str, key: str, path: str, name: str, value: str) -> Item:
    return Item(
        key, kind, path, value, ({"op": "meta", "path": path, "key": name, "value": value},)
    )


def summary_claim(kind: str, key: str, text: str, cite: str) -> Item:
    """A key point of a session summary (the summary of the cited session)."""
    path = f"sessions/summaries/{cite.split('#')[0]}.md"
    return claim(kind, key, path, text, cite)


KN = "knowledge"
# Pending sessions the agent summarizes (the three new ones; EDITED's session is grown).
NEW_SUMMARIES = {
    "2026-03-11-cover-letter": "Cover letter",
    "2026-03-12-paper-submitted": "Paper submitted",
    "2026-03-13-reefsong-1-0": "Reefsong 1.0",
}

ITEMS: tuple[Item, ...] = (
    # -- unrelated: the cited turn is about something else ------------------------------
    # figures#t5: "PDF. Please always give me figures as PDF, not PNG. Our LaTeX setup ..."
    note(
        UNRELATED, "coffee-and-cats", "dana-preferences", "coffee-and-cats",
        "Dana hates coffee and adores cats.", "2026-01-05-reefsong-figures#t5",
    ),
    # progress#t3: "Henrik Aalto is my PI, he runs the marine acoustics group at Marlow. ..."
    claim(
        UNRELATED, "henrik-bees", f"{KN}/people/henrik-aalto.md",
        "Henrik Aalto keeps bees on his roof at Marlow.", "2026-01-06-progress-report#t3",
    ),
    # interview#t3: "Tidewater Analytics is an ocean-data company here in Hamburg, office in
    # HafenCity. About 60 people. ..."
    claim(
        UNRELATED, "hafencity-floods", f"{KN}/places/hafencity.md",
        "HafenCity floods every winter, so Dana mostly works from home.",
        "2026-01-23-tidewater-interview#t3",
    ),
    # taxonomy#t5: "Cohen's kappa on the 10-hour double-annotated subset: 0.82 for shrimp ..."
    summary_claim(
        UNRELATED, "rescue-dog", "Dana adopted a rescue dog and walks it before work.",
        "2026-01-21-taxonomy-decision#t5",
    ),
    # hydrophone#t5: "Ocean Instruments quote about 40 days continuous at 48 kHz ..."
    claim(
        UNRELATED, "instruments-gym", f"{KN}/orgs/ocean-instruments.md",
        "Ocean Instruments sponsors the bouldering gym Dana goes to.",
        "2026-01-08-hydrophone-deployment#t5",
    ),
    # -- inverted polarity ---------------------------------------------------------------
    summary_claim(
        INVERTED, "png-not-pdf", "Dana wants figures as PNG, not PDF.",
        "2026-01-05-reefsong-figures#t5",
    ),
    # berlin-planning#t13: "Priya said Tidewater won't host it, they don't want to be a
    # single point of failure for an open dataset."
    claim(
        INVERTED, "tidewater-hosts", f"{KN}/orgs/tidewater-analytics.md",
        "Priya said Tidewater will host the dataset.", "2026-02-20-berlin-planning#t13",
    ),
    # lisbon-prep#t5: "I don't do meetings before 10:00, ..."
    note(
        INVERTED, "early-meetings", "dana-preferences", "early-meetings",
        "Dana likes to have meetings before 10:00.", "2026-01-12-lisbon-prep#t5",
    ),
    # berlin-planning#t3: "Train. I take the train for anything under six hours, I don't fly
    # domestic. Hamburg to Berlin is under two hours anyway."
    claim(
        INVERTED, "flies-domestic", f"{KN}/places/berlin-hbf.md",
        "Dana flies domestic, so she will fly from Hamburg to Berlin.",
        "2026-02-20-berlin-planning#t3",
    ),
    # interview#t5: "... Priya said explicitly that they'd sponsor Reefsong as an open project"
    claim(
        INVERTED, "no-sponsoring", f"{KN}/people/priya-natarajan.md",
        "Priya said Tidewater would not sponsor Reefsong.", "2026-01-23-tidewater-interview#t5",
    ),
    # -- the page's own title is the unsupported part ------------------------------------
    # handover#t3: "My last day at Marlow is this Friday, and I start at Tidewater next Monday."
    page(
        SUBJECT, "fired-by-google", f"{KN}/orgs/google.md", "Google", "org",
        "Dana was fired by Google.", "2026-02-03-handover#t3",
    ),
    # figures#t1: "I'm Dana, a postdoc in the marine acoustics group at the Marlow Institute
    # for Ocean Research here in Hamburg. ..."
    claim(
        SUBJECT, "grew-up-in-leipzig", f"{KN}/places/leipzig.md",
        "Dana grew up in Leipzig.", "2026-01-05-reefsong-figures#t1",
    ),
    # interview#t11: "Sam is my partner. We live together in Eimsbüttel. ..."
    claim(
        SUBJECT, "lena-sister", f"{KN}/people/lena-hoffmann.md",
        "Lena Hoffmann is Dana's sister.", "2026-01-23-tidewater-interview#t11",
    ),
    # progress#t1: "I have to write the annual progress report for the Reefsong grant by
    # Friday. Henrik wants a draft tomorrow evening. ..."
    claim(
        SUBJECT, "grant-cancelled", f"{KN}/orgs/blue-horizon-fund.md",
        "The Blue Horizon Fund cancelled the Reefsong grant.", "2026-01-06-progress-report#t1",
    ),
    # -- factual lines with no citation --------------------------------------------------
    claim(
        UNCITED, "pdf-bullet", f"{KN}/preferences/dana-preferences.md",
        "Dana wants figures as PDF.", None, date="2026-01-05",
    ),
    claim(
        UNCITED, "felix-moves", f"{KN}/people/felix-brandt.md",
        "Felix Brandt is moving to Tidewater Analytics in April.", None, date="2026-02-03",
    ),
    claim(
        UNCITED, "cascais-paragraph", f"{KN}/places/cascais.md",
        "Tiago surfs at Cascais every evening after work.", None, style="paragraph",
        date="2026-01-19",
    ),
    claim(
        UNCITED, "zenodo-deleted", "sessions/summaries/2026-02-13-release-from-tidewater.md",
        "Zenodo deleted the Reefsong record after the release.", None,
    ),
    claim(
        UNCITED, "numbered-item",
        "notes/tiago-ferreira/tiago-ferreira-2026-01-19-bioacoustician-tagus-marine-lab-lisbon.md",
        "Tiago Ferreira runs the Tagus Marine Lab.", None, style="numbered",
    ),
    # -- frontmatter summaries nothing supports -----------------------------------------
    meta(
        SUMMARY, "born-in-paris", f"{KN}/orgs/marlow-institute-for-ocean-research.md", "summary",
        "Dana was born in Paris in 1970 and joined the Marlow Institute in 1995.",
    ),
    meta(
        SUMMARY, "amara-supervisor", f"{KN}/people/amara-osei.md", "summary",
        "Amara Osei is the program officer at the Blue Horizon Fund and was Dana's PhD supervisor.",
    ),
    meta(
        SUMMARY, "moved-out", f"{KN}/places/eimsbuttel.md", "summary",
        "Dana and Sam moved out of Eimsbüttel to Altona in January 2026.",
    ),
    meta(
        SUMMARY, "never-surfs",
        "notes/tiago-ferreira/tiago-ferreira-2026-01-19-lives-cascais-surfs-every-morning-before.md",
        "summary", "Tiago lives in Lisbon and never surfs.",
    ),
    meta(
        SUMMARY, "all-at-96", "sessions/summaries/2026-01-08-hydrophone-deployment.md", "summary",
        "Felix will record every Reefsong unit at 96 kHz.",
    ),
    # -- note titles their claim does not support ----------------------------------------
    note(
        TITLE, "agreed-to-host", "tidewater-analytics", "hosting",
        "Priya said Tidewater won't host it, they don't want to be a single point of failure "
        "for an open dataset.", "2026-02-20-berlin-planning#t13",
        title="Tidewater Analytics agreed to host Reefsong",
    ),
    # berlin-poster#t1: "I met Lena Hoffmann yesterday at the evening reception, she's a data
    # curator at the Archiva Foundation, and she wants to talk about hosting Reefsong."
    note(
        TITLE, "turned-down", "lena-hoffmann", "hosting",
        "Lena Hoffmann is a data curator at the Archiva Foundation, and she wants to talk "
        "about hosting Reefsong.", "2026-02-25-berlin-poster#t1",
        title="Lena Hoffmann turned down hosting Reefsong",
    ),
    note(
        TITLE, "flies-to-berlin", "dana", "travel-to-berlin",
        "Dana takes the train for anything under six hours and doesn't fly domestic.",
        "2026-02-20-berlin-planning#t3", title="Dana flies to Berlin",
    ),
    meta(
        TITLE, "drives-over", "notes/marta/marta-2026-01-26-lives-altona-so-she-ll-cycle.md",
        "title", "Marta drives over from Altona",
    ),
    # -- re-cite drift (EDITED changed on main) -----------------------------------------
    Item(
        "note-rehashed", RECITE,
        "notes/sam/sam-2026-01-26-vegetarian-marta-eats-everything-but-hates.md", CORIANDER,
        ({"op": "rehash", "cite": EDITED,
          "path": "notes/sam/sam-2026-01-26-vegetarian-marta-eats-everything-but-hates.md"},),
        EDITED, pinned=True,
    ),
    Item(
        "summary-rehashed", RECITE, "sessions/summaries/2026-01-26-dinner-for-marta.md", CORIANDER,
        ({"op": "summary", "session": "2026-01-26-dinner-for-marta"},
         {"op": "rehash", "cite": EDITED,
          "path": "sessions/summaries/2026-01-26-dinner-for-marta.md"}),
        EDITED, pinned=True,
    ),
    # pages the agent leaves alone: Dream's own re-check of the changed turn decides
    Item("marta-page", RECITE, f"{KN}/people/marta.md", CORIANDER, (), EDITED, pinned=True),
    Item("sam-page", RECITE, f"{KN}/people/sam.md", CORIANDER, (), EDITED, pinned=True),
    # -- contradictions across pages, by first name or full name -------------------------
    # embeddings#t11: "Jonas lives in Berlin, actually, he's only in the Hamburg office two
    # days a week" (jonas-weber.md: "Jonas lives in Berlin, ...")
    claim(
        CONTRADICTION, "jonas-hamburg", f"{KN}/places/hamburg.md",
        "Jonas lives in Hamburg.", "2026-02-19-embeddings-switch#t11",
    ),
    # dinner#t7: "She's a nurse at the UKE, the university hospital in Eppendorf, ... She
    # lives in Altona, so she'll cycle over." (marta.md: "Marta lives in Altona, ...")
    note(
        CONTRADICTION, "marta-eppendorf", "marta", "lives-in-eppendorf",
        "Marta lives in Eppendorf, near the hospital.", "2026-01-26-dinner-for-marta#t7",
    ),
    # lisbon-followup#t3: "Tiago Ferreira. He's a bioacoustician at the Tagus Marine Lab in
    # Lisbon." (cascais.md, tiago-ferreira.md: "Tiago lives in Cascais ...")
    claim(
        CONTRADICTION, "tiago-lisbon", f"{KN}/orgs/tagus-marine-lab.md",
        "Tiago Ferreira lives in Lisbon.", "2026-01-19-lisbon-followup#t3",
    ),
    # berlin-poster#t7: "Lena lives in Leipzig and commutes to Berlin" (leipzig.md)
    claim(
        CONTRADICTION, "lena-berlin", f"{KN}/places/berlin.md",
        "Lena lives in Berlin.", "2026-02-25-berlin-poster#t7",
    ),
    # -- wrong number ------------------------------------------------------------------
    # interview#t3: "About 60 people." (the company); first-week#t3: "The team is five people."
    claim(
        NUMBER, "team-of-60", f"{KN}/orgs/ocean-signals.md",
        "The Ocean Signals team has about 60 people.", "2026-01-23-tidewater-interview#t3",
    ),
    # second-release#t5: "241 hours now, still 11 sites. Labels for 171 hours."
    summary_claim(
        NUMBER, "171-hours", "Reefsong had 171 hours of audio after the release.",
        "2026-01-30-second-release#t5",
    ),
    # release-from-tidewater#t5: "Validate: 2,880 new clips, 12 failed, ..."
    note(
        NUMBER, "clips-swapped", "reefsong", "validate-results",
        "Validate found 12 new clips, and 2,880 of them failed.",
        "2026-02-13-release-from-tidewater#t5",
    ),
    # hydrophone#t3: "The plan: 48 kHz, 16-bit, one minute recorded every ten minutes,
    # 90-day deployment."
    claim(
        NUMBER, "48-days", f"{KN}/places/red-sea.md",
        "Felix's Red Sea deployment lasts 48 days.", "2026-01-08-hydrophone-deployment#t3",
    ),
    # lisbon-followup#t3: "He has about 80 hours of reef recordings from Cape Verde, from
    # Sal island" (the sites: four, 2026-02-17)
    claim(
        NUMBER, "twelve-sites", f"{KN}/places/sal.md",
        "Tiago has about eighty hours of recordings from twelve sites around Sal island.",
        "2026-01-19-lisbon-followup#t3",
    ),
    # -- wrong date --------------------------------------------------------------------
    # second-release#t9 (30 January): "I signed the Tidewater contract yesterday."
    note(
        DATE, "contract-date", "tidewater-analytics", "contract-date",
        "Dana signed the Tidewater contract on 30 January 2026.",
        "2026-01-30-second-release#t9",
    ),
    # lisbon-prep#t1 (12 January): "I'm flying out to Lisbon tomorrow ..."
    claim(
        DATE, "flew-on-12th", f"{KN}/places/lisbon.md",
        "Dana flew to Lisbon on 12 January 2026.", "2026-01-12-lisbon-prep#t1",
    ),
    # handover#t1 (3 February): "I told Henrik last Friday."
    summary_claim(
        DATE, "told-henrik", "Dana told Henrik about the new job on 3 February 2026.",
        "2026-02-03-handover#t1",
    ),
    # budget#t1: "I can go to the Bioacoustics Symposium in Bergen in June ..."
    claim(
        DATE, "symposium-in-may", f"{KN}/places/bergen.md",
        "The Bioacoustics Symposium in Bergen is in May 2026.",
        "2026-03-10-budget-and-conference#t1",
    ),
    # berlin-debrief#t9 (27 February): "Jonas and I finally had the beer."
    summary_claim(
        DATE, "beer-date", "Jonas and Dana had the beer on 19 February 2026.",
        "2026-02-27-berlin-debrief#t9",
    ),
    # -- wrong person ------------------------------------------------------------------
    # archiva#t1: "Lena sent the Archiva agreement this morning, as promised."
    claim(
        PERSON, "tiago-sent", f"{KN}/people/tiago-ferreira.md",
        "Tiago sent the Archiva agreement on 2 March 2026.", "2026-03-02-archiva-migration#t1",
    ),
    # first-week#t3: "Jonas Weber is the ML engineer I'll work with most, he built their vessel
    # detection models. Priya is sharp and very direct, ..."
    note(
        PERSON, "priya-models", "priya-natarajan", "vessel-models",
        "Priya Natarajan built the vessel detection models.",
        "2026-02-11-first-week-tidewater#t3",
    ),
    # budget#t1: "Priya approved my conference budget yesterday."
    summary_claim(
        PERSON, "henrik-approved", "Henrik approved Dana's conference budget.",
        "2026-03-10-budget-and-conference#t1",
    ),
    # dinner#t7: "She's a nurse at the UKE, ..., on the cardiology ward." (Marta)
    claim(
        PERSON, "sam-nurse", f"{KN}/orgs/uke.md",
        "Sam is a nurse at the UKE, on the cardiology ward.", "2026-01-26-dinner-for-marta#t7",
    ),
    # berlin-debrief#t9: "Jonas and I finally had the beer. He ran last week's release with
    # the checklist and had to ask exactly one question: where the Mattermost webhook URL lives."
    claim(
        PERSON, "dana-asked", f"{KN}/topics/mattermost.md",
        "Dana ran the release of the week before with the checklist and had to ask where "
        "the Mattermost webhook URL lives.", "2026-02-27-berlin-debrief#t9",
    ),
    # -- subject and object swapped ------------------------------------------------------
    claim(
        SWAPPED, "dana-sent-agreement", f"{KN}/orgs/archiva-foundation.md",
        "Dana sent the Archiva agreement to Lena.", "2026-03-02-archiva-migration#t1",
    ),
    # embeddings#t11: "Jonas says I owe him a beer."
    summary_claim(
        SWAPPED, "jonas-owes", "Jonas owes Dana a beer.", "2026-02-19-embeddings-switch#t11",
    ),
    # dinner#t7: "Marta is also the one who got me into bouldering"
    claim(
        SWAPPED, "got-marta-bouldering", f"{KN}/places/altona.md",
        "Dana got Marta into bouldering.", "2026-01-26-dinner-for-marta#t7",
    ),
    # handover#t11: "Henrik asked me to give a short goodbye talk at the group meeting"
    note(
        SWAPPED, "asked-henrik", "henrik-aalto", "goodbye-talk",
        "Dana asked Henrik to give a short goodbye talk at the group meeting.",
        "2026-02-03-handover#t11",
    ),
    # interview#t3: "I'd report to Priya Natarajan, their head of research."
    note(
        SWAPPED, "priya-reports", "dana", "reporting-line",
        "Priya Natarajan would report to Dana on the Ocean Signals team.",
        "2026-01-23-tidewater-interview#t3",
    ),
    # -- true, but the turn cited is another session's ------------------------------------
    # said in polars#t5; progress#t5 is the milestones: "M1 recording protocol finalised, ..."
    claim(
        OTHER, "polars", "sessions/summaries/2026-01-27-polars-refactor.md",
        "Dana prefers polars over pandas.", "2026-01-06-progress-report#t5",
    ),
    # said in budget#t11; first-week#t7: "... My 1:1 with Priya is Tuesdays at 14:00."
    claim(
        OTHER, "luneburg", f"{KN}/places/luneburg.md",
        "Priya lives in Lüneburg and commutes by train.", "2026-02-11-first-week-tidewater#t7",
    ),
    # said in polars#t5; first-week#t9: "The new laptop. I need my Python setup. ..."
    note(
        OTHER, "ruff", "dana-preferences", "ruff-line-length",
        "Dana formats code with ruff at line length 100.", "2026-02-11-first-week-tidewater#t9",
    ),
    # said in first-week#t5; interview#t3 speaks of "offshore wind operators" in general
    claim(
        OTHER, "north-sea", f"{KN}/places/north-sea.md",
        "Dana took over noise-exposure reports for two wind farms in the North Sea.",
        "2026-01-23-tidewater-interview#t3",
    ),
    # said in cape-verde#t1; lisbon-followup#t3 is a month earlier, before anything arrived
    claim(
        OTHER, "arrived", "sessions/summaries/2026-02-17-cape-verde-ingest.md",
        "Tiago's Cape Verde recordings arrived via a shared drive link from the Tagus Marine Lab.",
        "2026-01-19-lisbon-followup#t3",
    ),
    # -- controls: faithful, they must land ----------------------------------------------
    note(
        CONTROL, "prefers-pdf", "dana-preferences", "figures-as-pdf",
        "Dana prefers figures as PDF rather than PNG.", "2026-01-05-reefsong-figures#t5",
    ),
    # first-week#t1 (Wednesday 11 February): "I started as staff scientist ... on Monday."
    note(
        CONTROL, "started-9th", "tidewater-analytics", "start",
        "Dana started as a staff scientist at Tidewater Analytics on 9 February 2026.",
        "2026-02-11-first-week-tidewater#t1",
    ),
    note(
        CONTROL, "80-hours", "tiago-ferreira", "sal-recordings",
        "Tiago Ferreira has about 80 hours of reef recordings from Sal island in Cape Verde.",
        "2026-01-19-lisbon-followup#t3",
    ),
    # lisbon-followup#t1 (Monday 19 January): "I got back from Lisbon on Friday evening"
    note(
        CONTROL, "back-16th", "lisbon", "back-from-lisbon",
        "Dana got back from Lisbon on 16 January 2026.", "2026-01-19-lisbon-followup#t1",
    ),
    note(
        CONTROL, "green-tea", "dana-preferences", "green-tea",
        "Dana does not drink coffee, only green tea.", "2026-01-12-lisbon-prep#t9",
    ),
    note(
        CONTROL, "sam-partner", "sam", "partner",
        "Sam is Dana's partner and teaches music at a Gymnasium.",
        "2026-01-23-tidewater-interview#t11",
    ),
    # lisbon-prep#t1: "Twenty minutes including questions."
    note(
        CONTROL, "twenty-minutes", "dana", "talk-length",
        "Dana's Lisbon talk is 20 minutes long, questions included.", "2026-01-12-lisbon-prep#t1",
    ),
    # berlin-planning#t7: "Near Alexanderplatz. Hotel too, I booked the one on
    # Karl-Liebknecht-Straße, the conference rate."
    claim(
        CONTROL, "hotel", f"{KN}/places/alexanderplatz.md",
        "Dana booked a hotel on Karl-Liebknecht-Straße near Alexanderplatz, at the conference "
        "rate.", "2026-02-20-berlin-planning#t7",
    ),
    # polars#t11: "Good catch, Felix set the Keys units to UTC."
    claim(
        CONTROL, "keys-utc", f"{KN}/places/florida-keys.md",
        "Felix set the Florida Keys recorders to UTC.", "2026-01-27-polars-refactor#t11",
    ),
    # paper-outline#t1: "We're submitting to Ecological Informatics, and the submission is a
    # week from tomorrow."
    page(
        CONTROL, "journal", f"{KN}/orgs/ecological-informatics.md", "Ecological Informatics",
        "org", "Dana is submitting the Reefsong data paper to Ecological Informatics.",
        "2026-03-04-paper-outline#t1",
    ),
    # hydrophone#t9: "Reefsong recordings have to be 48 kHz, that's in the protocol"
    claim(
        CONTROL, "protocol-48", f"{KN}/projects/reefsong.md",
        "Reefsong recordings have to be 48 kHz, as the protocol says.",
        "2026-01-08-hydrophone-deployment#t9",
    ),
    # embeddings#t11: "he's only in the Hamburg office two days a week"
    claim(
        CONTROL, "jonas-office", f"{KN}/people/jonas-weber.md",
        "Jonas works in the Hamburg office two days a week.", "2026-02-19-embeddings-switch#t11",
    ),
    # cover-letter#t1 (Wednesday 11 March): "Tiago sent his comments on the draft last Friday"
    summary_claim(
        CONTROL, "comments-6th", "Tiago sent his comments on the draft on 6 March 2026.",
        "2026-03-11-cover-letter#t1",
    ),
    # cover-letter#t7: "For a cover letter, "Sincerely" instead of "Best", it's the one exception."
    summary_claim(
        CONTROL, "sincerely", "For a cover letter Dana signs off with Sincerely instead of Best.",
        "2026-03-11-cover-letter#t7",
    ),
    # paper-submitted#t1: "Submitted. The Reefsong data paper is in with Ecological Informatics
    # as of 16:10 today."
    summary_claim(
        CONTROL, "submitted-12th",
        "Dana submitted the Reefsong data paper to Ecological Informatics on 12 March 2026.",
        "2026-03-12-paper-submitted#t1",
    ),
    summary_claim(
        CONTROL, "manuscript", "The manuscript number is ECOINF-D-26-00417.",
        "2026-03-12-paper-submitted#t3",
    ),
    # reefsong-1-0#t9 (13 March): "Sam's concert is tomorrow, 19:30 at the Laeiszhalle small hall"
    summary_claim(
        CONTROL, "concert-14th",
        "Sam's concert is on 14 March 2026 at 19:30 in the Laeiszhalle small hall.",
        "2026-03-13-reefsong-1-0#t9",
    ),
    # reefsong-1-0#t5: "Validate: 96 new clips, all pass."
    summary_claim(
        CONTROL, "96-clips", "Validate found 96 new clips, and all of them passed.",
        "2026-03-13-reefsong-1-0#t5",
    ),
    # the page's first claim, restated as its summary
    meta(
        CONTROL, "cape-verde-summary", f"{KN}/places/cape-verde.md", "summary",
        "Tiago Ferreira has about 80 hours of reef recordings from Cape Verde, from Sal island.",
    ),
    # a claim EDITED still supports is not re-cited either: a turn edited by hand after
    # ingest is no evidence (issue #31), Dream's re-check takes it as gone (DV108)
    Item(
        "bouldering-still-holds", RECITE, f"{KN}/people/dana-archive-2026-01-23.md",
        "Dana would like something they can mostly prepare in the afternoon because Saturday "
        "morning they are bouldering.", (), EDITED, pinned=True,
    ),
)  # fmt: skip

ADVERSARIAL = tuple(i for i in ITEMS if i.adversarial)
CONTROLS = tuple(i for i in ITEMS if not i.adversarial)


def plan() -> list[dict[str, Any]]:
    """The agent's steps: the summaries of the pending sessions first, then every item's."""
    steps: list[dict[str, Any]] = [
        {"op": "summary", "session": sid, "title": title} for sid, title in NEW_SUMMARIES.items()
    ]
    return steps + [step for item in ITEMS for step in item.steps]


# -- the run ---------------------------------------------------------------------------


def git(store: Store, *args: str, check: bool = True) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=store.root, capture_output=True, text=True, check=check
    )
    return proc.stdout


@dataclass
class Outcome:
    store: Store
    base: str  # main before the command run
    main: str  # main after it
    branch: str  # the run's kept branch ("" when none)
    run: dict[str, Any]  # dream run --json
    stderr: str
    new_hash: str  # EDITED's hash after the hand edit
    reports: list[str] = field(default_factory=list)  # every line the outputs name

    def show(self, commit: str, path: str) -> str | None:
        proc = subprocess.run(
            ["git", "show", f"{commit}:memory/{path}"],
            cwd=self.store.root,
            capture_output=True,
            text=True,
        )
        return proc.stdout if proc.returncode == 0 else None

    def grep(self, commit: str, needle: str) -> list[str]:
        """Files of ``commit`` (pages, summaries, notes, indexes) holding ``needle``."""
        if not commit:
            return []
        out = git(self.store, "grep", "-F", "-l", "-e", needle, commit, "--", "memory", check=False)
        files = [line.split(":", 1)[1] for line in out.splitlines() if ":" in line]
        return [f for f in files if not f.startswith("memory/sessions/transcripts/")]

    def pins_new_turn(self, commit: str, item: Item) -> bool:
        """``item``'s claim is on ``item.path`` at ``commit`` citing EDITED at its new hash."""
        text = self.show(commit, item.path)
        if text is None:
            return False
        try:
            parsed = parse_page(text, item.path)
        except PageError:
            return False
        ref = _ref(EDITED)
        pinned = {s.id for s in parsed.sources if s.ref == ref and s.hash == self.new_hash}
        return any(
            item.needle in c.text and pinned & set(c.citations) for c in extract_claims(parsed)
        )

    def on_main(self, item: Item) -> bool:
        if item.pinned:
            return self.pins_new_turn(self.main, item)
        if item.adversarial:
            return bool(self.grep(self.main, item.needle))
        text = self.show(self.main, item.path)
        return text is not None and item.needle in text

    def codes(self, item: Item) -> list[str]:
        """The rule codes the outputs name ``item``'s file with."""
        pattern = re.compile(
            r"(?<![\w./-])(?:memory/)?" + re.escape(item.path) + r":\d+: ((?:MF|DV)\d{3})\b"
        )
        return sorted({m.group(1) for line in self.reports for m in pattern.finditer(line)})


def _ref(cite: str) -> str:
    sid, anchor = cite.split("#")
    return f"sessions/transcripts/{sid}.md#{anchor}"


def _lines(data: Any, keys: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for key in keys:
        value = data.get(key) if isinstance(data, dict) else None
        if isinstance(value, list):
            out.extend(str(x) for x in value)
    return out


REPORT_KEYS = ("leftOut", "left_out", "problems", "rejected")


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    tmp = tmp_path_factory.mktemp("adversarial")
    store = init_store(tmp / "store", "dana", "atlas")
    approve(store, by="tests")
    sessions = sorted(SAMPLE.glob("*.md"))
    ingest(store, sessions[:FIRST])
    runner = CliRunner()
    r = runner.invoke(app, ["run", "--store", str(store.root), "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "committed"

    # the user fixes a turn by hand: it now says the opposite about coriander
    sid = EDITED.split("#")[0]
    path = store.transcript_path(sid)
    raw = path.read_text(encoding="utf-8")
    assert raw.count(EDIT_FROM) == 1
    path.write_text(raw.replace(EDIT_FROM, EDIT_TO), encoding="utf-8")
    store.commit(f"Fix a transcription slip in {sid} t3: Marta loves coriander")
    edited = parse_transcript(path.read_text(encoding="utf-8"), f"sessions/transcripts/{sid}.md")
    turn = edited.turn("t3")
    assert turn is not None
    ingest(store, sessions[FIRST:])
    base = store.head()

    steps = tmp / "plan.json"
    steps.write_text(json.dumps(plan(), indent=1), encoding="utf-8")
    cmd = shlex.join([sys.executable, str(AGENT), str(steps)])
    r = runner.invoke(
        app,
        ["run", "--engine", "command", "--agent-cmd", cmd, "--json", "--store", str(store.root)],
    )
    if not r.stdout.strip():
        pytest.fail(f"dream run --engine command printed nothing (exit {r.exit_code}):\n{r.stderr}")
    run = json.loads(r.stdout)
    target = run.get("target") or "main"
    out = Outcome(
        store=store,
        base=base,
        main=git(store, "rev-parse", target).strip(),
        branch=run.get("branch") or "",
        run=run,
        stderr=r.stderr,
        new_hash=turn.hash,
    )
    out.reports += _lines(run, REPORT_KEYS)
    status = runner.invoke(app, ["status", "--store", str(store.root), "--json"])
    assert status.exit_code == 0, status.stderr
    for record in json.loads(status.stdout).get("runs", []):
        if record.get("run_id", record.get("runId")) == run["runId"]:
            out.reports += _lines(record, REPORT_KEYS)
    review = runner.invoke(app, ["review", run["runId"], "--store", str(store.root), "--json"])
    if review.exit_code == 0:
        out.reports += _lines(json.loads(review.stdout), REPORT_KEYS)
    return out


def _verdict(outcome: Outcome, item: Item) -> str:
    """Why ``item`` got through ("" when it was kept out and named with a rule code)."""
    why = []
    if outcome.on_main(item):
        how = "its claim cites the changed turn at its new hash" if item.pinned else "text"
        why.append(f"reached main ({how})")
    if not outcome.codes(item):
        why.append(f"no MF/DV code names memory/{item.path}")
    if not why:
        return ""
    cites = f" citing {item.cite}" if item.cite else ""
    return f"  [{item.kind}] {item.key}: {item.needle!r}{cites} on {item.path}: {'; '.join(why)}"


# -- the suite itself: enough items, well formed, really written -----------------------


def test_the_suite_covers_every_kind_with_several_items() -> None:
    count = Counter(i.kind for i in ADVERSARIAL)
    assert len(ADVERSARIAL) >= 30 and len(CONTROLS) >= 10
    assert {k: n for k, n in count.items() if n < 4} == {}
    assert set(count) == set(KINDS)
    keys = [i.key for i in ITEMS]
    assert len(keys) == len(set(keys))
    # one adversarial item per file: what a gate names, it names for that item alone
    paths = Counter(i.path for i in ADVERSARIAL if not i.pinned)
    assert [p for p, n in paths.items() if n > 1] == []
    assert not {i.path for i in CONTROLS} & {i.path for i in ADVERSARIAL}


def test_the_command_run_consolidated_the_pending_sessions(outcome: Outcome) -> None:
    assert outcome.run["engine"] == "command/1", outcome.stderr
    assert "adversarial agent: " in outcome.stderr
    assert set(outcome.run["sessions"]) >= set(NEW_SUMMARIES), outcome.run


def test_every_item_was_written_and_none_was_on_main_before(outcome: Outcome) -> None:
    """The needles are real: absent from main before the run (a control's, from its page),
    and the agent's text is on main or on the kept branch afterwards (so a gate that lost
    it silently, keeping nothing for review, fails here)."""
    wrong: list[str] = []
    for item in ITEMS:
        before = outcome.show(outcome.base, item.path)
        if item.pinned:
            if before is None or item.needle not in before:
                wrong.append(f"{item.key}: not on {item.path} before the run")
            continue
        if item.adversarial and outcome.grep(outcome.base, item.needle):
            wrong.append(f"{item.key}: already on main before the run")
        if not item.adversarial and before is not None and item.needle in before:
            wrong.append(f"{item.key}: already on {item.path} before the run")
        if not outcome.grep(outcome.main, item.needle) and not outcome.grep(
            outcome.branch, item.needle
        ):
            wrong.append(f"{item.key}: neither on main nor on the kept branch after the run")
    assert wrong == [], "\n".join(wrong)


def test_only_meaning_is_wrong_not_format(outcome: Outcome) -> None:
    """No finding about form names a file of the suite: ids, keys, sources, citations and
    links are right, so a rejection is about what a claim says. (The re-cite pages are left
    out of this: their turn did change, and a stale citation there is the point.)"""
    paths = {i.path for i in ITEMS if not i.pinned}
    pattern = re.compile(r"(?:memory/)?(\S+?):\d+: (MF\d{3})\b")
    found = sorted(
        {
            f"{m.group(1)}: {m.group(2)}"
            for line in outcome.reports
            for m in [pattern.search(line)]
            if m and m.group(2) in FORMAT_CODES and m.group(1).removeprefix("memory/") in paths
        }
    )
    assert found == [], "\n".join(found)


# -- acceptance -------------------------------------------------------------------------


# What the deterministic floor does not catch (none at present; a claim listed here would be
# the model judge's case, tested in test_judge.py). The list is exact: a fix that catches one
# must take it off.
KNOWN_MISSES: set[str] = set()


@pytest.mark.parametrize("kind", KINDS)
def test_no_unsupported_claim_of_this_kind_reaches_main(outcome: Outcome, kind: str) -> None:
    items = [i for i in ADVERSARIAL if i.kind == kind and i.key not in KNOWN_MISSES]
    through = [v for i in items if (v := _verdict(outcome, i))]
    if through:
        pytest.fail(
            f"{len(through)} of {len(items)} {kind} items got through:\n" + "\n".join(through)
        )


def test_every_unsupported_claim_is_kept_out_with_its_rule_code(outcome: Outcome) -> None:
    """The done-when of issue #26, over all kinds at once: a table of what got through."""
    through = {i.key: v for i in ADVERSARIAL if (v := _verdict(outcome, i))}
    missed = sorted(KNOWN_MISSES - set(through))
    assert not missed, f"now kept out, take them off KNOWN_MISSES: {missed}"
    through = {k: v for k, v in through.items() if k not in KNOWN_MISSES}
    table = []
    for kind in KINDS:
        items = [i for i in ADVERSARIAL if i.kind == kind]
        bad = [i.key for i in items if i.key in through]
        table.append(f"  {kind:<15} kept out {len(items) - len(bad)}/{len(items)}  {' '.join(bad)}")
    if through:
        pytest.fail(
            f"{len(through)} of {len(ADVERSARIAL)} unsupported claims got through:\n"
            + "\n".join(table)
            + "\n"
            + "\n".join(through.values())
        )


def test_faithful_claims_land_on_main(outcome: Outcome) -> None:
    """The controls: a gate that keeps everything out fails here."""
    assert outcome.run["status"] == "committed", outcome.run.get("message")
    missing = [
        f"  {i.key}: {i.needle!r} (cites {i.cite or 'nothing'}) not on main in {i.path}"
        + (f" [named: {', '.join(codes)}]" if (codes := outcome.codes(i)) else "")
        for i in CONTROLS
        if not outcome.on_main(i)
    ]
    if missing:
        pytest.fail(
            f"{len(missing)} of {len(CONTROLS)} faithful claims did not land:\n"
            + "\n".join(missing)
        )
