"""The ``forget`` command: deletion that holds, optionally out of Git history too."""

from __future__ import annotations

from typing import Annotated, Any

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
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Only check: scan the tree, caches, logs, branches and all Git history "
            "for what the deletion log forgot; exit 1 with one line per place it remains.",
        ),
    ] = False,
    store_dir: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Forget a page, session or phrase: a tombstone, every derived trace removed, one commit.

    Without --page/--session/--phrase, --purge-history purges everything the log
    already forgot. Every forget ends by checking that what it forgot is nowhere
    (history aside, until --purge-history); --verify runs that check, history included.
    """
    from memoryfs.forget.purge import check_purge, count_commits, purge_history
    from memoryfs.forget.remove import AlreadyForgotten, forget
    from memoryfs.forget.verify import verify_forgotten
    from memoryfs.remote import RemoteError, publish, publish_purged, pull, remote_tip, remote_url

    targets = [(k, v) for k, v in (("page", page), ("session", session), ("phrase", phrase)) if v]
    if verify and (targets or purge_history_):
        raise fail("--verify only checks; give it alone", 2)
    if len(targets) > 1:
        raise fail("give one of --page, --session or --phrase", 2)
    if not targets and not purge_history_ and not verify:
        raise fail("give one of --page, --session or --phrase (or --purge-history, --verify)", 2)
    if targets and not (reason and reason.strip()):
        raise fail("--reason is required (say why, without repeating what)", 2)
    store = open_store(store_dir)
    url = None if verify else remote_url(store)
    lease = ""
    if url is not None:
        pull(store)  # an unreachable remote stops the forget before it writes anything
        lease = remote_tip(store)  # what a purge's forced push may replace, and only that
    if verify:
        proof = verify_forgotten(store, history=True)
        _finish({"verify": proof.to_dict()}, [], proof, as_json)
        return
    if purge_history_:
        check_purge(store)  # before the forget commits: a purge that cannot finish never starts
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
    report: Any = None
    if targets:
        kind, target = targets[0]
        try:
            result = forget(store, kind, target, reason or "")
        except AlreadyForgotten as exc:
            if exc.finished and not purge_history_:
                # a forget stopped after its commit: its clean-up is done now, and its
                # commit goes to the remote if it had not
                log(str(exc.args[0]))
                if url is not None:
                    publish(store)
                return
            if not purge_history_:
                raise
            # a purge that failed after its forget committed: finish the purge
            log(f"{exc.args[0].split(';')[0]}; finishing the history purge")
        else:
            data["forget"] = result.to_dict()
            report = result.verify
            cleaned = result.derived
            lines.append(
                f"forgot {kind}: removed {len(result.removed)} files, edited "
                f"{len(result.edited)} pages ({result.lines_removed} lines), redacted "
                f"{result.turns_redacted} turns in {len(result.redacted)} transcripts"
                + (f" ({result.commit[:10]})" if result.commit else "")
                + (
                    f"; dropped {len(cleaned.worktrees)} Dream worktrees, "
                    f"{len(cleaned.branches)} kept Dream branches, scrubbed "
                    f"{len(cleaned.run_logs)} run logs, caches"
                )
            )
    if purge_history_:
        log("purging history (this rewrites every commit)...")
        purge = purge_history(store)
        data["purge"] = purge.to_dict()
        report = purge.verify
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
    if url is not None:
        try:
            pushed = publish_purged(store, lease) if purge_history_ else publish(store)
        except RemoteError as exc:
            raise RemoteError(
                f"forgotten here but not on the remote ('memoryfs sync' pushes it): {exc}"
            ) from None
        if pushed:
            lines.append(
                f"force-pushed the purged history to {url} ({pushed[:10]}); the server keeps "
                "the old objects until it runs 'git gc --prune=now'"
                if purge_history_
                else f"pushed {pushed[:10]} to {url}"
            )
            data["pushed"] = pushed
    _finish(data, lines, report, as_json)


def _finish(data: dict[str, object], lines: list[str], report: Any, as_json: bool) -> None:
    """Print the result and the proof; exit 1 when anything forgotten remains."""
    if report is not None:
        where = (
            "the store, its caches, logs and history"
            if report.history
            else (
                "the store, its caches, logs and branches (history keeps it until --purge-history)"
            )
        )
        if report.ok:
            lines.append(f"verified: nothing forgotten remains in {where}")
        else:
            lines.append(f"NOT FORGOTTEN: content the deletion log forgets remains in {where}")
    emit(data, "\n".join(lines), as_json)
    if report is not None and not report.ok:
        for remains in report.remains:
            log(f"error: {remains.line()}")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("forget")(forget_cmd)
