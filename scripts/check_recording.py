"""Check what docs/recording.md claims about the local model servers (run while they are up,
e.g. during ``nox -s record`` or after starting them as scripts/record_llamacpp.py does).

``seeds``: sends one recorded request 3 times, with seed 1, 1 and 2, to each server and says
whether the same seed gives the same reply and another seed a different one.

``replay``: sends N recorded requests (first interaction of N cassettes per provider) to the
live server and compares the reply text with the recorded one.

    python scripts/check_recording.py seeds|replay [--cassettes cassettes] [-n 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import yaml

SERVERS = {"llamacpp-gemma": "http://127.0.0.1:8080", "llamaserver-gemma": "http://127.0.0.1:8081"}


def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as response:
        result: dict[str, Any] = json.loads(response.read())
        return result


def reply_text(data: dict[str, Any]) -> str:
    if "choices" in data:
        return str(data["choices"][0]["message"].get("content") or "")
    return "".join(b.get("text", "") for b in data.get("content", []) if b.get("type") == "text")


def recorded(cassettes: Path, provider: str, n: int) -> list[tuple[Path, dict[str, Any], str]]:
    out = []
    for path in sorted(cassettes.glob(f"*/{provider}/react/*.e0.yaml"))[:n]:
        interaction = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"][0]
        uri = interaction["request"]["uri"]
        body = json.loads(interaction["request"]["body"])
        text = reply_text(json.loads(interaction["response"]["body"]["string"]))
        out.append((path, {"uri": uri, "body": body}, text))
    return out


def endpoint(provider: str, uri: str) -> str:
    path = uri.split("://", 1)[-1].split("/", 1)[1]
    return f"{SERVERS[provider]}/{path}"


def check_seeds(cassettes: Path) -> int:
    for provider in SERVERS:
        items = recorded(cassettes, provider, 1)
        if not items:
            print(f"{provider}: no cassettes")
            continue
        _, request, _ = items[0]
        body = {**request["body"], "temperature": 1.0, "stream": False}
        url = endpoint(provider, request["uri"])
        texts = [reply_text(post(url, {**body, "seed": seed})) for seed in (1, 1, 2)]
        same = texts[0] == texts[1]
        differ = texts[0] != texts[2]
        print(
            f"{provider}: seed 1 twice -> {'same' if same else 'DIFFERENT'}; "
            f"seed 1 vs 2 -> {'different' if differ else 'SAME'}; replies {texts!r}"
        )
    return 0


def check_replay(cassettes: Path, n: int) -> int:
    matched = total = 0
    for provider in SERVERS:
        for path, request, text in recorded(cassettes, provider, n):
            live = reply_text(post(endpoint(provider, request["uri"]), request["body"]))
            total += 1
            matched += live == text
            mark = "same" if live == text else f"DIFFERENT: live {live!r} vs recorded {text!r}"
            print(f"{provider} {path}: {mark}")
    print(f"{matched} of {total} replayed requests gave the recorded reply")
    return 0 if matched == total else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["seeds", "replay"])
    parser.add_argument("--cassettes", type=Path, default=Path("cassettes"))
    parser.add_argument("-n", type=int, default=5)
    args = parser.parse_args()
    if args.what == "seeds":
        return check_seeds(args.cassettes)
    return check_replay(args.cassettes, args.n)


if __name__ == "__main__":
    sys.exit(main())
