"""The embedded engine: Dream's default thinking, with no network and no model.

Summaries are extractive (``dream.engines.embedded.digest``: sentences ranked by salience, each
citing its turn); facts are cue-based (``dream.engines.embedded.extract``: preferences, facts about
people, orgs, places and projects, dated events, decisions and plans, relative dates resolved
against the session date). The shared phases (``dream.phases.consolidate``) resolve subjects with
rapidfuzz and write the pages. Deterministic: same session, same output.
"""

from __future__ import annotations

from dream.engines.base import Engine
from dream.engines.embedded.digest import summarize_session
from dream.engines.embedded.extract import extract_facts
from dream.records import Fact, SummaryDraft
from memoryfs.pages.transcript import Transcript

__all__ = ["EmbeddedEngine"]


class EmbeddedEngine(Engine):
    name = "embedded"
    version = "1"
    acts_on_skill = False  # rules in code, no instructions read: no approval to ask for

    def summarize(self, session: Transcript) -> SummaryDraft:
        return summarize_session(session)

    def extract(self, session: Transcript) -> list[Fact]:
        return extract_facts(session)
