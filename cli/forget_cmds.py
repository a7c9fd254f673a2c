"""The ``forget`` command: deletion that holds, optionally out of Git history too."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.output import JsonOpt, StoreOpt, emit, fail, handle_errors, log, open_store

__all__ = ["register"]


@handle_errors
def forget_cmd(
    page: Annotated[
        str | None, typer.Option("--page", help="Id of a knowledge/ or notes/ page.")
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", help="Session id: transcript and summary.")
    ] = None,
    phrase: Annotated[
        str | None,
        typer.Option("--phrase", help="Words to forget everywhere (matched case-insensitively)."),
    ] = None,
    reason: Annotated[
        str | None,
        typer.Option("--reason", help="Why (kept in the log and commit; must not repeat it)."),
    ] = None,
    purge_history_: Annotated[
        bool,
        typer.Option(
            "--purge-history",
            help="Also rewrite Git history so no commit holds what the deletion log forgot.",
        ),
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", help="Do not ask before rewriting history.")
    ] = False,
    store_dir: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Forget a page, session or phrase: a tombstone, the content removed, one commit.

    Without --page/--session/--phrase, --purge-history purges everything the log
    already forgot.
    """
    from memoryfs.forget.purge import count_commits, purge_history
    from memoryfs.forget.remove import forget

    targets = [(k, v) for k, v in (("page", page), ("session", session), ("phrase", phrase)) if v]
    if len(targets) > 1:
        raise fail("give one of --page, --session or --phrase", 2)
    if not targets and not purge_history_:
        raise fail("give one of --page, --session or --phrase (or --purge-history)", 2)
    if targets and not (reason and reason.strip()):
        raise fail("--reason is required (say why, without repeating what)", 2)
    store = open_store(store_dir)
    if purge_history_ and not yes:
        n = count_commits(store)
        try:
            ok = typer.confirm(
                f"Rewrite all {n} commits of {store.root}? Commit ids change; clones must re-clone",
                default=False,
                err=True,
            )
        except (typer.Abort, EOFError):
            ok = False
        if not ok:
            raise fail("aborted (confirm, or pass --yes); nothing changed", 1)
    data: dict[str, object] = {}
    lines: list[str] = []
    if targets:
        kind, target = targets[0]
        result = forget(store, kind, target, reason or "")
        data["forget"] = result.to_dict()
        lines.append(
            f"forgot {kind}: removed {len(result.removed)} files, edited {len(result.edited)} "
            f"pages ({result.lines_removed} lines), redacted {result.turns_redacted} turns in "
            f"{len(result.redacted)} transcripts"
            + (f" ({result.commit[:10]})" if result.commit else "")
        )
    if purge_history_:
        log("purging history (this rewrites every commit)...")
        purge = purge_history(store)
        data["purge"] = purge.to_dict()
        lines.append(
            f"purged history: rewrote {purge.rewritten} of {purge.commits} commits "
            f"({purge.versions} file versions scrubbed), moved {len(purge.refs)} refs"
            + (
                f", removed {len(purge.worktrees_removed)} worktrees"
                if purge.worktrees_removed
                else ""
            )
            + "; reflogs expired, old objects pruned"
        )
    emit(data, "\n".join(lines), as_json)


def register(app: typer.Typer) -> None:
    app.command("forget")(forget_cmd)
