"""``memoryfs clone`` and ``memoryfs sync``: stores that live on a Git server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cli.output import JsonOpt, StoreOpt, emit, handle_errors, open_store

__all__ = ["register"]


@handle_errors
def clone_cmd(
    url: Annotated[str, typer.Argument(help="The store's Git URL (ssh, https, git://, a path).")],
    folder: Annotated[Path, typer.Argument(help="A new or empty folder for the clone.")],
    as_json: JsonOpt = False,
) -> None:
    """Clone a store from its Git server; ingest, forget and dream run then push to it."""
    from memoryfs.remote import clone_store

    store = clone_store(url, folder)
    emit(
        {"store": str(store.root), "remote": url, "commit": store.head()},
        f"cloned {url} into {store.root} (main at {store.head()[:10]})",
        as_json,
    )


@handle_errors
def sync_cmd(store_dir: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Fetch the remote's main, bring the store to it, and push what was made here."""
    from memoryfs.remote import publish, pull

    store = open_store(store_dir)
    pulled = pull(store)
    pushed = publish(store)
    parts = [f"{pulled.how} with {pulled.url}"]
    if pulled.replayed:
        parts.append(f"replayed {len(pulled.replayed)} local commits")
    if pulled.dropped:
        parts.append(f"dropped {len(pulled.dropped)} Dream commits for the next run to redo")
    parts.append(f"pushed {pushed[:10]}" if pushed else "nothing to push")
    emit(
        {
            "remote": pulled.url,
            "how": pulled.how,
            "replayed": list(pulled.replayed),
            "dropped": list(pulled.dropped),
            "pushed": pushed,
            "commit": store.head(),
        },
        "; ".join(parts),
        as_json,
    )


def register(app: typer.Typer) -> None:
    app.command("clone")(clone_cmd)
    app.command("sync")(sync_cmd)
