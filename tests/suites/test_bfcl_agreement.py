"""Issue 26, "Done means": for every BFCL cell of the default bench, re-grading the calls stored
in ``results.turns`` with BFCL's checker, called here directly as BFCL's own evaluation runner
calls it (``bfcl_eval/eval_checker/eval_runner.py`` for function-calling models), gives the
verdict stored in ``results.passed``: 100% agreement.

Nothing of the harness's grading path is used to re-grade (not ``harness.grading._bfcl_checker``
nor the harness's copy of BFCL's data): the questions and possible answers are read from
``bfcl_eval/data`` here, the model outputs are decoded as BFCL's FC decoders do, and
``ast_checker`` / ``multi_turn_checker`` are imported from ``bfcl_eval``. The default bench's
BFCL cells (``suites/bfcl.yaml``, three modes, two epochs, the mock plus every provider with
cassettes under ``cassettes/bfcl/``) are replayed offline into a temporary DuckDB file and read
back from it. The mock plays the ground truth, so a second run plays a perturbed ground truth
(wrong values, a call missing, no call, a call where none applies) to put failures of every
kind on both sides of the comparison.

The multi-turn checker's hazards are handled here as BFCL's runner would need them handled:
a fresh model name per cell with its instance globals deleted afterwards (they are keyed by
model name and entry id), and ``mpmath`` / ``decimal`` precision restored after each grading.
"""

from __future__ import annotations

import copy
import decimal
import importlib
import itertools
import json
import re
import sys
import types
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)",
)
pytest.importorskip(
    "mpmath", reason="mpmath is not installed (pip install --no-deps bfcl-eval==2026.3.23 mpmath)"
)

import duckdb
import mpmath

from harness.bench._session import BenchRequest, run_bench
from harness.store._transcript import decode_transcript
from harness.suites import SOURCES, Suite, load_suite
from harness.suites._bfcl_data import CATEGORIES, MULTI_TURN_CATEGORIES, UNSATISFIABLE

#: Every test replays a whole matrix (the default bench's BFCL cells, the zero-shot suite, the
#: oracle's 4,300 cells) and re-grades it with BFCL's own checker.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: The default bench's BFCL suites: single-turn entries on both servers, more on llama-server,
#: multi-turn entries on llama-server (the mock plays all of them).
SUITES = [
    ROOT / "suites" / name for name in ("bfcl.yaml", "bfcl_more.yaml", "bfcl_multi_turn.yaml")
]
CASSETTES = ROOT / "cassettes"
MODES = ("react", "plan_and_solve", "reflexion")
EPOCHS = 2
TASKS = {(suite := load_suite(path)).suite: len(suite.tasks) for path in SUITES}

# --- BFCL, imported the way its runner imports it -----------------------------------------------

_MODEL_CONFIG = "bfcl_eval.constants.model_config"


def _bfcl() -> tuple[Any, Any, Any, Any, Path]:
    """``ast_checker``, ``multi_turn_checker``, ``multi_turn_utils``, ``Language`` and the data
    folder. ``bfcl_eval.constants.model_config`` imports every model SDK; the checkers only read
    ``MODEL_CONFIG_MAPPING[name].underscore_to_dot``, so a module holding that mapping stands in
    for it when the real one is not loaded."""
    if _MODEL_CONFIG not in sys.modules:
        stub = types.ModuleType(_MODEL_CONFIG)
        stub.MODEL_CONFIG_MAPPING = {}  # type: ignore[attr-defined]
        sys.modules[_MODEL_CONFIG] = stub
    ast_mod = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
    multi = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker")
    utils = importlib.import_module("bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils")
    enums = importlib.import_module("bfcl_eval.constants.enums")
    data = Path(str(importlib.import_module("bfcl_eval").__file__)).parent / "data"
    return ast_mod.ast_checker, multi.multi_turn_checker, utils, enums.Language, data


AST_CHECKER, MULTI_TURN_CHECKER, MT_UTILS, LANGUAGE, DATA = _bfcl()
#: The checker model: an OpenAI-style function-calling model, whose tool names have ``_`` for
#: BFCL's dots (``underscore_to_dot``); no ``_`` in the name (BFCL looks it up with ``_`` -> ``/``).
AST_MODEL = "agreement-fc"
sys.modules[_MODEL_CONFIG].MODEL_CONFIG_MAPPING[AST_MODEL] = types.SimpleNamespace(
    underscore_to_dot=True
)
_names = itertools.count(1)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@cache
def _category(category: str) -> dict[str, tuple[dict[str, Any], Any]]:
    """BFCL's entries of ``category`` by id: (prompt entry, possible answer or None)."""
    answers = DATA / "possible_answer" / f"BFCL_v4_{category}.json"
    truth = {a["id"]: a["ground_truth"] for a in _lines(answers)} if answers.is_file() else {}
    rows = _lines(DATA / f"BFCL_v4_{category}.json")
    return {row["id"]: (row, truth.get(row["id"])) for row in rows}


@cache
def _class_functions(cls: str) -> frozenset[str]:
    mapping = importlib.import_module("bfcl_eval.constants.executable_backend_config")
    docs = _lines(DATA / "multi_turn_func_doc" / mapping.MULTI_TURN_FUNC_DOC_FILE_MAPPING[cls])
    return frozenset(d["name"] for d in docs)


# --- BFCL's FC decoding (bfcl_eval/model_handler, not importable without tree_sitter) ------------


def _decode_ast(step: list[list[Any]]) -> list[dict[str, Any]]:
    """``OpenAICompletionsHandler.decode_ast`` for FC models: ``[{name: arguments}]``."""
    return [{name: args} for name, args in step]


def _is_function_calling_format(decoded: Any) -> bool:
    """``bfcl_eval.utils.is_function_calling_format_output``."""
    if not isinstance(decoded, list):
        return False
    return all(
        isinstance(item, dict) and len(item) == 1 and isinstance(next(iter(item.values())), dict)
        for item in decoded
    )


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _convert_to_function_call(step: list[list[Any]], allowed: frozenset[str]) -> list[str]:
    """``bfcl_eval.model_handler.utils.convert_to_function_call``: ``name(k=repr(v),...)``.
    BFCL ``eval()``s these strings, so a name that is not one of the entry's functions, or a key
    that is not an identifier, becomes a call of an undefined name (it fails to execute, as an
    unknown name would) rather than code."""
    out = []
    for name, args in step:
        safe = name in allowed and isinstance(args, dict)
        safe = safe and all(_IDENTIFIER.fullmatch(k) for k in args)
        if not safe:
            out.append("agreement_unknown_function()")
            continue
        out.append(f"{name}({','.join(f'{k}={v!r}' for k, v in args.items())})")
    return out


# --- re-grading one stored cell ------------------------------------------------------------------


def _first_calls(turns: list[dict[str, Any]]) -> list[list[Any]] | None:
    """The model's first tool-calling reply (what BFCL's single-turn runner keeps)."""
    return next((step for turn in turns for step in turn["steps"] if step), None)


def regrade_single_turn(category: str, entry_id: str, turns: list[dict[str, Any]]) -> bool:
    """``_evaluate_single_relevance_entry`` / ``_evaluate_single_ast_entry``."""
    prompt, answer = _category(category)[entry_id]
    step = _first_calls(turns)
    if "relevance" in category:  # irrelevance, live_irrelevance, live_relevance
        decoded = _decode_ast(step) if step else None
        contains_call = decoded is not None and not (
            not _is_function_calling_format(decoded)
            or len(decoded) == 0
            or (len(decoded) == 1 and len(decoded[0]) == 0)
        )
        return not contains_call if "irrelevance" in category else contains_call
    if step is None:  # a text reply: BFCL's FC decoder fails on it (ast_decoder:decoder_failed)
        return False
    decoded = _decode_ast(step)
    if not _is_function_calling_format(decoded):
        return False
    result = AST_CHECKER(prompt["function"], decoded, answer, LANGUAGE.PYTHON, category, AST_MODEL)
    return bool(result["valid"])


def regrade_multi_turn(category: str, entry_id: str, turns: list[dict[str, Any]]) -> bool:
    """``_evaluate_single_multi_turn_entry``, with a fresh model name whose globals are deleted
    afterwards and the precision BFCL's MathAPI changes restored."""
    prompt, answer = _category(category)[entry_id]
    if len(turns) != len(answer):  # BFCL: multi_turn:force_terminated
        return False
    if any(t["finish_reason"] == "error_max_steps_per_turn" for t in turns):
        return False  # BFCL's runner force-quits the entry past 20 steps in a turn
    allowed = frozenset().union(*(_class_functions(c) for c in prompt["involved_classes"]))
    decoded = []
    for turn in turns:
        steps = [_convert_to_function_call(step, allowed) for step in turn["steps"]]
        decoded.append([s for s in steps if not MT_UTILS.is_empty_execute_response(s)])
    model = f"agreement-mt-{next(_names)}"
    prefix = re.sub(r"[-./:]", "_", model) + "_"
    saved = mpmath.mp.prec, decimal.getcontext().prec
    try:
        result = MULTI_TURN_CHECKER(decoded, answer, copy.deepcopy(prompt), category, model)
    finally:
        namespace = vars(MT_UTILS)
        for key in [k for k in namespace if k.startswith(prefix)]:
            del namespace[key]
        mpmath.mp.prec, decimal.getcontext().prec = saved
    return bool(result["valid"])


def regrade(entry_id: str, turns: list[dict[str, Any]]) -> bool:
    category = entry_id.rsplit("_", 1)[0]
    if category.startswith("multi_turn"):
        return regrade_multi_turn(category, entry_id, turns)
    return regrade_single_turn(category, entry_id, turns)


# --- runs ----------------------------------------------------------------------------------------


def _run(
    db: Path,
    suites: list[str],
    providers: tuple[str, ...],
    tasks: tuple[str, ...] = (),
    *,
    modes: tuple[str, ...] = MODES,
    epochs: int = EPOCHS,
) -> None:
    report = run_bench(
        BenchRequest(
            suites=suites,
            modes=modes,
            providers=providers,
            epochs=epochs,
            tasks=tasks,
            record_mode="none",
            cassettes=CASSETTES,
            db=db,
            trace_file=db.parent / "spans.jsonl",
            progress=False,
        )
    )
    assert not report.summary.interrupted, report.summary  # error cells are reported per cell


def _cells(db: Path) -> list[tuple[str, str, str, int, bool, str | None, str]]:
    return [row[:7] for row in _rows(db)]


def _rows(db: Path) -> list[tuple[str, str, str, int, bool, str | None, str, Any]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT provider, mode, task_id, epoch, passed, status, turns, transcript "
            "FROM results WHERE suite LIKE 'bfcl%' ORDER BY provider, mode, task_id, epoch"
        ).fetchall()
    finally:
        con.close()
    return [(p, m, t, e, bool(ok), s, turns, tr) for p, m, t, e, ok, s, turns, tr in rows]


def _transcript_calls(blob: Any) -> list[list[Any]] | None:
    """The calls of the stored transcript's assistant messages, in order, as ``[name, args]``
    (None when the transcript left messages out)."""
    doc = decode_transcript(blob)
    assert doc is not None
    messages = doc["messages"]
    if any(m["role"] == "note" for m in messages):
        return None
    return [
        [c["name"], c["arguments"]]
        for m in messages
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or ()
    ]


def _agreement(db: Path) -> tuple[int, Counter[str], list[str]]:
    """(cells compared, verdicts per provider, disagreements). A cell whose stored transcript
    shows other calls than ``results.turns`` (a tool changed its arguments after the call) is a
    disagreement too: both must show what the model sent."""
    compared, verdicts, disagreements = 0, Counter[str](), []
    for provider, mode, task_id, epoch, passed, status, text, blob in _rows(db):
        cell = f"{provider}/{mode}/{task_id}/e{epoch}"
        # An error cell (e.g. a cassette missing) has no verdict: the bench is incomplete.
        assert status != "error", f"{cell} could not be scored"
        assert text is not None, f"{cell}: no turns stored"
        turns = json.loads(text)
        bfcl = regrade(task_id, turns)
        compared += 1
        verdicts[f"{provider} {'pass' if bfcl else 'fail'}"] += 1
        if bfcl != passed:
            disagreements.append(f"{cell}: BFCL {bfcl}, {passed}")
        shown = _transcript_calls(blob)
        stored = [call for turn in turns for step in turn["steps"] for call in step]
        if shown is not None and shown != stored:
            disagreements.append(f"{cell}: the transcript's calls differ from results.turns")
    return compared, verdicts, disagreements


def recorded_providers(suite: str) -> list[str]:
    """The providers ``--providers auto`` replays for ``suite`` (retired ones left out)."""
    from harness.bench._session import discover_providers

    return [p for p in discover_providers(CASSETTES, [suite]) if p != "mock"]


@pytest.fixture(scope="module")
def bench_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("bfcl-agreement") / "harness.duckdb"
    _run(db, [str(path) for path in SUITES], ("auto",))
    return db


def test_every_default_bench_bfcl_cell_agrees_with_bfcls_checker(bench_db: Path) -> None:
    per_suite = {name: ["mock", *recorded_providers(name)] for name in TASKS}
    compared, verdicts, disagreements = _agreement(bench_db)
    cells = len(MODES) * EPOCHS
    assert compared == sum(TASKS[name] * cells * len(p) for name, p in per_suite.items())
    assert {key.split()[0] for key in verdicts} == {p for ps in per_suite.values() for p in ps}
    assert verdicts["mock pass"] == sum(TASKS.values()) * cells  # the ground truth passes
    assert disagreements == []


# --- the zero-shot suite: every recorded cell of the real models ----------------------------------

ZERO_SHOT = ROOT / "suites" / "bfcl_zero_shot.yaml"


@pytest.fixture(scope="module")
def zero_shot_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """suites/bfcl_zero_shot.yaml replayed on its recorded providers (one epoch, greedy): the
    cells they have cassettes for (recorded in chunks; `--providers auto` replays those)."""
    db = tmp_path_factory.mktemp("bfcl-zero-shot") / "harness.duckdb"
    _run(db, [str(ZERO_SHOT)], ("auto",), epochs=1)
    return db


@pytest.mark.timeout(900)  # the fixture replays every recorded zero-shot cell (450 and the mock's)
def test_every_recorded_zero_shot_cell_agrees_with_bfcls_checker(zero_shot_db: Path) -> None:
    recorded = {
        p.relative_to(CASSETTES / "bfcl-zero-shot").parts[0]
        for p in (CASSETTES / "bfcl-zero-shot").glob("*/*/*.e0.yaml")
    }
    cassettes = len(list((CASSETTES / "bfcl-zero-shot").glob("*/*/*.e0.yaml")))
    _, verdicts, disagreements = _agreement(zero_shot_db)
    real = sum(n for key, n in verdicts.items() if not key.startswith("mock "))
    assert cassettes > 0
    assert real == cassettes  # every recorded cell was re-graded
    assert {key.split()[0] for key in verdicts} == {"mock", *recorded}
    assert disagreements == []


# --- the oracle on every entry: all 800 multi-turn entries and every single-turn category -------


@pytest.fixture(scope="module")
def oracle_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every scored entry of every category, played by the mock's ground truth (ReAct, one
    epoch): about 4,300 cells, 3 minutes on two loaded cores."""
    db = tmp_path_factory.mktemp("bfcl-oracle") / "harness.duckdb"
    _run(db, [f"bfcl:{','.join(CATEGORIES)}"], ("mock",), modes=("react",), epochs=1)
    return db


@pytest.mark.timeout(1200)
def test_the_oracle_of_all_800_multi_turn_entries_agrees_with_bfcls_checker(
    oracle_db: Path,
) -> None:
    """Issue 33: BFCL's TwitterAPI keeps the ``mentions`` list of ``post_tweet`` and a later
    ``mention`` extends it; the stored calls (turns and transcript) still show what was sent."""
    rows = [r for r in _cells(oracle_db) if r[2].startswith("multi_turn")]
    assert len(rows) == 800
    assert {r[2].rsplit("_", 1)[0] for r in rows} == set(MULTI_TURN_CATEGORIES)
    assert all(r[4] for r in rows)  # the ground truth passes every one
    compared, verdicts, disagreements = _agreement(oracle_db)
    assert compared > 800
    assert verdicts["mock pass"] >= 800
    assert [d for d in disagreements if "/multi_turn" in d] == []


@pytest.mark.timeout(1200)
def test_the_oracle_of_every_single_turn_category_agrees_with_bfcls_checker(
    oracle_db: Path,
) -> None:
    rows = [r for r in _cells(oracle_db) if not r[2].startswith("multi_turn")]
    categories = {r[2].rsplit("_", 1)[0] for r in rows}
    assert categories == set(CATEGORIES) - set(MULTI_TURN_CATEGORIES)
    failed = {r[2] for r in rows if not r[4]}
    assert failed == set(UNSATISFIABLE)  # the ground truth passes everywhere it can
    compared, verdicts, disagreements = _agreement(oracle_db)
    assert compared == len(rows) + 800
    assert verdicts["mock fail"] == len(UNSATISFIABLE)
    assert disagreements == []


# --- a perturbed ground truth: failures of every kind --------------------------------------------


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 7
    if isinstance(value, str):
        return value + " (not this)"
    if isinstance(value, list):
        return [*value, *value] if value else ["extra"]
    return {"unexpected": 1}


def perturb(script: list[dict[str, Any]], variant: int, tool: str) -> list[dict[str, Any]]:
    """0: the ground truth; 1: the first call's first argument wrong (a call where none applies
    for irrelevance); 2: the last call left out; 3: no call at all, text replies only."""
    script = copy.deepcopy(script)
    calling = [i for i, item in enumerate(script) if item.get("tool_calls")]
    if variant == 1 and not calling:
        return [{"tool_calls": [{"name": tool, "arguments": {}}]}, *script]
    if variant == 1:
        call = script[calling[0]]["tool_calls"][0]
        for key in list(call["arguments"])[:1]:
            call["arguments"][key] = _wrong(call["arguments"][key])
    elif variant == 2 and calling:
        last = script[calling[-1]]["tool_calls"]
        last.pop()
        if not last:
            del script[calling[-1]]
    elif variant == 3:
        script = [item for item in script if not item.get("tool_calls")]
    return script


def perturbed_source(argument: str | None, options: Any) -> Any:
    tasks = [task for path in SUITES for task in load_suite(path).tasks]
    suite = Suite.model_validate({"suite": "bfcl", "tasks": tasks})
    for i, task in enumerate(suite.tasks):
        assert task.mock is not None
        tools = task.tools or []
        turns = perturb(task.mock.turns, i % 4, tools[0] if tools else "none")
        task.mock = task.mock.model_copy(update={"turns": turns})
    return suite


@pytest.fixture(scope="module")
def perturbed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    SOURCES.register("bfcl-agreement-perturbed", perturbed_source, replace=True)
    db = tmp_path_factory.mktemp("bfcl-perturbed") / "harness.duckdb"
    _run(db, ["bfcl-agreement-perturbed:all"], ("mock",))
    return db


def test_perturbed_answers_fail_as_bfcls_checker_says(perturbed_db: Path) -> None:
    compared, verdicts, disagreements = _agreement(perturbed_db)
    assert compared == sum(TASKS.values()) * len(MODES) * EPOCHS
    assert verdicts["mock fail"] >= compared // 2  # failures, not only passes, are compared
    assert verdicts["mock pass"] >= compared // 5
    con = duckdb.connect(str(perturbed_db), read_only=True)
    explained = {
        str(e).split(":")[0].removeprefix("BFCL ")
        for (e,) in con.execute(
            "SELECT grader_explanation FROM results WHERE NOT passed"
        ).fetchall()
    }
    con.close()
    for kind in ("value_error", "ast_decoder", "irrelevance_error", "multi_turn"):
        assert any(e.startswith(kind) for e in explained), (kind, explained)
    assert disagreements == []


def test_grading_the_same_stored_cell_twice_gives_the_same_verdict(perturbed_db: Path) -> None:
    """The checker's per-model globals are purged: a re-grade does not reuse mutated state."""
    cells = [c for c in _cells(perturbed_db) if c[2].startswith("multi_turn")]
    assert cells
    for _, _, task_id, _, passed, _, text in cells[:8]:
        turns = json.loads(text)
        assert regrade(task_id, turns) == regrade(task_id, turns) == passed
    assert not [k for k in vars(MT_UTILS) if k.startswith("agreement_mt_")]
