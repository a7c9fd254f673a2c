"""The run's facts live on disk between the summarize and wiki phases (``SpilledFacts``); the
attach phase's filings are made from them a session at a time, the same on every pass."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from engine_fixtures import sample_store

from dream.engines.base import EngineContext
from dream.engines.embedded.engine import EmbeddedEngine
from dream.phases import attach, summarize
from dream.phases.orient import find_pending
from dream.phases.spilled_facts import SpilledFacts
from dream.phases.workset import Workset
from dream.records import ConsolidationReport, Evidence, Fact
from dream.wiki.subjects import Registry, Subject
from memoryfs.forget.deletions import Deletions, load_deletions


def _fact(text: str, sid: str = "s1") -> Fact:
    ev = Evidence(sid, 3, "0123456789abcdef", "2026-01-18")
    return Fact("Priya", "person", "fact", "role", text, (ev,), "2026-01-18", ("Lisbon",))


def test_facts_come_back_equal_in_put_order_read_from_disk() -> None:
    spill = SpilledFacts()
    first = [_fact("Priya is a postdoc."), _fact("Priya moved to Lisbon.")]
    spill.put("s1", first)
    spill.put("s2", [])
    spill.put("s3", [_fact("Priya plays cello.", "s3")])
    assert list(spill) == ["s1", "s2", "s3"] and len(spill) == 3 and spill.count == 3
    got = spill.get("s1")
    assert got == first
    assert got[0] is not first[0]  # read back from the file, not held
    assert spill.get("s2") == [] and spill.get("unknown") == [] and "s2" in spill
    spill.put("s1", [_fact("Priya is a staff scientist.")])  # replaced, keeps its place
    assert [sid for sid, _ in spill.items()] == ["s1", "s2", "s3"]
    assert [f.text for f in spill.get("s1")] == ["Priya is a staff scientist."]
    assert [f.text for f in spill.get("s3")] == ["Priya plays cello."]
    spill.clear()
    assert len(spill) == 0 and spill.get("s3") == [] and spill.count == 0


def test_filings_are_made_again_the_same_on_every_pass(tmp_path: Path) -> None:
    store = sample_store(tmp_path)
    pending, _ = find_pending(store, store.head())
    ctx = EngineContext(
        store=store, stage_root=store.root, pending=pending, run_id="t", base_commit=store.head()
    )
    ws = Workset(EmbeddedEngine(), store, ConsolidationReport(), load_deletions(store))
    summarized = summarize.run(ctx, ws)
    assert summarized.sessions and len(summarized.facts) == len(summarized.sessions)
    attached = attach.run(ctx, ws, summarized)
    # nothing filed is held before the wiki phase
    assert not isinstance(attached.filings, list)
    registry = attached.registry
    known = dict(registry.subjects)  # preferences pages included: made by the attach phase
    once = [(f.subject.id, f.fact, f.primary, f.links) for f in attached.filings]
    again = [(f.subject.id, f.fact, f.primary, f.links) for f in attached.filings]
    assert once and once == again
    assert registry.subjects == known  # iterating made no subject
    assert any(sid.endswith("-preferences") for sid, *_ in once)
    facts = [f for sid in summarized.sessions for f in summarized.facts.get(sid)]
    assert len(once) <= len(facts) == summarized.facts.count


def test_a_person_named_after_a_place_or_org_takes_its_type() -> None:
    berlin = Subject("berlin", "Berlin", "place", "knowledge/places/berlin.md")
    registry = Registry([berlin], set(), Deletions())
    votes = {"Tidewater": Counter({"org": 2}), "Sam": Counter({"person": 1})}
    assert attach._kind_within("Berlin Hbf", "person", registry, votes) == "place"  # in store
    assert attach._kind_within("Tidewater Labs", "person", registry, votes) == "org"  # this run
    assert attach._kind_within("Sam Ortega", "person", registry, votes) == "person"
    assert attach._kind_within("Berlin", "person", registry, votes) == "person"  # one word
    assert attach._kind_within("Berlin Hbf", "topic", registry, votes) == "topic"
