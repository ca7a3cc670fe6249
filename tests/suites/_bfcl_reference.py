"""Print BFCL's own tools for every entry of the 15 categories, as JSON (run as a subprocess).

BFCL's loader (``bfcl_eval.utils.load_dataset_entry``: language hints, miss_func hold-outs) and
``convert_to_tool`` (OpenAI chat completions) import modules that ``--no-deps`` leaves out
(filelock, tree_sitter parsers); those get empty stubs here, in this child process only.
"""

from __future__ import annotations

import json
import sys
from unittest import mock

for missing in ("filelock", "tree_sitter", "tree_sitter_java", "tree_sitter_javascript"):
    try:
        __import__(missing)
    except ImportError:
        sys.modules[missing] = mock.MagicMock(name=missing)

from harness.grading._bfcl_env import bfcl_module  # noqa: E402  (installs the model_config stub)

bfcl_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
utils = bfcl_module("bfcl_eval.utils")
handler_utils = bfcl_module("bfcl_eval.model_handler.utils")
enums = bfcl_module("bfcl_eval.constants.enums")
mapping = bfcl_module("bfcl_eval.constants.type_mappings").GORILLA_TO_OPENAPI
style = enums.ModelStyle.OPENAI_COMPLETIONS

out = {}
for category in sys.argv[1:]:
    for entry in utils.load_dataset_entry(category):
        tools = handler_utils.convert_to_tool(entry["function"], mapping, style)
        missed = {
            turn: [t["function"] for t in handler_utils.convert_to_tool(docs, mapping, style)]
            for turn, docs in entry.get("missed_function", {}).items()
        }
        out[entry["id"]] = {"tools": [t["function"] for t in tools], "missed": missed}
json.dump(out, sys.stdout)
