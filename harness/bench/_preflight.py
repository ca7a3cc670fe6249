"""Checks ``harness run`` makes before any cell runs (bad input exits 2 and leaves no run row).

- :func:`dedupe`: a mode, provider or suite named twice runs once, with a warning.
- :func:`check_output_path`: an output file (``--db``, ``--trace-file``) can be created and
  written; otherwise a :class:`~harness.errors.ConfigError` names the path and the fix.
- :func:`check_providers`: a provider that cannot possibly work (a required API key missing, no
  base URL) when the run may reach the network (any record mode but ``none``); in every mode
  an API key that is set must fit in an HTTP header (printable ASCII).
- :func:`check_judges`: the same for the providers of ``judge`` graders.
- :func:`check_graders`: every python grader of the suites can be imported (in a child process).
- :func:`check_recorded_epochs`: replaying (record mode ``none``), every epoch asked of an HTTP
  provider was recorded for it; otherwise the error names the recorded epochs per provider.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._files import not_a_folder, open_regular
from harness.errors import ConfigError
from harness.grading._base import Grader, walked
from harness.grading._judge import JudgeGrader
from harness.grading._python import check_imports, python_graders
from harness.suites._load import suite_files
from harness.suites._suite import Suite, SuiteError

if TYPE_CHECKING:
    from harness.bench._matrix import Cell
    from harness.providers._profiles import ProviderProfile

__all__ = [
    "check_executor",
    "check_graders",
    "check_judges",
    "check_names",
    "check_output_path",
    "check_providers",
    "check_recorded_epochs",
    "check_utf8",
    "dedupe",
    "suite_files_or_none",
    "utf8_or_refuse",
]


def dedupe(names: Sequence[str], flag: str, warn: Callable[[str], None]) -> list[str]:
    """``names`` without repeats (first occurrence kept); warns once per repeated name."""
    out: list[str] = []
    for name in names:
        if name in out:
            continue
        out.append(name)
    for name in out:
        if (n := list(names).count(name)) > 1:
            warn(f"{flag} names {name!r} {n} times; running it once")
    return out


def check_output_path(path: Path, flag: str) -> None:
    """Raise ConfigError unless ``path`` can be created (with its folders) and written.

    The probe really writes (permission bits do not stop root): a file that did not exist is
    removed again, and so are the folders made for it."""
    fix = f"give {flag} a writable file path"
    try:
        is_folder = path.is_dir()
    except OSError as exc:  # a name longer than the system takes (ENAMETOOLONG): a traceback
        raise ConfigError(f"{flag} {path}: cannot write there ({exc.strerror}); {fix}") from None
    if is_folder:
        raise ConfigError(f"{flag} {path}: is a directory; {fix}")
    made: list[Path] = []
    try:
        missing = [p for p in reversed(path.parents) if not p.exists()]
        for folder in missing:
            try:
                folder.mkdir()
            except FileExistsError:  # another run made it meanwhile (two runs started at once)
                if not folder.is_dir():  # or a link that loops or leads nowhere, a file
                    what = not_a_folder(folder)
                    raise ConfigError(
                        f"{flag} {path}: {folder} is {what}, not a folder; {fix}"
                    ) from None
                continue
            made.append(folder)
        existed = path.exists()
        os.close(open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, named_by_user=True))
        if not existed:
            path.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        where = exc.filename or path
        raise ConfigError(f"{flag} {path}: cannot write there ({reason}: {where}); {fix}") from None
    finally:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()


def check_providers(providers: Sequence[str], record_mode: str) -> None:
    """Providers that cannot possibly work when the run may reach the network: a required API
    key that is not set, or no base URL. Replays (record mode ``none``) need neither; a key
    that is set must fit in an HTTP header whatever the mode (one of undecodable bytes made
    every cell an error cell)."""
    from harness.providers._profiles import resolve_profile

    problems = []
    for spec in providers:
        profile, _ = resolve_profile(spec)
        if profile.kind == "mock":
            continue
        try:
            _check_profile(profile, record_mode, base_url_given=False)
        except ConfigError as exc:
            problems.append(f"--providers {spec}: {exc}")
    if problems:
        raise ConfigError("\n".join(problems))


def _check_profile(profile: ProviderProfile, record_mode: str, *, base_url_given: bool) -> None:
    if record_mode == "none":
        if profile.api_key_env and os.environ.get(profile.api_key_env):
            profile.api_key()  # set: it must be sendable even when replaying
        return
    profile.api_key()
    if not base_url_given:
        profile.resolved_base_url()


def _judges(grader: Grader) -> list[JudgeGrader]:
    return [g for g in walked(grader) if isinstance(g, JudgeGrader)]


def check_judges(suites: Sequence[Suite], record_mode: str) -> None:
    """A ``judge`` grader's provider, checked as :func:`check_providers` checks the run's."""
    from harness.providers._profiles import resolve_profile

    problems = []
    for suite in suites:
        for task in suite.tasks:
            for judge in _judges(task.expect):
                profile, _ = resolve_profile(judge.provider)
                if profile.kind == "mock":
                    continue
                given = bool((judge.provider_opts or {}).get("base_url"))
                try:
                    _check_profile(profile, record_mode, base_url_given=given)
                except ConfigError as exc:
                    where = suite.source or suite.name
                    problems.append(f"{where}: task {task.id!r}: expect.provider: {exc}")
    if problems:
        raise ConfigError("\n".join(problems))


def check_graders(suites: Sequence[Suite]) -> None:
    """Import every python grader of ``suites`` (relative to each suite file's folder)."""
    where: dict[tuple[str, str], list[str]] = {}
    for suite in suites:
        for task in suite.tasks:
            for ref, base in python_graders(task.expect):
                key = (ref, str(base) if base is not None else "")
                where.setdefault(key, []).append(f"{suite.source or suite.name}: task {task.id!r}")
    if not where:
        return
    refs = [(ref, Path(base) if base else None) for ref, base in where]
    problems = check_imports(refs)
    if problems:
        lines = []
        for problem in problems:
            users = [u for (ref, _), us in where.items() if f" {ref}:" in problem for u in us]
            lines.append(f"{users[0] if users else 'a suite'}: expect: {problem}")
        raise ConfigError("\n".join(lines))


def check_recorded_epochs(cells: Sequence[Cell], cassettes: Path, record_mode: str) -> None:
    """Replaying, asking an HTTP provider for an epoch it has no cassette of (in any of the
    requested suites and modes) is bad input: ConfigError naming each provider's recorded
    epochs, before any cell runs. Providers with no cassettes at all are left to the cells."""
    if record_mode != "none":
        return
    wanted: dict[str, set[int]] = {}
    folders: dict[str, set[Path]] = {}
    for cell in cells:
        if cell.is_mock:
            continue
        path = cell.cassette(cassettes)
        if path is None:
            continue
        wanted.setdefault(cell.provider, set()).add(cell.epoch)
        folders.setdefault(cell.provider, set()).add(path.parent)
    problems = []
    for provider, epochs in sorted(wanted.items()):
        recorded = {
            int(f.name.rpartition(".e")[2].removesuffix(".yaml"))
            for folder in folders[provider]
            if folder.is_dir()
            for f in folder.glob("*.e*.yaml")
            if f.name.rpartition(".e")[2].removesuffix(".yaml").isdigit()
        }
        if not recorded or epochs <= recorded:
            continue
        have = ", ".join(f"e{e}" for e in sorted(recorded))
        missing = ", ".join(f"e{e}" for e in sorted(epochs - recorded))
        problems.append(f"{provider} has cassettes of epochs {have} only (asked: {missing})")
    if problems:
        raise ConfigError(
            "--epochs: not recorded, nothing would replay: "
            + "; ".join(problems)
            + f" under {cassettes}. Ask for fewer epochs, or record them with --record-mode once"
        )


def check_executor(executor: str, workers: int | None, ray_address: str | None) -> None:
    """An unknown executor, or flags it does not take, are bad input (exit 2, no run row)."""
    from harness.bench._executors import EXECUTORS, refuse_ray_flags

    try:
        EXECUTORS.get(executor)
    except ConfigError as exc:
        raise ConfigError(f"--executor: {exc}") from None
    if executor == "local":
        refuse_ray_flags(workers, ray_address)
        return
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers: must be >= 1, got {workers}")
    if executor == "ray":
        from harness.bench._ray_executor import import_ray

        import_ray()  # not installed: ConfigError with the install command (exit 2, no run row)


def check_utf8(request: Any) -> None:
    """Every name the run stores (label, paths, modes, providers, tasks) is valid UTF-8 text:
    a name from bytes that are not (``--label $'\\xff'``, a suite file or ``--db`` folder
    named so) reached DuckDB, which refused it with a traceback."""
    for name in dataclasses.fields(request):
        value = getattr(request, name.name)
        values = value if isinstance(value, list | tuple) else [value]
        flag = "SUITE" if name.name == "suites" else "--" + name.name.replace("_", "-")
        for one in values:
            if isinstance(one, str | Path):
                utf8_or_refuse(str(one), flag)


def utf8_or_refuse(text: str, flag: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        shown = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise ConfigError(
            f"{flag} {shown}: not valid UTF-8 (byte {exc.start}); the store keeps only UTF-8 "
            "text: rename it"
        ) from None


def suite_files_or_none(path: str) -> list[Path]:
    try:
        return suite_files([path])
    except SuiteError:
        return []  # load_suites reports it


def check_names(modes: Sequence[str], providers: Sequence[str]) -> None:
    """Unknown modes and providers are bad input (exit 2), not a matrix of crashed cells."""
    from harness.modes._base import check_mode_spec
    from harness.providers._profiles import resolve_profile

    for mode in modes:
        try:
            check_mode_spec(mode)
        except ConfigError as exc:
            raise ConfigError(f"--modes: {exc}") from None
    for spec in providers:
        try:
            resolve_profile(spec)
        except ConfigError as exc:
            raise ConfigError(f"--providers: {exc}") from None
