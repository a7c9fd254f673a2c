"""``[embed]`` in memory.toml: off by default, every key checked, written back as read."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from memoryfs.errors import MemoryFSError
from memoryfs.store.config import EmbedSettings, load_config, render_config

BASE = '[scope]\nuser = "dana"\nassistant = "atlas"\n'


def _load(tmp_path: Path, embed: str) -> EmbedSettings:
    path = tmp_path / "memory.toml"
    path.write_text(BASE + "\n[embed]\n" + embed, encoding="utf-8")
    return load_config(path).embed


def test_off_unless_a_backend_is_set(tmp_path: Path) -> None:
    path = tmp_path / "memory.toml"
    path.write_text(BASE, encoding="utf-8")
    assert not load_config(path).embed.on
    assert "[embed]" not in render_config(load_config(path))


def test_both_backends_and_a_round_trip(tmp_path: Path) -> None:
    local = _load(tmp_path, 'backend = "local"\nmodel = "~/models/minilm"\nbatch = 16\n')
    assert (local.on, local.backend, local.model, local.batch) == (
        True,
        "local",
        "~/models/minilm",
        16,
    )
    remote = _load(
        tmp_path,
        'backend = "endpoint"\nmodel = "nomic-embed-text"\n'
        'endpoint = "http://127.0.0.1:11434/v1"\napi_key_env = "EMBED_KEY"\ntimeout = 5\n',
    )
    assert remote.endpoint == "http://127.0.0.1:11434/v1" and remote.timeout == 5.0
    path = tmp_path / "memory.toml"
    config = load_config(path)
    path.write_text(render_config(config), encoding="utf-8")
    assert load_config(path).embed == config.embed


@pytest.mark.parametrize(
    ("embed", "says"),
    [
        ('backend = "faiss"\nmodel = "x"\n', "backend 'faiss' is not one of local, endpoint"),
        ('backend = "local"\n', "backend 'local' needs a model"),
        ('backend = "endpoint"\nmodel = "m"\n', "needs an http:// or https:// endpoint"),
        ('backend = "local"\nmodel = "m"\nmodle = "x"\n', "unknown key 'modle'"),
        ('backend = "local"\nmodel = "m"\nbatch = 0\n', "batch must be a whole number"),
        ('backend = "local"\nmodel = "m"\napi_key_env = "a key"\n', "must name an environment"),
    ],
)
def test_a_bad_key_is_one_clear_error(tmp_path: Path, embed: str, says: str) -> None:
    with pytest.raises(MemoryFSError, match=says):
        _load(tmp_path, embed)


def test_without_numpy_a_configured_embedder_names_the_extra(tmp_path: Path) -> None:
    from memoryfs.embed.embedder import open_embedder

    assert open_embedder(EmbedSettings()) is None  # off: nothing is imported
    settings = dataclasses.asdict(EmbedSettings(backend="local", model=str(tmp_path)))
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from memoryfs.embed.embedder import open_embedder\n"
        "from memoryfs.store.config import EmbedSettings\n"
        "from memoryfs.errors import MemoryFSError\n"
        f"try:\n    open_embedder(EmbedSettings(**{settings!r}))\n"
        "except MemoryFSError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'memoryfs[embed]'" in done.stdout


def test_a_local_model_must_be_a_folder_on_disk(tmp_path: Path) -> None:
    pytest.importorskip("numpy", reason="the [embed] extra is not installed")
    from memoryfs.embed.embedder import open_embedder

    with pytest.raises(MemoryFSError, match="memoryfs does not download models"):
        open_embedder(
            EmbedSettings(backend="local", model="sentence-transformers/all-MiniLM-L6-v2")
        )
