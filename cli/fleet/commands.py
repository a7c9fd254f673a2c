"""``dream fleet worker|beat|enqueue|status|add|remove``: thin front ends of ``dream.fleet``.

Every command first reads the settings and reaches Redis (``dream.fleet.config.connect``),
so that Redis down, a bad URL or the ``[fleet]`` extra missing is one line on stderr and
exit 1 before anything is written or started. Settings the flags do not cover come from
``DREAM_FLEET_*`` variables (docs/fleet.md lists them).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from cli.output import JsonOpt, emit, fail, handle_errors, log

if TYPE_CHECKING:
    from dream.fleet.config import FleetConfig

__all__ = ["register"]

fleet_app = typer.Typer(
    help="Many stores on a Git server, consolidated by Celery workers (the \\[fleet] extra).",
    no_args_is_help=True,
    add_completion=False,
)

RedisOpt = Annotated[
    str | None,
    typer.Option(
        "--redis",
        help="Redis URL: broker, results, locks, status ($DREAM_REDIS_URL, "
        "default redis://127.0.0.1:6379/0).",
    ),
]
ScratchOpt = Annotated[
    Path | None,
    typer.Option(
        "--scratch",
        help="Folder of the worker's clones ($DREAM_FLEET_SCRATCH, default ~/.cache/dream-fleet).",
    ),
]
RegistryOpt = Annotated[
    Path | None,
    typer.Option(
        "--registry",
        help="A file of store URLs, one a line ($DREAM_FLEET_REGISTRY_FILE; default: "
        "the Redis set 'dream fleet add' fills).",
    ),
]
LogLevelOpt = Annotated[str, typer.Option("--loglevel", help="Celery's log level (on stderr).")]
UrlsArg = Annotated[list[str] | None, typer.Argument(metavar="URL", help="Store URLs.")]


def _config(**overrides: Any) -> FleetConfig:
    from dream.fleet.config import FleetConfig

    return FleetConfig.from_env(**overrides)


@handle_errors
def worker_cmd(
    redis: RedisOpt = None,
    scratch: ScratchOpt = None,
    engine: Annotated[
        str | None,
        typer.Option("--engine", help="embedded (default), llm, command, package.module:Class."),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("-c", "--concurrency", min=1, help="Runs at a time (one per core).")
    ] = 1,
    pool: Annotated[str, typer.Option("--pool", help="prefork (default) or solo.")] = "prefork",
    hostname: Annotated[
        str | None, typer.Option("-n", "--hostname", help="Worker name (default: Celery's).")
    ] = None,
    loglevel: LogLevelOpt = "info",
) -> None:
    """Run a Celery worker that consolidates stores (runs until stopped)."""
    from dream.fleet.app import BEAT_QUEUE, QUEUE, create_app
    from dream.fleet.config import connect

    if pool not in ("prefork", "solo"):
        raise fail(f"--pool must be prefork or solo, not {pool!r}", 2)
    from dream.engines import load_engine

    config = _config(redis_url=redis, scratch=scratch, engine=engine)
    load_engine(config.engine)  # a bad engine is one line now, not a failure per store
    connect(config)
    config.scratch.mkdir(parents=True, exist_ok=True)
    argv = [
        "worker",
        f"--concurrency={concurrency}",
        f"--pool={pool}",
        f"--loglevel={loglevel}",
        "--without-gossip",
        "--without-mingle",
        f"--queues={QUEUE},{BEAT_QUEUE}",
    ]
    if hostname:
        argv.append(f"--hostname={hostname}")
    create_app(config).worker_main(argv)


@handle_errors
def beat_cmd(
    redis: RedisOpt = None,
    registry_file: RegistryOpt = None,
    hour: Annotated[
        int | None,
        typer.Option("--hour", min=0, max=23, help="UTC hour the nightly window opens (2)."),
    ] = None,
    jitter: Annotated[
        float | None,
        typer.Option("--jitter", min=0, help="Seconds the nightly starts spread over (10800)."),
    ] = None,
    changed_every: Annotated[
        float | None,
        typer.Option("--changed-every", min=1, help="Seconds between 'changed' sweeps (900)."),
    ] = None,
    schedule_file: Annotated[
        Path | None,
        typer.Option("--schedule-file", help="Celery beat's state file (default: in --scratch)."),
    ] = None,
    scratch: ScratchOpt = None,
    loglevel: LogLevelOpt = "info",
) -> None:
    """Run the beat: nightly runs over the registry, and the stores whose main moved."""
    from dream.fleet.app import create_app
    from dream.fleet.config import connect

    config = _config(
        redis_url=redis,
        registry_file=registry_file,
        nightly_hour=hour,
        jitter=jitter,
        changed_every=changed_every,
        scratch=scratch,
    )
    connect(config)
    config.scratch.mkdir(parents=True, exist_ok=True)
    state = schedule_file or config.scratch / "beat-schedule"
    create_app(config).start(["beat", f"--schedule={state}", f"--loglevel={loglevel}"])


@handle_errors
def enqueue_cmd(
    urls: UrlsArg = None,
    changed: Annotated[
        bool,
        typer.Option(
            "--changed",
            help="Only the stores whose remote main moved since their last run "
            "(git ls-remote; without URLs: every registered store).",
        ),
    ] = False,
    redis: RedisOpt = None,
    registry_file: RegistryOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Queue a consolidation of each store (or of the changed ones)."""
    from dream.fleet import registry
    from dream.fleet.app import create_app, enqueue, sweep_changed
    from dream.fleet.config import connect

    wanted = [registry.check_url(u) for u in urls or []]
    if not wanted and not changed:
        raise fail("give the store URLs to queue, or --changed", 2)
    config = _config(redis_url=redis, registry_file=registry_file)
    client = connect(config)
    app = create_app(config)
    if not changed:
        sent = enqueue(app, client, config, wanted, once=False)
        emit({"queued": sent}, "\n".join(f"queued {u}" for u in sent), as_json)
        return
    sweep = sweep_changed(app, client, config, wanted or registry.stores(client, config))
    data = {
        "checked": sweep.checked,
        "changed": list(sweep.changed),
        "queued": sweep.queued,
        "unreachable": list(sweep.unreachable),
    }
    lines = [f"queued {u}" for u in sweep.queued]
    lines += [f"queued or running already {u}" for u in sweep.changed if u not in sweep.queued]
    lines.append(
        f"{sweep.checked} checked, {len(sweep.changed)} changed, {len(sweep.queued)} queued"
    )
    for line in sweep.unreachable:
        log(f"unreachable: {line}")
    emit(data, "\n".join(lines), as_json)
    if sweep.unreachable:
        raise typer.Exit(1)


@handle_errors
def status_cmd(
    urls: UrlsArg = None,
    redis: RedisOpt = None,
    registry_file: RegistryOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Per store: state, last run, its result, pending sessions, failures."""
    from dream.fleet import registry, status
    from dream.fleet.config import connect

    config = _config(redis_url=redis, registry_file=registry_file)
    client = connect(config)
    wanted = urls or sorted(
        set(registry.stores(client, config)) | set(status.known(client, config))
    )
    records = status.load(client, config, wanted)
    lines = []
    for r in records:
        result = f"{r.status}: {r.message}" if r.status else "never run"
        lines.append(
            f"{r.url}  {r.state or '-'}  last run {r.last_run or '-'}  pending {r.pending_text}  "
            f"failures {r.failures}\n  {result}"
        )
    lines.append(f"{len(records)} stores")
    emit({"stores": [r.to_json() for r in records]}, "\n".join(lines), as_json)


@handle_errors
def add_cmd(
    urls: Annotated[list[str], typer.Argument(metavar="URL", help="Store URLs.")],
    redis: RedisOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Register stores for the nightly runs and the 'changed' sweeps."""
    from dream.fleet import registry
    from dream.fleet.config import connect

    wanted = [registry.check_url(u) for u in urls]
    config = _config(redis_url=redis)
    added = registry.add(connect(config), config, wanted)
    emit({"added": added}, "\n".join(f"added {u}" for u in added) or "nothing new", as_json)


@handle_errors
def remove_cmd(
    urls: Annotated[list[str], typer.Argument(metavar="URL", help="Store URLs.")],
    redis: RedisOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Unregister stores (their status records stay)."""
    from dream.fleet import registry
    from dream.fleet.config import connect

    config = _config(redis_url=redis)
    gone = registry.remove(connect(config), config, urls)
    emit({"removed": gone}, "\n".join(f"removed {u}" for u in gone) or "none registered", as_json)


def register(app: typer.Typer) -> None:
    fleet_app.command("worker")(worker_cmd)
    fleet_app.command("beat")(beat_cmd)
    fleet_app.command("enqueue")(enqueue_cmd)
    fleet_app.command("status")(status_cmd)
    fleet_app.command("add")(add_cmd)
    fleet_app.command("remove")(remove_cmd)
    app.add_typer(fleet_app, name="fleet")
