"""Provider profiles: loading harness.toml / pyproject.toml, validation messages, keys only from
the environment, spec resolution, and the builtin profiles' environment conventions."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import ConfigError
from harness.providers._profiles import (
    BUILTIN_PROFILES,
    Prices,
    ProviderProfile,
    load_profiles,
    resolve_profile,
)

LLAMACPP = """\
kind = "openai"
base_url = "http://127.0.0.1:8080/v1"
model = "gemma-3-270m"
tool_calls = "text"
prices = {input_per_mtok = 0, output_per_mtok = 0}
"""


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OLLAMA_HOST",
    ):
        monkeypatch.delenv(var, raising=False)


# --- loading -------------------------------------------------------------------------------------


def test_loads_profiles_from_harness_toml(tmp_path: Path) -> None:
    write(tmp_path, "harness.toml", f"[providers.llamacpp-gemma]\n{LLAMACPP}")
    profiles = load_profiles(tmp_path)
    profile = profiles["llamacpp-gemma"]
    assert profile.name == "llamacpp-gemma"
    assert profile.kind == "openai"
    assert profile.resolved_base_url() == "http://127.0.0.1:8080/v1"
    assert profile.model == "gemma-3-270m"
    assert profile.tool_calls == "text"
    assert profile.prices == Prices(input_per_mtok=0, output_per_mtok=0)


def test_loads_profiles_from_pyproject_tool_table(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "x"\n\n'
        '[tool.harness.providers.vllm]\nkind = "openai"\nbase_url = "http://gpu:8000/v1"\n'
        'api_key_env = "VLLM_KEY"\n',
    )
    assert list(load_profiles(tmp_path)) == ["vllm"]
    assert load_profiles(tmp_path)["vllm"].api_key_env == "VLLM_KEY"


def test_harness_toml_wins_over_pyproject_for_the_same_name(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.harness.providers.a]\nkind = "ollama"\nmodel = "p"\n')
    write(tmp_path, "harness.toml", '[providers.a]\nkind = "ollama"\nmodel = "h"\n')
    assert load_profiles(tmp_path)["a"].model == "h"


def test_no_files_and_unrelated_pyproject_give_no_profiles(tmp_path: Path) -> None:
    assert load_profiles(tmp_path) == {}
    write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n[tool.ruff]\nline-length = 99\n')
    assert load_profiles(tmp_path) == {}


def test_defaults_to_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "harness.toml", f"[providers.here]\n{LLAMACPP}")
    monkeypatch.chdir(tmp_path)
    assert "here" in load_profiles()


# --- validation errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "field", "detail"),
    [
        ('kind = "gemini"', "kind", "unknown provider kind 'gemini'"),
        ('kind = "openai"\ntimeout_s = -1', "timeout_s", "greater than 0"),
        ('kind = "openai"\nbase_ur = "http://x"', "base_ur", "Extra inputs"),
        ('kind = "openai"\ntool_calls = "xml"', "tool_calls", "'native'"),
        ('kind = "openai"\nprices = {input_per_mtok = 1}', "prices.output_per_mtok", "required"),
        (
            'kind = "openai"\nprices = {input_per_mtok = -1, output_per_mtok = 1}',
            "prices.input_per_mtok",
            "greater than or equal to 0",
        ),
        ("base_url = 'http://x'", "kind", "required"),
    ],
)
def test_validation_errors_name_file_table_and_field(
    tmp_path: Path, table: str, field: str, detail: str
) -> None:
    path = write(tmp_path, "harness.toml", f"[providers.local]\n{table}\n")
    with pytest.raises(ConfigError) as info:
        load_profiles(tmp_path)
    message = str(info.value)
    assert str(path) in message
    assert "[providers.local]" in message
    assert f"{field}:" in message
    assert detail in message


def test_pyproject_errors_name_the_tool_table(tmp_path: Path) -> None:
    path = write(tmp_path, "pyproject.toml", "[tool.harness.providers.bad]\nkind = 3\n")
    with pytest.raises(ConfigError) as info:
        load_profiles(tmp_path)
    assert f"{path} [tool.harness.providers.bad]: kind:" in str(info.value)


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "harness.toml", "[providers.x\nkind = 'openai'\n")
    with pytest.raises(ConfigError, match="not valid TOML") as info:
        load_profiles(tmp_path)
    assert str(path) in str(info.value)


def test_a_profile_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "harness.toml", 'providers = {x = "openai"}\n')
    with pytest.raises(ConfigError, match=r"\[providers\.x\]: must be a table"):
        load_profiles(tmp_path)


@pytest.mark.parametrize("key", ["api_key", "key", "token"])
def test_a_profile_holding_a_key_is_refused(tmp_path: Path, key: str) -> None:
    write(tmp_path, "harness.toml", f'[providers.leaky]\nkind = "openai"\n{key} = "sk-secret"\n')
    with pytest.raises(ConfigError) as info:
        load_profiles(tmp_path)
    message = str(info.value)
    assert "[providers.leaky]" in message
    assert "api_key_env" in message
    assert "sk-secret" not in message


# --- resolve_profile -----------------------------------------------------------------------------


def test_resolve_splits_name_and_model(tmp_path: Path) -> None:
    profile, model = resolve_profile("openai:gpt-4o", tmp_path)
    assert profile is BUILTIN_PROFILES["openai"]
    assert model == "gpt-4o"


def test_resolve_keeps_colons_in_the_model_name(tmp_path: Path) -> None:
    profile, model = resolve_profile("ollama:llama3.1:8b", tmp_path)
    assert profile.kind == "ollama"
    assert model == "llama3.1:8b"


def test_resolve_without_model_uses_the_profile_model(tmp_path: Path) -> None:
    assert resolve_profile("openai", tmp_path)[1] is None
    write(tmp_path, "harness.toml", f"[providers.gemma]\n{LLAMACPP}")
    profile, model = resolve_profile("gemma", tmp_path)
    assert (profile.name, model) == ("gemma", "gemma-3-270m")
    assert resolve_profile("gemma:other", tmp_path)[1] == "other"


def test_claude_is_an_alias_of_anthropic(tmp_path: Path) -> None:
    profile, model = resolve_profile("claude:claude-sonnet-4-0", tmp_path)
    assert profile.name == "claude"
    assert profile.kind == "anthropic"
    assert profile.api_key_env == "ANTHROPIC_API_KEY"
    assert model == "claude-sonnet-4-0"


def test_named_profiles_shadow_builtins(tmp_path: Path) -> None:
    write(
        tmp_path, "harness.toml", '[providers.openai]\nkind = "openai"\nbase_url = "http://p/v1"\n'
    )
    profile, _ = resolve_profile("openai:gpt-4o", tmp_path)
    assert profile.resolved_base_url() == "http://p/v1"


def test_unknown_name_suggests_the_closest(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_profile("opneai:gpt-4o", tmp_path)
    message = str(info.value)
    assert "'opneai'" in message
    assert "did you mean 'openai'?" in message
    assert "[tool.harness.providers.NAME]" in message


def test_unknown_name_suggests_named_profiles_too(tmp_path: Path) -> None:
    write(tmp_path, "harness.toml", f"[providers.llamacpp-gemma]\n{LLAMACPP}")
    with pytest.raises(ConfigError, match="did you mean 'llamacpp-gemma'"):
        resolve_profile("llamacpp-gema", tmp_path)


# --- environment: base URLs and keys -------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("gpu-box:11434", "http://gpu-box:11434"),
        ("https://ollama.example.com/", "https://ollama.example.com"),
    ],
)
def test_ollama_host_gets_a_scheme(monkeypatch: pytest.MonkeyPatch, host: str, url: str) -> None:
    monkeypatch.setenv("OLLAMA_HOST", host)
    assert BUILTIN_PROFILES["ollama"].resolved_base_url() == url


def test_default_base_urls_and_env_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    assert BUILTIN_PROFILES["ollama"].resolved_base_url() == "http://127.0.0.1:11434"
    assert BUILTIN_PROFILES["openai"].resolved_base_url() == "https://api.openai.com/v1"
    assert BUILTIN_PROFILES["anthropic"].resolved_base_url() == "https://api.anthropic.com"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy.local/v1/")
    assert BUILTIN_PROFILES["openai"].resolved_base_url() == "http://proxy.local/v1"
    assert (
        BUILTIN_PROFILES["openai"].resolved_base_url("http://explicit/v1") == "http://explicit/v1"
    )


def test_a_profile_without_base_url_is_a_config_error() -> None:
    profile = ProviderProfile(name="nowhere", kind="openai")
    with pytest.raises(ConfigError, match="'nowhere': no base_url"):
        profile.resolved_base_url()


@pytest.mark.parametrize(
    ("name", "var"), [("openai", "OPENAI_API_KEY"), ("claude", "ANTHROPIC_API_KEY")]
)
def test_missing_key_names_the_environment_variable(name: str, var: str) -> None:
    with pytest.raises(ConfigError) as info:
        BUILTIN_PROFILES[name].api_key()
    message = str(info.value)
    assert var in message
    assert f"'{name}'" in message


def test_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    assert BUILTIN_PROFILES["openai"].api_key() == "sk-from-env"


def test_optional_key_may_be_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "harness.toml", f'[providers.local]\n{LLAMACPP}api_key_env = "LOCAL_KEY"\n')
    profile = load_profiles(tmp_path)["local"]
    monkeypatch.delenv("LOCAL_KEY", raising=False)
    assert profile.api_key() is None
    monkeypatch.setenv("LOCAL_KEY", "k")
    assert profile.api_key() == "k"
    assert BUILTIN_PROFILES["ollama"].api_key() is None


def test_profiles_are_immutable() -> None:
    with pytest.raises(ValueError, match="frozen"):
        BUILTIN_PROFILES["openai"].model = "x"  # type: ignore[misc]


def test_harness_toml_overrides_only_the_fields_it_sets(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.harness.providers.local]\n"
        'kind = "openai"\nbase_url = "http://127.0.0.1:8082/v1"\nmodel = "m"\n'
        "temperature = 0\nmax_tokens = 512\nstream = false\n",
        encoding="utf-8",
    )
    (tmp_path / "harness.toml").write_text(
        '[providers.local]\nbase_url = "http://127.0.0.1:9999/v1"\n'
        '[providers.openai]\nbase_url = "http://127.0.0.1:7777/v1"\n',
        encoding="utf-8",
    )
    profiles = load_profiles(tmp_path)
    local = profiles["local"]
    assert local.base_url == "http://127.0.0.1:9999/v1"  # moved to another port...
    assert (local.kind, local.model, local.temperature, local.max_tokens, local.stream) == (
        "openai", "m", 0.0, 512, False,
    )  # ...and nothing else changed  # fmt: skip
    openai = profiles["openai"]  # a built-in profile, overridden field by field too
    assert openai.base_url == "http://127.0.0.1:7777/v1"
    assert openai.api_key_env == "OPENAI_API_KEY"
    assert openai.max_tokens_param == "max_completion_tokens"
