"""The builtin tools, run against real temporary workspaces."""

from __future__ import annotations

import ast
import builtins
import math
import os
from pathlib import Path
from typing import Any

import pytest

from harness.core import UIPayload
from harness.errors import ConfigError, ToolError
from harness.tools._base import Submit, Tool, ToolContext, ToolOutput, tool
from harness.tools._builtins import (
    CalculatorTool,
    EditFileTool,
    FinishTool,
    GlobTool,
    GrepTool,
    KVGetTool,
    KVSetTool,
    ListDirTool,
    ReadFileTool,
    WriteFileTool,
)
from harness.tools._calculator import calculate
from harness.tools._file_tools import MAX_FILE_BYTES, MAX_MATCHES, MAX_READ_CHARS
from harness.tools._registry import BUILTIN_TOOLS, OPT_IN_TOOLS, builtin_names, resolve_tools
from harness.tools._workspace import Workspace

SECRET = "TOPSECRET-CONTENT"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text(SECRET + "\n")
    (out / "deep").mkdir()
    (out / "deep" / "more.txt").write_text(SECRET + "\n")
    return out


@pytest.fixture
def root(tmp_path: Path, outside: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hello.txt").write_text("hello world\nsecond line\n")
    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_text("def main():\n    return 42\n")
    (ws / "src" / "util.py").write_text("# util\nVALUE = 1\n")
    (ws / "src" / "pkg").mkdir()
    (ws / "src" / "pkg" / "deep.py").write_text("x = 'needle'\n")
    (ws / "link_out_dir").symlink_to(outside, target_is_directory=True)
    (ws / "link_out_file").symlink_to(outside / "secret.txt")
    (ws / "link_in_dir").symlink_to(ws / "src", target_is_directory=True)
    return ws


@pytest.fixture
def ctx(root: Path) -> ToolContext:
    return ToolContext(Workspace(root), "session-1")


async def call(tool: Tool, ctx: ToolContext, **args: Any) -> Any:
    return await tool.run(args, ctx)


async def text(tool: Tool, ctx: ToolContext, **args: Any) -> str:
    out = await call(tool, ctx, **args)
    content = out.content if isinstance(out, ToolOutput) else out
    assert isinstance(content, str)
    return content


def snapshot(path: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# --- schemas --------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", list(BUILTIN_TOOLS.values()))
def test_every_builtin_has_a_strict_object_schema(cls: type[Any]) -> None:
    tool = cls()
    assert isinstance(tool, Tool)
    schema = tool.parameters
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) <= set(schema["properties"])
    assert tool.description
    assert tool.read_only <= tool.parallel_safe  # every read-only builtin may run in parallel


def test_flags_match_the_contract() -> None:
    flags = {n: (c.parallel_safe, c.read_only) for n, c in BUILTIN_TOOLS.items()}
    assert flags == {
        "read_file": (True, True),
        "write_file": (False, False),
        "edit_file": (False, False),
        "list_dir": (True, True),
        "glob": (True, True),
        "grep": (True, True),
        "calculator": (True, True),
        "kv_get": (True, True),
        "kv_set": (False, False),
        "finish": (False, False),
        "shell": (False, False),
        "spawn_agent": (True, False),
        "todo_write": (False, False),
    }


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        (ReadFileTool(), {}, "missing required argument 'path'"),
        (ReadFileTool(), {"path": None}, "missing required argument 'path'"),
        (ReadFileTool(), {"path": 3}, "'path' must be a string, got int"),
        (ReadFileTool(), {"path": "a", "mode": "r"}, "unexpected argument 'mode'"),
        (WriteFileTool(), {"path": "a"}, "missing required argument 'content'"),
        (WriteFileTool(), {"path": "a", "content": ["x"]}, "'content' must be a string"),
        (EditFileTool(), {"path": "hello.txt", "old": "x"}, "missing required argument 'new'"),
        (GlobTool(), {}, "missing required argument 'pattern'"),
        (GrepTool(), {"pattern": "x", "path": 1}, "'path' must be a string"),
        (CalculatorTool(), {"expression": 1}, "'expression' must be a string"),
        (KVGetTool(), {}, "missing required argument 'key'"),
        (KVSetTool(), {"key": "k"}, "missing required argument 'value'"),
        (FinishTool(), {"summary": 5}, "'summary' must be a string"),
    ],
)
async def test_bad_arguments_are_tool_errors(
    ctx: ToolContext, tool: Tool, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        await tool.run(args, ctx)


async def test_non_dict_arguments_are_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="arguments must be an object"):
        await ReadFileTool().run(["hello.txt"], ctx)  # type: ignore[arg-type]


# --- read_file ------------------------------------------------------------------------------


async def test_read_file(ctx: ToolContext) -> None:
    out = await call(ReadFileTool(), ctx, path="hello.txt")
    assert out == ToolOutput("hello world\nsecond line\n", UIPayload("file", {"path": "hello.txt"}))
    nested = await call(ReadFileTool(), ctx, path="./src/../src/pkg/deep.py")
    assert nested.content == "x = 'needle'\n"
    assert nested.ui.payload == {"path": "src/pkg/deep.py"}


async def test_read_file_truncates_long_content(ctx: ToolContext, root: Path) -> None:
    (root / "long.txt").write_text("a" * MAX_READ_CHARS + "b" * 4321)
    content = await text(ReadFileTool(), ctx, path="long.txt")
    assert content.startswith("a" * MAX_READ_CHARS + "\n[")
    assert "b" not in content
    assert "truncated: 4321 of 20321 chars cut" in content


async def test_read_file_exactly_at_the_cap_is_not_truncated(ctx: ToolContext, root: Path) -> None:
    (root / "exact.txt").write_text("z" * MAX_READ_CHARS)
    assert await text(ReadFileTool(), ctx, path="exact.txt") == "z" * MAX_READ_CHARS


async def test_read_file_refuses_big_files(ctx: ToolContext, root: Path) -> None:
    (root / "big.txt").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    with pytest.raises(ToolError, match=r"big\.txt is too large \(2097153 bytes"):
        await call(ReadFileTool(), ctx, path="big.txt")


@pytest.mark.parametrize(
    ("setup", "path", "message"),
    [
        (None, "nope.txt", "file not found: nope.txt"),
        (None, "src", "src is a directory; use list_dir"),
        ("binary", "bin.dat", "bin.dat looks like a binary file"),
        ("fifo", "pipe", "pipe is not a regular file"),
    ],
)
async def test_read_file_errors(
    ctx: ToolContext, root: Path, setup: str | None, path: str, message: str
) -> None:
    if setup == "binary":
        (root / "bin.dat").write_bytes(b"\x89PNG\x00\x01\x02")
    elif setup == "fifo":
        os.mkfifo(root / "pipe")  # opening it would block forever
    with pytest.raises(ToolError, match=message):
        await call(ReadFileTool(), ctx, path=path)


async def test_read_file_replaces_invalid_utf8(ctx: ToolContext, root: Path) -> None:
    (root / "latin.txt").write_bytes(b"caf\xe9\n")
    assert await text(ReadFileTool(), ctx, path="latin.txt") == "caf\ufffd\n"


# --- write_file -----------------------------------------------------------------------------


async def test_write_file_creates_parents(ctx: ToolContext, root: Path) -> None:
    out = await call(WriteFileTool(), ctx, path="new/deeper/f.txt", content="héllo\n")
    assert out.content == "wrote 7 bytes to new/deeper/f.txt"
    assert (root / "new" / "deeper" / "f.txt").read_bytes() == "héllo\n".encode()
    assert out.ui.kind == "diff"
    assert out.ui.payload["path"] == "new/deeper/f.txt"
    assert out.ui.payload["created"] is True
    assert "+héllo" in out.ui.payload["diff"]


async def test_write_file_overwrites_with_a_diff(ctx: ToolContext, root: Path) -> None:
    out = await call(WriteFileTool(), ctx, path="hello.txt", content="hello world\nchanged\n")
    assert (root / "hello.txt").read_text() == "hello world\nchanged\n"
    assert out.ui.payload["created"] is False
    diff = out.ui.payload["diff"]
    assert "-second line" in diff
    assert "+changed" in diff
    assert " hello world" in diff


async def test_write_file_keeps_line_endings(ctx: ToolContext, root: Path) -> None:
    await call(WriteFileTool(), ctx, path="crlf.txt", content="a\r\nb\r\n")
    assert (root / "crlf.txt").read_bytes() == b"a\r\nb\r\n"


async def test_write_file_empty_content(ctx: ToolContext, root: Path) -> None:
    assert await text(WriteFileTool(), ctx, path="empty.txt", content="") == (
        "wrote 0 bytes to empty.txt"
    )
    assert (root / "empty.txt").read_bytes() == b""


async def test_write_file_refuses_directories(ctx: ToolContext, root: Path) -> None:
    with pytest.raises(ToolError, match="src is a directory"):
        await call(WriteFileTool(), ctx, path="src", content="x")
    with pytest.raises(ToolError, match="cannot write"):
        await call(WriteFileTool(), ctx, path="hello.txt/child.txt", content="x")
    assert (root / "src" / "main.py").exists()
    assert (root / "hello.txt").read_text() == "hello world\nsecond line\n"


# --- edit_file ------------------------------------------------------------------------------


async def test_edit_file_replaces_once(ctx: ToolContext, root: Path) -> None:
    out = await call(EditFileTool(), ctx, path="src/main.py", old="return 42", new="return 43")
    assert out.content == "replaced 1 occurrence in src/main.py"
    assert (root / "src" / "main.py").read_text() == "def main():\n    return 43\n"
    assert out.ui.kind == "diff"
    assert "-    return 42" in out.ui.payload["diff"]
    assert "+    return 43" in out.ui.payload["diff"]


async def test_edit_file_ambiguous_without_replace_all(ctx: ToolContext, root: Path) -> None:
    (root / "rep.txt").write_text("x x x")
    with pytest.raises(
        ToolError, match=r"occurs 3 times in rep\.txt; pass replace_all=true or give more context"
    ):
        await call(EditFileTool(), ctx, path="rep.txt", old="x", new="y")
    assert (root / "rep.txt").read_text() == "x x x"
    with pytest.raises(ToolError, match="occurs 3 times"):
        await call(EditFileTool(), ctx, path="rep.txt", old="x", new="y", replace_all=False)
    out = await call(EditFileTool(), ctx, path="rep.txt", old="x", new="yy", replace_all=True)
    assert out.content == "replaced 3 occurrences in rep.txt"
    assert (root / "rep.txt").read_text() == "yy yy yy"


async def test_edit_file_can_delete_and_keeps_crlf(ctx: ToolContext, root: Path) -> None:
    (root / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await call(EditFileTool(), ctx, path="win.txt", old="two\r\n", new="")
    assert (root / "win.txt").read_bytes() == b"one\r\nthree\r\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "hello.txt", "old": "absent", "new": "x"}, "'old' string not found in hello.txt"),
        ({"path": "hello.txt", "old": "", "new": "x"}, "'old' must not be empty"),
        ({"path": "hello.txt", "old": "hello", "new": "hello"}, "identical"),
        ({"path": "nope.txt", "old": "a", "new": "b"}, "file not found: nope.txt"),
        ({"path": "src", "old": "a", "new": "b"}, "is a directory"),
        (
            {"path": "hello.txt", "old": "hello", "new": "bye", "replace_all": "yes"},
            "'replace_all' must be a boolean",
        ),
    ],
)
async def test_edit_file_errors_leave_the_file_alone(
    ctx: ToolContext, root: Path, args: dict[str, Any], message: str
) -> None:
    before = snapshot(root)
    with pytest.raises(ToolError, match=message):
        await EditFileTool().run(args, ctx)
    assert snapshot(root) == before


async def test_edit_file_refuses_non_utf8(ctx: ToolContext, root: Path) -> None:
    (root / "latin.txt").write_bytes(b"caf\xe9")
    with pytest.raises(ToolError, match="not valid UTF-8"):
        await call(EditFileTool(), ctx, path="latin.txt", old="caf", new="tea")
    assert (root / "latin.txt").read_bytes() == b"caf\xe9"


# --- list_dir -------------------------------------------------------------------------------


async def test_list_dir_root_and_subdir(ctx: ToolContext, root: Path) -> None:
    assert await text(ListDirTool(), ctx) == "\n".join(
        ["hello.txt", "link_in_dir/", "link_out_dir", "link_out_file", "src/"]
    )
    assert await text(ListDirTool(), ctx, path="src") == "main.py\npkg/\nutil.py"
    assert await text(ListDirTool(), ctx, path="link_in_dir/pkg") == "deep.py"
    (root / "empty").mkdir()
    assert await text(ListDirTool(), ctx, path="empty") == "(empty directory: empty)"


async def test_list_dir_errors(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"hello\.txt is not a directory"):
        await call(ListDirTool(), ctx, path="hello.txt")
    with pytest.raises(ToolError, match="not found: missing"):
        await call(ListDirTool(), ctx, path="missing")


# --- glob -----------------------------------------------------------------------------------


async def test_glob(ctx: ToolContext) -> None:
    # "**" never descends into symlinked directories (like pathlib), so no link_in_dir/ copies
    assert await text(GlobTool(), ctx, pattern="**/*.py") == (
        "src/main.py\nsrc/pkg/deep.py\nsrc/util.py"
    )
    assert await text(GlobTool(), ctx, pattern="src/*") == "src/main.py\nsrc/pkg/\nsrc/util.py"
    assert await text(GlobTool(), ctx, pattern="*.txt") == "hello.txt"
    assert await text(GlobTool(), ctx, pattern="./src/m?in.py") == "src/main.py"
    assert await text(GlobTool(), ctx, pattern="src/[mu]*.py") == "src/main.py\nsrc/util.py"
    assert await text(GlobTool(), ctx, pattern="*.rs") == "no paths match '*.rs'"


async def test_glob_through_an_inside_symlink(ctx: ToolContext) -> None:
    # an explicit component may go through a symlink that stays inside the workspace
    out = await text(GlobTool(), ctx, pattern="link_in_dir/**/*.py")
    assert out == "link_in_dir/main.py\nlink_in_dir/pkg/deep.py\nlink_in_dir/util.py"
    # links that resolve outside are left out altogether
    assert await text(GlobTool(), ctx, pattern="link_*") == "link_in_dir/"


async def test_glob_caps_results(ctx: ToolContext, root: Path) -> None:
    (root / "many").mkdir()
    for i in range(MAX_MATCHES + 50):
        (root / "many" / f"f{i:04d}.txt").write_text("")
    lines = (await text(GlobTool(), ctx, pattern="many/*.txt")).split("\n")
    assert len(lines) == MAX_MATCHES + 1
    assert lines[0] == "many/f0000.txt"
    assert lines[MAX_MATCHES - 1] == f"many/f{MAX_MATCHES - 1:04d}.txt"
    assert lines[-1] == f"[capped at {MAX_MATCHES} results; 50 more not shown]"


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("/etc/*", "must be relative"),
        ("../*", "'..' components"),
        ("src/../../outside/*", "'..' components"),
        ("**/..", "'..' components"),
        ("", "non-empty"),
        ("a**b/*", "'\\*\\*' must be a whole component"),
    ],
)
async def test_glob_refusals(ctx: ToolContext, pattern: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        await call(GlobTool(), ctx, pattern=pattern)


# --- grep -----------------------------------------------------------------------------------


async def test_grep(ctx: ToolContext) -> None:
    assert await text(GrepTool(), ctx, pattern=r"return \d+") == "src/main.py:2:    return 42"
    assert await text(GrepTool(), ctx, pattern="needle|VALUE", path="src") == (
        "src/pkg/deep.py:1:x = 'needle'\nsrc/util.py:2:VALUE = 1"
    )
    assert await text(GrepTool(), ctx, pattern="^second", path="hello.txt") == (
        "hello.txt:2:second line"
    )
    assert await text(GrepTool(), ctx, pattern="zzz", path="src") == (
        "no matches for 'zzz' in src (searched 3 files)"
    )


async def test_grep_skips_binary_git_and_big_files(ctx: ToolContext, root: Path) -> None:
    (root / "bin.dat").write_bytes(b"needle\x00\x01")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("needle\n")
    (root / "big.txt").write_bytes(b"needle\n" * (MAX_FILE_BYTES // 7 + 1))
    assert await text(GrepTool(), ctx, pattern="needle") == "src/pkg/deep.py:1:x = 'needle'"


async def test_grep_handles_crlf_and_long_lines(ctx: ToolContext, root: Path) -> None:
    (root / "w.txt").write_bytes(b"a\r\nfind me\r\n" + b"q" * 1000 + b" find\n")
    out = (await text(GrepTool(), ctx, pattern="find", path="w.txt")).split("\n")
    assert out[0] == "w.txt:2:find me"
    assert out[1] == "w.txt:3:" + "q" * 300 + "…"


async def test_grep_caps_matches(ctx: ToolContext, root: Path) -> None:
    (root / "many.txt").write_text("hit\n" * (MAX_MATCHES + 10))
    lines = (await text(GrepTool(), ctx, pattern="hit", path="many.txt")).split("\n")
    assert len(lines) == MAX_MATCHES + 1
    assert lines[MAX_MATCHES - 1] == f"many.txt:{MAX_MATCHES}:hit"
    assert lines[-1].startswith(f"[stopped after {MAX_MATCHES} matches")


async def test_grep_returns_its_matches_as_a_ui_payload(ctx: ToolContext, root: Path) -> None:
    (root / "notes").mkdir()
    (root / "notes" / "a.txt").write_text("todo: x\nok\ntodo: y: z\n")
    out = await GrepTool().run({"pattern": "todo", "path": "notes"}, ctx)
    assert isinstance(out, ToolOutput)
    assert out.ui is not None
    assert out.ui.kind == "matches"
    assert out.ui.payload == {
        "pattern": "todo",
        "path": "notes",
        "searched": 1,
        "truncated": False,
        "matches": [
            {"path": "notes/a.txt", "line": 1, "text": "todo: x"},
            {"path": "notes/a.txt", "line": 3, "text": "todo: y: z"},
        ],
    }
    none = await GrepTool().run({"pattern": "absent"}, ctx)
    assert none.ui.payload["matches"] == []
    assert none.content.startswith("no matches for 'absent'")
    (root / "many.txt").write_text("hit\n" * (MAX_MATCHES + 10))
    capped = await GrepTool().run({"pattern": "hit", "path": "many.txt"}, ctx)
    assert capped.ui.payload["truncated"] is True
    assert len(capped.ui.payload["matches"]) == MAX_MATCHES


async def test_grep_errors(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"invalid regex '\(unclosed': missing \)"):
        await call(GrepTool(), ctx, pattern="(unclosed")
    with pytest.raises(ToolError, match="not found: nowhere"):
        await call(GrepTool(), ctx, pattern="x", path="nowhere")


# --- calculator -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("2 + 3 * 4", "14"),
        ("(2 + 3) * 4", "20"),
        ("2 ** 3 ** 2", "512"),
        ("-2 ** 2", "-4"),
        ("(-2) ** 2", "4"),
        ("10 - 4 - 3", "3"),
        ("7 // 2", "3"),
        ("-7 // 2", "-4"),
        ("7 % 3", "1"),
        ("7 / 2", "3.5"),
        ("1 / 3", repr(1 / 3)),
        ("6 / 3", "2.0"),
        ("+5 - -5", "10"),
        ("2 ** -1", "0.5"),
        ("1.5e3 + 0.25", "1500.25"),
        ("sqrt(16)", "4.0"),
        ("abs(-3)", "3"),
        ("round(2.567, 2)", "2.57"),
        ("round(2.5)", "2"),
        ("min(3, 1, 2) + max(4, 9)", "10"),
        ("floor(2.7) + ceil(2.1)", "5"),
        ("log(e)", "1.0"),
        ("log(8, 2)", "3.0"),
        ("exp(0)", "1.0"),
        ("pi", repr(math.pi)),
        ("2 * pi", repr(2 * math.pi)),
        ("2 ** 100", str(2**100)),
        ("  1+1  ", "2"),
    ],
)
async def test_calculator(ctx: ToolContext, expression: str, expected: str) -> None:
    assert await text(CalculatorTool(), ctx, expression=expression) == expected


def test_calculator_deep_but_short_expressions() -> None:
    assert calculate("(" * 150 + "1" + ")" * 150) == "1"
    assert calculate("-" * 497 + "1") == "-1"


def test_calculator_big_but_allowed_power() -> None:
    assert calculate("2 ** 10000") == str(2**10000)
    assert calculate("1 ** 1000000") == "1"


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1 / 0", "division by zero"),
        ("1 // 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("2 ** 100000", "exponent too large"),
        ("9 ** 9 ** 9", "exponent too large"),
        ("(2 ** 10000) ** 10000", "result too large"),
        ("10 ** 5000", "too large to print"),
        ("10.0 ** 400", "result too large"),
        ("exp(1000)", "result too large"),
        ("sqrt(-1)", "math error"),
        ("log(0)", "math error"),
        ("(-8) ** 0.5", "not a real number"),
        ("__import__('os')", "unsupported function '__import__'"),
        ("__import__('os').system('true')", "unsupported"),
        ("().__class__", "unsupported syntax: Attribute"),
        ("open('x')", "unsupported function 'open'"),
        ("'a' * 3", "only numbers are allowed"),
        ("True + 1", "only numbers are allowed"),
        ("x + 1", "unknown name 'x'"),
        ("lambda: 1", "unsupported syntax: Lambda"),
        ("[1, 2]", "unsupported syntax: List"),
        ("1 < 2", "unsupported syntax: Compare"),
        ("1j", "only numbers are allowed"),
        ("min(1)", "min\\(\\) takes 2 to 50 arguments, got 1"),
        ("sqrt(x=4)", "unsupported function 'sqrt'"),
        ("round(5, -1000000000)", "n must be an integer from -100 to 100"),
        ("1 +", "invalid expression"),
        ("", "expression is empty"),
        ("1" + "+1" * 250, "expression too long"),
        ("(" * 201 + "1" + ")" * 201, "invalid expression: too many nested parentheses"),
    ],
)
async def test_calculator_errors(ctx: ToolContext, expression: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        await call(CalculatorTool(), ctx, expression=expression)


def test_calculator_never_uses_eval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    real_compile = builtins.compile

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("eval/exec must not be used")

    def ast_only_compile(source: Any, filename: Any, mode: str, flags: int = 0, **kw: Any) -> Any:
        # ast.parse compiles to an AST only; compiling to code would be a step towards eval
        assert flags & ast.PyCF_ONLY_AST, "compile() to bytecode must not be used"
        return real_compile(source, filename, mode, flags, **kw)

    monkeypatch.setattr(builtins, "eval", forbidden)
    monkeypatch.setattr(builtins, "exec", forbidden)
    monkeypatch.setattr(builtins, "compile", ast_only_compile)
    assert calculate("(1 + 2) * sqrt(9)") == "9.0"
    with pytest.raises(ToolError):
        calculate("__import__('os').system('touch pwned')")
    assert os.listdir(tmp_path) == []


# --- kv and finish --------------------------------------------------------------------------


async def test_kv_roundtrip(ctx: ToolContext) -> None:
    assert await text(KVSetTool(), ctx, key="plan", value="step 1") == "stored 'plan'"
    assert await text(KVSetTool(), ctx, key="data", value={"a": [1, 2]}) == "stored 'data'"
    await call(KVSetTool(), ctx, key="nothing", value=None)
    assert ctx.kv == {"plan": "step 1", "data": {"a": [1, 2]}, "nothing": None}
    assert await call(KVGetTool(), ctx, key="plan") == "step 1"
    assert await call(KVGetTool(), ctx, key="data") == '{"a": [1, 2]}'
    assert await call(KVGetTool(), ctx, key="nothing") == "null"
    await call(KVSetTool(), ctx, key="plan", value="step 2")
    assert await call(KVGetTool(), ctx, key="plan") == "step 2"


async def test_kv_get_missing_lists_known_keys(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"no value under key 'x'; known keys: \(none\)"):
        await call(KVGetTool(), ctx, key="x")
    for i in range(25):
        ctx.kv[f"k{i:02d}"] = i
    with pytest.raises(ToolError) as info:
        await call(KVGetTool(), ctx, key="x")
    message = str(info.value)
    assert "'k00', 'k01'" in message
    assert "'k19' ..." in message
    assert "'k20'" not in message


async def test_kv_set_refuses_empty_key(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="'key' must not be empty"):
        await call(KVSetTool(), ctx, key="", value=1)
    assert ctx.kv == {}


@pytest.mark.parametrize(
    ("args", "deliverable"),
    [
        ({"deliverable": {"answer": 42}}, {"answer": 42}),
        ({"deliverable": "done", "summary": "ignored"}, "done"),
        ({"deliverable": None, "summary": "the summary"}, "the summary"),
        ({"summary": "only summary"}, "only summary"),
        ({"deliverable": 0}, 0),
        ({"deliverable": ""}, ""),
        ({}, None),
    ],
)
async def test_finish(ctx: ToolContext, args: dict[str, Any], deliverable: Any) -> None:
    assert await FinishTool().run(args, ctx) == Submit(deliverable)


# --- workspace escapes through the tools: refused, and nothing outside touched ---------------


async def test_dotdot_read_and_write_are_refused(
    ctx: ToolContext, tmp_path: Path, outside: Path
) -> None:
    (tmp_path / "x").write_text("original")
    before = snapshot(tmp_path)
    with pytest.raises(ToolError, match="leaves the workspace"):
        await call(ReadFileTool(), ctx, path="../x")
    with pytest.raises(ToolError, match="leaves the workspace"):
        await call(WriteFileTool(), ctx, path="../x", content="pwned")
    with pytest.raises(ToolError, match="leaves the workspace"):
        await call(WriteFileTool(), ctx, path="../new.txt", content="pwned")
    with pytest.raises(ToolError, match="leaves the workspace"):
        await call(WriteFileTool(), ctx, path="src/../../outside/secret.txt", content="pwned")
    with pytest.raises(ToolError, match="leaves the workspace"):
        await call(EditFileTool(), ctx, path="../x", old="original", new="pwned")
    with pytest.raises(ToolError, match="leaves the workspace"):
        await call(ListDirTool(), ctx, path="..")
    with pytest.raises(ToolError, match="leaves the workspace"):
        await call(GrepTool(), ctx, pattern="SECRET", path="../outside")
    assert (tmp_path / "x").read_text() == "original"
    assert not (tmp_path / "new.txt").exists()
    assert snapshot(tmp_path) == before


async def test_absolute_outside_paths_are_refused(ctx: ToolContext, outside: Path) -> None:
    with pytest.raises(ToolError, match="absolute path outside the workspace"):
        await call(ReadFileTool(), ctx, path="/etc/passwd")
    with pytest.raises(ToolError, match="absolute path outside the workspace"):
        await call(ReadFileTool(), ctx, path=str(outside / "secret.txt"))
    with pytest.raises(ToolError, match="absolute path outside the workspace"):
        await call(WriteFileTool(), ctx, path=str(outside / "new.txt"), content="pwned")
    with pytest.raises(ToolError, match="absolute path outside the workspace"):
        await call(ListDirTool(), ctx, path="/")
    assert sorted(os.listdir(outside)) == ["deep", "secret.txt"]


async def test_absolute_path_inside_is_allowed(ctx: ToolContext, root: Path) -> None:
    out = await call(ReadFileTool(), ctx, path=str(root / "hello.txt"))
    assert out.content.startswith("hello world")
    assert out.ui.payload == {"path": "hello.txt"}
    written = await text(WriteFileTool(), ctx, path=str(root / "abs.txt"), content="ok")
    assert written == "wrote 2 bytes to abs.txt"
    assert (root / "abs.txt").read_text() == "ok"


@pytest.mark.parametrize("path", ["a\x00b.txt", "hello.txt\x00.png"])
async def test_nul_bytes_are_refused(ctx: ToolContext, root: Path, path: str) -> None:
    before = snapshot(root)
    with pytest.raises(ToolError, match="NUL byte"):
        await call(ReadFileTool(), ctx, path=path)
    with pytest.raises(ToolError, match="NUL byte"):
        await call(WriteFileTool(), ctx, path=path, content="x")
    with pytest.raises(ToolError, match="NUL"):
        await call(GlobTool(), ctx, pattern=path)
    assert snapshot(root) == before


@pytest.mark.parametrize("path", ["link_out_file", "link_out_dir/secret.txt"])
async def test_symlinks_out_cannot_be_read_or_written(
    ctx: ToolContext, outside: Path, path: str
) -> None:
    before = snapshot(outside)
    with pytest.raises(ToolError, match="symlink"):
        await call(ReadFileTool(), ctx, path=path)
    with pytest.raises(ToolError, match="symlink"):
        await call(WriteFileTool(), ctx, path=path, content="pwned")
    with pytest.raises(ToolError, match="symlink"):
        await call(EditFileTool(), ctx, path=path, old="TOPSECRET", new="pwned")
    with pytest.raises(ToolError, match="symlink"):
        await call(WriteFileTool(), ctx, path="link_out_dir/new.txt", content="pwned")
    with pytest.raises(ToolError, match="symlink"):
        await call(GrepTool(), ctx, pattern="SECRET", path=path)
    assert snapshot(outside) == before


async def test_symlinked_dir_out_is_not_listed_globbed_or_grepped(
    ctx: ToolContext, outside: Path
) -> None:
    with pytest.raises(ToolError, match="symlink"):
        await call(ListDirTool(), ctx, path="link_out_dir")
    with pytest.raises(ToolError, match="symlink"):
        await call(GrepTool(), ctx, pattern=".", path="link_out_dir")
    listing = await text(ListDirTool(), ctx)
    assert "link_out_dir/" not in listing.split("\n")  # not even shown as a directory
    for pattern in ("*", "**", "**/*", "*/*", "*/**/*", "link_out_dir/*", "link_out_dir/**/*"):
        found = await text(GlobTool(), ctx, pattern=pattern)
        assert "secret" not in found
        assert "deep" not in found.replace("src/pkg/deep.py", "").replace("dir/pkg/deep.py", "")
    assert await text(GlobTool(), ctx, pattern="link_out_dir/*") == (
        "no paths match 'link_out_dir/*'"
    )
    grep = await text(GrepTool(), ctx, pattern="TOPSECRET")
    assert grep == "no matches for 'TOPSECRET' in . (searched 4 files)"


async def test_glob_and_grep_never_look_inside_outside_dirs(
    ctx: ToolContext, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pathlib's own glob would scandir() a symlinked directory's target; ours must not
    scanned: list[str] = []
    leaked: list[str] = []
    real_scandir = os.scandir

    def spy(path: Any = ".") -> Any:  # the tools list directories by descriptor
        where = f"/proc/self/fd/{path}" if isinstance(path, int) else path
        scanned.append(os.path.realpath(where))
        if scanned[-1].startswith(os.path.realpath(outside)):
            leaked.append(scanned[-1])
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", spy)
    for pattern in ("*/**", "*/*", "**/*", "link_out_dir/**/*.txt"):
        await call(GlobTool(), ctx, pattern=pattern)
    await call(GrepTool(), ctx, pattern="TOPSECRET")
    await call(ListDirTool(), ctx)
    assert scanned  # the spy saw the walks
    assert leaked == []


async def test_symlink_staying_inside_works(ctx: ToolContext, root: Path) -> None:
    assert await text(ReadFileTool(), ctx, path="link_in_dir/util.py") == "# util\nVALUE = 1\n"
    await call(WriteFileTool(), ctx, path="link_in_dir/via_link.txt", content="ok")
    assert (root / "src" / "via_link.txt").read_text() == "ok"
    assert await text(GrepTool(), ctx, pattern="VALUE", path="link_in_dir") == (
        "src/util.py:2:VALUE = 1"
    )


async def test_temporary_workspace_from_files() -> None:
    ws = Workspace(files={"notes/todo.md": "- write tests\n"})
    try:
        ctx = ToolContext(ws, "s")
        assert await text(ReadFileTool(), ctx, path="notes/todo.md") == "- write tests\n"
        assert await text(GlobTool(), ctx, pattern="**/*.md") == "notes/todo.md"
        assert await text(ListDirTool(), ctx) == "notes/"
    finally:
        ws.cleanup()


# --- registry -------------------------------------------------------------------------------

ALL_NAMES = [
    "calculator",
    "edit_file",
    "finish",
    "glob",
    "grep",
    "kv_get",
    "kv_set",
    "list_dir",
    "read_file",
    "shell",
    "write_file",
]


class EchoTool:
    name = "echo"
    description = "Echo the text."
    parallel_safe = True
    read_only = True

    def __init__(self) -> None:
        self.parameters: dict[str, Any] = {"type": "object", "properties": {}}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        return args


def test_builtin_names() -> None:
    # Opt-in builtins are known by name but left out of tools="all".
    assert builtin_names() == sorted([*ALL_NAMES, *OPT_IN_TOOLS])
    assert sorted(OPT_IN_TOOLS) == ["spawn_agent", "todo_write"]
    assert all(BUILTIN_TOOLS[n].name == n for n in ALL_NAMES)


def test_resolve_none_and_all() -> None:
    assert resolve_tools(None) == []
    assert resolve_tools([]) == []
    tools = resolve_tools("all")
    assert sorted(t.name for t in tools) == ALL_NAMES
    assert all(isinstance(t, BUILTIN_TOOLS[t.name]) for t in tools)
    assert resolve_tools("all")[0] is not tools[0]  # fresh instances per call


def test_resolve_mixed_list() -> None:
    @tool
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    echo = EchoTool()
    tools = resolve_tools(["calculator", echo, shout, "read_file"])
    assert [t.name for t in tools] == ["calculator", "echo", "shout", "read_file"]
    assert isinstance(tools[0], CalculatorTool)
    assert tools[1] is echo
    assert tools[2] is shout
    assert isinstance(tools[3], ReadFileTool)
    assert [t.name for t in resolve_tools(("all", echo))][-1] == "echo"


def test_resolve_unknown_name_suggests() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_tools(["calculator", "reed_file"])
    assert str(info.value) == (
        "tools: unknown tool 'reed_file'; builtins are: "
        + ", ".join(builtin_names())
        + "; did you mean 'read_file'?"
    )
    with pytest.raises(ConfigError, match=r"unknown tool 'xyz'; builtins are: calculator") as info:
        resolve_tools(["xyz"])
    assert "did you mean" not in str(info.value)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("calculator", r"got the string 'calculator'; for the single builtin, write tools=\["),
        ("everything", "expected None, 'all' or a list"),
        ({"calculator"}, "got set"),
        (42, "got int"),
        (b"all", "got bytes"),
        ([42], r"tools\[0\]: int object is not a tool \(missing name, description"),
        (["calculator", object()], r"tools\[1\]: object object is not a tool"),
        ([EchoTool], r"got the class EchoTool, not a tool object; pass an instance such as"),
        ([print], "plain function 'print'.*@harness.tool"),
        ([lambda a, c: None], "plain function '<lambda>'"),
        (["calculator", "calculator"], "duplicate tool name 'calculator'"),
        (["all", "finish"], "duplicate tool name 'finish'"),
        ([EchoTool(), EchoTool()], "duplicate tool name 'echo'"),
    ],
)
def test_resolve_refusals(spec: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_tools(spec)


def test_resolve_checks_the_tool_protocol_types() -> None:
    class SyncRun(EchoTool):
        def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
            return args

    class BadFields(EchoTool):
        name = "has space"
        read_only = "yes"  # type: ignore[assignment]

        def __init__(self) -> None:
            self.parameters = {"properties": {}}

    with pytest.raises(ConfigError, match=r"tools\[0\] \(SyncRun\): run must be an async method"):
        resolve_tools([SyncRun()])
    with pytest.raises(ConfigError) as info:
        resolve_tools([BadFields()])  # type: ignore[list-item]
    message = str(info.value)
    assert "name 'has space' must match" in message
    assert 'parameters must be a JSON-schema dict with "type": "object"' in message
    assert "read_only must be a bool" in message
    assert "parallel_safe" not in message
