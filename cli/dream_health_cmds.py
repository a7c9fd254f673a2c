"""``dream health``, ``dream canary`` and ``dream skills approve|status|path``: thin front ends.

``dream health`` exits with ``HealthReport.exit_code``: 0 only when healthy
(3 waiting, 4 uncertain, 5-9 a failed layer by verdict, 10 unsafe procedure;
see ``dream.health.verdicts``). Lineage lines show opaque item ids only; the pages
behind citations at risk are named because the operator has to fix them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from cli.dream_engine_cmds import (
    AgentCmdOpt,
    AgentTimeoutOpt,
    BaseUrlOpt,
    EngineOpt,
    MaxTokensOpt,
    ModelOpt,
    make_engine,
)
from cli.output import JsonOpt, StoreOpt, emit, handle_errors, open_store

if TYPE_CHECKING:
    from dream.health.verdicts import HealthReport

__all__ = ["register"]

# dream.health.verdicts.DEFAULT_DUE in days, written out so that building the command
# tree ('dream --help') does not import the health checks; tests/cli/test_cli_startup.py
# holds the two equal.
DEFAULT_DUE_DAYS = 1

skills_app = typer.Typer(
    help="Procedural memory: approve the dream skill and show its status.",
    no_args_is_help=True,
    add_completion=False,
)

SkillOpt = Annotated[
    Path | None,
    typer.Option(
        "--skill",
        help="Skill file (default: $DREAM_SKILL, else the packaged one: 'dream skills path').",
    ),
]


def _human(report: HealthReport) -> str:
    lines = [
        f"{lv.item}  {lv.verdict}" + (f"  at {lv.layer}: {lv.reason}" if lv.layer else "")
        for lv in report.lineages
    ]
    for c in report.checks:
        lines.append(f"check {c.kind}{'  ' + c.item if c.item else ''}: {c.detail}")
    for risk in report.citations_at_risk:
        lines.append(f"citation at risk: {risk.page} [cite:{risk.citation}] {risk.reason}")
    for problem in report.problems:
        lines.append(f"receipt skipped: {problem}")
    where = f" (first failed layer: {report.layer} of {report.item})" if report.layer else ""
    lines.append(f"overall: {report.overall}{where}: {report.reason}")
    return "\n".join(lines)


@handle_errors
def health_cmd(
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    max_age: Annotated[
        str, typer.Option("--max-age", help="Evidence older than this is uncertain (7d, 12h).")
    ] = "7d",
    due: Annotated[
        str, typer.Option("--due", help="A session not committed after this is overdue.")
    ] = f"{DEFAULT_DUE_DAYS}d",
    receipts: Annotated[
        list[Path] | None,
        typer.Option(
            "--receipts", help="A sandbox (or another receipts folder) to read too; repeatable."
        ),
    ] = None,
    skill: SkillOpt = None,
) -> None:
    """Classify every lineage from receipts and the store; exit 0 only when healthy."""
    from dream.health.verdicts import check_health, parse_age

    s = open_store(store)
    report = check_health(
        s,
        max_age=parse_age(max_age),
        due_after=parse_age(due),
        extra_receipt_dirs=tuple(receipts or ()),
        skill_path=skill,
    )
    emit(report.to_json(), _human(report), as_json)
    raise typer.Exit(report.exit_code)


@skills_app.command("approve")
@handle_errors
def approve_cmd(
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    by: Annotated[str, typer.Option("--by", help="Who approves (default: git user.name).")] = "",
    skill: SkillOpt = None,
) -> None:
    """Approve the active dream skill for this store (recorded in memory.toml, committed)."""
    from dream.skills import approve
    from memoryfs.remote import remote_writes

    s = open_store(store)
    with remote_writes(s):  # a clone of a remote: the approval is pushed like any commit
        a = approve(s, skill, by)
    human = f"approved dream skill {a.hash} by {a.by} at {a.at}"
    human += f" (commit {a.commit[:12]})" if a.commit else " (already approved)"
    emit({"hash": a.hash, "by": a.by, "at": a.at, "commit": a.commit}, human, as_json)


@skills_app.command("status")
@handle_errors
def status_cmd(store: StoreOpt = None, as_json: JsonOpt = False, skill: SkillOpt = None) -> None:
    """Show the active dream skill against the store's approval; exit 1 unless approved."""
    from dream.skills import skill_status

    st = skill_status(open_store(store), skill)
    who = f" by {st.approved_by} at {st.approved_at}" if st.approved_by else ""
    human = (
        f"{st.state}: active {st.active} ({st.path or 'no skill file'}), "
        f"approved {st.approved or 'none'}{who}"
    )
    emit(st.to_json(), human, as_json)
    if not st.ok:
        raise typer.Exit(1)


@skills_app.command("path")
def path_cmd(as_json: JsonOpt = False) -> None:
    """Print the path of the active dream skill (empty when none is found)."""
    from dream.skills import active_skill_path

    path = active_skill_path()
    emit({"path": str(path) if path is not None else None}, str(path or ""), as_json)


@handle_errors
def canary_cmd(
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    engine: EngineOpt = "embedded",
    base_url: BaseUrlOpt = None,
    model: ModelOpt = None,
    agent_cmd: AgentCmdOpt = None,
    agent_timeout: AgentTimeoutOpt = None,
    max_tokens: MaxTokensOpt = None,
    allow_unapproved: Annotated[
        bool,
        typer.Option(
            "--allow-unapproved",
            help="Let an engine that follows the dream skill (llm, command) run it unapproved.",
        ),
    ] = False,
    keep: Annotated[
        bool, typer.Option("--keep", help="Leave the scratch copy on disk (its path is printed).")
    ] = False,
) -> None:
    """Self-check on a scratch copy: a synthetic session through every tier; 0 only if healthy."""
    from dream.health.canary import run_canary

    s = open_store(store)
    chosen = make_engine(engine, base_url, model, agent_cmd, agent_timeout, max_tokens)
    report = run_canary(s, chosen, allow_unapproved=allow_unapproved, keep=keep)
    lines = [f"{'ok  ' if st.ok else 'FAIL'} {st.name}: {st.detail}" for st in report.steps]
    lines += [
        f"{lv.item}  {lv.verdict}" + (f"  at {lv.layer}: {lv.reason}" if lv.layer else "")
        for lv in report.lineages
    ]
    if report.scratch:
        lines.append(f"scratch copy kept at {report.scratch}")
    where = f" at {report.layer}" if report.layer else ""
    lines.append(f"canary {report.session}: {report.verdict}{where}: {report.reason}")
    emit(report.to_json(), "\n".join(lines), as_json)
    raise typer.Exit(report.exit_code)


def register(app: typer.Typer) -> None:
    app.command("health")(health_cmd)
    app.command("canary")(canary_cmd)
    app.add_typer(skills_app, name="skills")
