"""How a BFCL entry is compared with a few-shot example (harness.suites._bfcl_data's
``shot_duplicates``): its question, and its possible answer, as comparable keys. They take the
entry's parts (``BfclEntry.question``, ``BfclEntry.ground_truth``), not the entry."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["answer_key", "question_key"]


def question_key(question: list[list[dict[str, Any]]]) -> str:
    """An entry's question as compared with a shot's: its user and assistant texts, case and
    runs of whitespace ignored (BFCL repeats questions verbatim across entries)."""
    texts = [" ".join(str(m["content"]).split()).lower() for turn in question for m in turn
             if m["role"] != "system"]  # fmt: skip
    return json.dumps(texts, ensure_ascii=False)


def answer_key(ground_truth: Any) -> str | None:
    """An entry's possible answer as compared with a shot's: each call's name and, per
    parameter, the set of accepted values (their order in the data is not meaningful: one entry
    lists ``['Homo sapiens', '']`` where its twin lists ``['', 'Homo sapiens']``)."""
    if ground_truth is None:
        return None
    calls = []
    for item in ground_truth:
        if not isinstance(item, dict):
            return json.dumps(ground_truth, sort_keys=True, ensure_ascii=False)
        for name, params in item.items():
            accepted = {
                p: sorted({json.dumps(v, sort_keys=True, ensure_ascii=False) for v in values})
                if isinstance(values, list)
                else json.dumps(values, sort_keys=True, ensure_ascii=False)
                for p, values in (params.items() if isinstance(params, dict) else ())
            }
            calls.append([name, accepted])
    return json.dumps(sorted(calls, key=json.dumps), sort_keys=True, ensure_ascii=False)
