"""BFCL's data as the harness reads it: entries, tools, ground-truth mock scripts, few-shot shots.

The data ships in ``bfcl-eval`` (``bfcl_eval/data``): one JSON object per line, no trailing
newline. Categories load lazily, once per process (all 15 in well under 2 s). An entry's function
docs get BFCL's language hint as BFCL's loader adds it (" Note that the provided function is in
Python 3 syntax."; not on miss_func's held-out docs); multi-turn entries get the docs of their
classes, minus the held-out functions, which ``missed`` holds by turn.

Tools follow BFCL's ``convert_to_tool`` for OpenAI-style models (:func:`convert_function`); the
harness's tool spec (:func:`tool_spec`) adds the ``response`` schema to the description as BFCL
does for Anthropic-style models, so both wire formats see the same text.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.errors import ConfigError
from harness.grading._bfcl_calls import ParsedCall, parse_call_string
from harness.grading._bfcl_env import data_dir
from harness.suites._bfcl_keys import answer_key, question_key

__all__ = [
    "AST_CATEGORIES",
    "CATEGORIES",
    "IRRELEVANCE_CATEGORIES",
    "MISSED_FUNCTION_PROMPT",
    "MULTI_TURN_CATEGORIES",
    "SHOTS_PER_CATEGORY",
    "UNSATISFIABLE",
    "BfclEntry",
    "FewShot",
    "convert_function",
    "entries",
    "entry",
    "few_shot",
    "ground_truth_calls",
    "load_category",
    "mock_script",
    "scored_entries",
    "shot_duplicates",
    "shot_example",
    "tool_spec",
]

AST_CATEGORIES = (
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_irrelevance", "live_relevance",
)  # fmt: skip
MULTI_TURN_CATEGORIES = (
    "multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param", "multi_turn_long_context",
)  # fmt: skip
CATEGORIES = AST_CATEGORIES + MULTI_TURN_CATEGORIES
#: Pass by making no call (BFCL: valid iff the reply decodes to no call).
IRRELEVANCE_CATEGORIES = ("irrelevance", "live_irrelevance")
#: No answer can pass these (checked with BFCL's checker on its own ground truth).
UNSATISFIABLE = frozenset(
    {"live_simple_106-63-0", "live_simple_112-68-0", "live_multiple_862-181-3",
     "live_multiple_964-207-0"}
)  # fmt: skip
#: What BFCL's runner says on a miss_func turn that adds the held-out functions.
MISSED_FUNCTION_PROMPT = "I have updated some more functions you can choose from. What about now?"
PYTHON_HINT = " Note that the provided function is in Python 3 syntax."
SHOTS_PER_CATEGORY = 3
#: BFCL's ``GORILLA_TO_OPENAPI`` (``bfcl_eval.constants.type_mappings``), the Python subset.
_TYPES = {
    "integer": "integer", "number": "number", "float": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array", "dict": "object",
    "object": "object", "tuple": "array", "any": "string", "byte": "integer", "short": "integer",
    "long": "integer", "double": "number", "char": "string", "ArrayList": "array",
    "Array": "array", "HashMap": "object", "Hashtable": "object", "Queue": "array",
    "Stack": "array", "Any": "string", "String": "string", "Bigint": "integer",
}  # fmt: skip
_FUNC_DOC_FILES = {
    "GorillaFileSystem": "gorilla_file_system.json", "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json", "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json", "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json", "VehicleControlAPI": "vehicle_control.json",
}  # fmt: skip

Kind = Literal["ast", "irrelevance", "relevance", "multi_turn"]


@dataclass(frozen=True, slots=True)
class BfclEntry:
    """One BFCL entry. ``question`` holds one list of messages per user turn (one for single-turn
    entries); ``ground_truth`` is the possible answer (single-turn: ``[{func: {param: [values]}}]``,
    multi-turn: call strings per turn; ``None`` for the (ir)relevance categories)."""

    id: str
    category: str
    question: list[list[dict[str, Any]]]
    functions: list[dict[str, Any]]
    ground_truth: Any
    initial_config: dict[str, Any] = field(default_factory=dict)
    involved_classes: list[str] = field(default_factory=list)
    #: multi-turn miss_func: turn index -> the docs added at that turn (no language hint).
    missed: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def kind(self) -> Kind:
        if self.category in MULTI_TURN_CATEGORIES:
            return "multi_turn"
        if self.category in IRRELEVANCE_CATEGORIES:
            return "irrelevance"
        return "relevance" if self.category == "live_relevance" else "ast"

    @property
    def raw(self) -> dict[str, Any]:
        """The entry as BFCL's checkers read it: id, initial_config, involved_classes."""
        return {
            "id": self.id,
            "initial_config": self.initial_config,
            "involved_classes": self.involved_classes,
        }

    def all_functions(self) -> list[dict[str, Any]]:
        """The entry's docs, the held-out ones included (every function it may call)."""
        return self.functions + [doc for turn in sorted(self.missed) for doc in self.missed[turn]]


@dataclass(frozen=True, slots=True)
class FewShot:
    """A worked example in the kernel's example form (``messages``), with the tools it calls."""

    entry_id: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]


def _lines(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@functools.cache
def _func_docs(cls: str) -> tuple[dict[str, Any], ...]:
    return tuple(_lines(data_dir() / "multi_turn_func_doc" / _FUNC_DOC_FILES[cls]))


def _with_hint(doc: dict[str, Any]) -> dict[str, Any]:
    # A shallow copy: entries share nested parts with the cached docs, so nothing may mutate
    # them (convert_function works on a deep copy).
    return {**doc, "description": doc["description"] + PYTHON_HINT}


def _make_entry(category: str, row: dict[str, Any], answer: Any) -> BfclEntry:
    if category not in MULTI_TURN_CATEGORIES:
        functions = [_with_hint(doc) for doc in row["function"]]
        return BfclEntry(row["id"], category, row["question"][:1], functions, answer)
    docs = [d for cls in row["involved_classes"] for d in _func_docs(cls)]
    missed: dict[int, list[dict[str, Any]]] = {}
    for turn, names in row.get("missed_function", {}).items():
        held = []
        for name in names:  # in the data's order, the first doc of that name (as BFCL)
            index = next((i for i, d in enumerate(docs) if d["name"] == name), None)
            if index is not None:
                held.append(docs.pop(index))
        missed[int(turn)] = held
    return BfclEntry(
        row["id"],
        category,
        row["question"],
        [_with_hint(doc) for doc in docs],
        answer,
        row["initial_config"],
        list(row["involved_classes"]),
        missed,
    )


@functools.cache
def _load(category: str) -> tuple[BfclEntry, ...]:
    if category not in CATEGORIES:
        raise ConfigError(
            f"unknown BFCL category {category!r}; the categories are: {', '.join(CATEGORIES)}"
        )
    root = data_dir()
    rows = _lines(root / f"BFCL_v4_{category}.json")
    answer_path = root / "possible_answer" / f"BFCL_v4_{category}.json"
    answers = (
        {a["id"]: a["ground_truth"] for a in _lines(answer_path)} if answer_path.is_file() else {}
    )
    return tuple(_make_entry(category, row, answers.get(row["id"])) for row in rows)


def load_category(category: str) -> list[BfclEntry]:
    """Every entry of ``category``, in BFCL's order (loaded once per process)."""
    return list(_load(category))


def entries(categories: Sequence[str] = CATEGORIES) -> list[BfclEntry]:
    return [e for c in categories for e in _load(c)]


def category_of(entry_id: str) -> str:
    """``simple_python_12`` -> ``simple_python``; ``live_simple_106-63-0`` -> ``live_simple``."""
    return entry_id.rsplit("_", 1)[0]


def entry(entry_id: str) -> BfclEntry:
    category = category_of(entry_id)
    for e in _load(category):
        if e.id == entry_id:
            return e
    raise ConfigError(f"no BFCL entry {entry_id!r} in category {category!r}")


# ---- tools ---------------------------------------------------------------------------------


def _cast(properties: dict[str, Any]) -> dict[str, Any]:
    """BFCL's ``_cast_to_openai_type`` with ``GORILLA_TO_OPENAPI``, on a copy's properties."""
    for value in properties.values():
        if "type" not in value:
            value["type"] = "string"
        else:
            var_type = value["type"]
            if var_type == "float":
                value["format"] = "float"
                value["description"] = value.get("description", "") + " This is a float type value."
            value["type"] = _TYPES.get(var_type, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast(value["properties"])
            elif "items" in value:
                items = value["items"]
                items["type"] = _TYPES[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = _TYPES[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast(items["properties"])
    return properties


def convert_function(doc: Mapping[str, Any]) -> dict[str, Any]:
    """One BFCL doc as BFCL's ``convert_to_tool`` makes it for OpenAI chat completions (the
    ``function`` object): dots in the name become ``_``, ``dict`` -> object, ``float`` -> number
    with ``format: float`` and a note, ``tuple`` -> array, ``any``/unknown -> string."""
    item = copy.deepcopy(dict(doc))
    item["name"] = re.sub(r"\.", "_", item["name"])
    item["parameters"]["type"] = "object"
    item["parameters"]["properties"] = _cast(item["parameters"]["properties"])
    return item


def tool_spec(doc: Mapping[str, Any]) -> dict[str, Any]:
    """``{name, description, parameters}`` for a harness tool; a ``response`` schema is appended
    to the description as BFCL does for Anthropic-style models."""
    item = convert_function(doc)
    description = item["description"]
    if "response" in item:
        description += (
            f" The response field has the following schema: {json.dumps(item['response'])}"
        )
    return {"name": item["name"], "description": description, "parameters": item["parameters"]}


def tool_names(docs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Renamed tool name -> BFCL's name (``math_factorial`` -> ``math.factorial``)."""
    return {re.sub(r"\.", "_", d["name"]): d["name"] for d in docs}


# ---- ground truth, mock scripts, few-shot ---------------------------------------------------


def _first_of_dict(answer: Mapping[str, Any]) -> dict[str, Any]:
    """A dict parameter's answer ``{key: [values]}``: each key's first value ("" = omitted)."""
    return {k: v[0] for k, v in answer.items() if isinstance(v, list) and v and v[0] != ""}


def _first(values: list[Any], schema: Mapping[str, Any]) -> Any:
    """The first accepted value of a possible-answer parameter, read the way BFCL's checker reads
    it for the parameter's type (dict and list-of-dict answers hold value lists per key)."""
    value = values[0]
    kind = schema.get("type")
    if kind == "dict" and isinstance(value, dict):
        return _first_of_dict(value)
    items = schema.get("items")
    if kind in ("array", "tuple") and isinstance(items, dict) and items.get("type") == "dict":
        return [_first_of_dict(v) if isinstance(v, dict) else v for v in value]
    return value


def _placeholder(schema: Mapping[str, Any]) -> Any:
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    return {"integer": 0, "number": 0.0, "boolean": False, "array": [], "object": {}}.get(
        str(schema.get("type")), "x"
    )


def ground_truth_calls(e: BfclEntry) -> list[list[list[ParsedCall]]]:
    """The ground truth as calls (renamed tool name, arguments): per turn, per step. Single-turn
    entries have one turn of one step; multi-turn turns have one call per step (packed into at
    most 20 steps when a turn has more calls). Irrelevance: no call; live_relevance: a call to
    the first function with placeholder values for its required parameters."""
    if e.kind == "irrelevance":
        return [[]]
    if e.kind == "relevance":
        doc = tool_spec(e.functions[0])
        props = doc["parameters"].get("properties", {})
        required = doc["parameters"].get("required", [])
        args = {p: _placeholder(props.get(p, {})) for p in required}
        return [[[ParsedCall(doc["name"], args)]]]
    if e.kind == "ast":
        calls = []
        docs = {d["name"]: d for d in e.functions}
        for item in e.ground_truth:
            ((name, params),) = item.items()
            schema = docs.get(name, {}).get("parameters", {})
            props, required = schema.get("properties", {}), schema.get("required", [])
            args = {}
            for p, values in params.items():
                given = [v for v in values if v != ""]
                # "" accepts omission: omit what the doc does not require (or lacks)
                if given and ("" not in values or p in required):
                    args[p] = _first(given, props.get(p, {}))
                elif values and p in required:
                    args[p] = ""  # required, and only "" accepted: BFCL's checker takes ""
            calls.append(ParsedCall(re.sub(r"\.", "_", name), args))
        return [[calls]]
    turns: list[list[list[ParsedCall]]] = []
    all_docs = e.all_functions()
    for turn in e.ground_truth:
        calls = [parse_call_string(s, all_docs) for s in turn]
        size = max(1, math.ceil(len(calls) / 20))
        turns.append([calls[i : i + size] for i in range(0, len(calls), size)])
    return turns


def mock_script(e: BfclEntry) -> list[dict[str, Any]]:
    """The harness mock provider's turns for a perfect model: each step's calls, then a text reply
    that ends the user turn."""
    script: list[dict[str, Any]] = []
    for turn in ground_truth_calls(e):
        for step in turn:
            script.append(
                {"tool_calls": [{"name": c.name, "arguments": c.arguments} for c in step]}
            )
        script.append({"text": "Done." if turn else "None of the available functions applies."})
    return script


def few_shot(category: str, n: int = SHOTS_PER_CATEGORY) -> list[FewShot]:
    """Worked examples for ``category``: its last ``n`` entries with their ground-truth calls
    (excluded from scoring, see :func:`scored_entries`). Only the AST categories with a possible
    answer have shots; the irrelevance, relevance and multi-turn categories have none."""
    if category not in AST_CATEGORIES or category in IRRELEVANCE_CATEGORIES:
        return []
    if category == "live_relevance":
        return []
    shots = []
    for e in _load(category)[-n:]:
        (turn,) = ground_truth_calls(e)
        messages: list[dict[str, Any]] = [
            {"role": m["role"], "content": m["content"]}
            for m in e.question[0]
            if m["role"] != "system"
        ]
        calls = [c for step in turn for c in step]
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in calls],
            }
        )
        messages.extend({"role": "tool", "content": "Done."} for _ in calls)
        messages.append({"role": "assistant", "content": "Done."})
        shots.append(FewShot(e.id, messages, [tool_spec(d) for d in e.functions]))
    return shots


def shot_example(shot: FewShot) -> dict[str, Any]:
    """A shot as a profile example (``{messages, tools: []}``, sent whatever tools a request
    offers): its functions are described in its user message, since the request's tools are
    another entry's."""
    lines = [
        f"- {t['name']}: {t['description']} Parameters: {json.dumps(t['parameters'])}"
        for t in shot.tools
    ]
    messages = [dict(m) for m in shot.messages]
    messages[0]["content"] = (
        "Functions for this example:\n" + "\n".join(lines) + "\n\n" + messages[0]["content"]
    )
    return {"messages": messages, "tools": []}


@functools.cache
def shot_duplicates(category: str) -> dict[str, str]:
    """Entries of ``category`` that repeat one of its shots: entry id -> what they repeat
    (``"multiple_198 (question and answer)"``; several shots joined with ``"; "``). They are
    left out of scoring, so that no scored entry is answered by a worked example
    (``multiple_111`` is ``multiple_198`` again, ``live_parallel_7-3-1`` is
    ``live_parallel_14-10-0``). The shots themselves are unchanged: they are in every request of
    the category, so choosing others would change them all."""
    shots = [entry(s.entry_id) for s in few_shot(category)]
    if not shots:
        return {}
    shot_ids = {s.id for s in shots}
    keys: tuple[tuple[str, Callable[[BfclEntry], str | None]], ...] = (
        ("question", lambda x: question_key(x.question)),
        ("answer", lambda x: answer_key(x.ground_truth)),
    )
    out: dict[str, str] = {}
    for e in _load(category):
        if e.id in shot_ids:
            continue
        found = []
        for shot in shots:
            same = [what for what, key in keys if key(e) is not None and key(e) == key(shot)]
            if same:
                found.append(f"{shot.id} ({' and '.join(same)})")
        if found:
            out[e.id] = "; ".join(found)
    return out


def scored_entries(category: str) -> list[BfclEntry]:
    """The entries scored for ``category``: all but the few-shot ones and those that repeat a
    shot's question or answer (:func:`shot_duplicates`)."""
    left_out = {s.entry_id for s in few_shot(category)} | set(shot_duplicates(category))
    return [e for e in _load(category) if e.id not in left_out]
