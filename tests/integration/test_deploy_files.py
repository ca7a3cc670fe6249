"""deploy/: the docker-compose stack (Jaeger v2, Tempo, Grafana) checked without Docker.

Docker does not run where these tests run, so the files are parsed with PyYAML and checked for
what ``docker compose up`` would trip on: pinned images, the OTLP and UI ports published without
clashes, bind-mounted files that exist, Tempo's receivers on all interfaces (localhost is the
default since Tempo 2.7 and unreachable through published ports), and a provisioned Grafana
data source that points at the Tempo service's HTTP port.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "docker-compose.yml"


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    compose = _load(COMPOSE)
    assert isinstance(compose, dict)
    assert "version" not in compose  # obsolete in the Compose specification
    return dict(compose["services"])


def _ports(service: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(host ip, host port, container port) of each short-syntax ``ports`` entry."""
    out = []
    for entry in service.get("ports", []):
        assert isinstance(entry, str), f"use the quoted short syntax: {entry!r}"
        parts = entry.split("/")[0].split(":")
        assert len(parts) == 3, f"publish on an explicit host ip: {entry!r}"
        ip, host, container = parts
        out.append((ip, int(host), int(container)))
    return out


def _container_ports(service: dict[str, Any]) -> dict[int, int]:
    return {c: h for _, h, c in _ports(service)}


def _mounts(service: dict[str, Any]) -> dict[str, Path]:
    """Container path -> host path (relative to deploy/) of each bind mount."""
    out = {}
    for entry in service.get("volumes", []):
        src, dst, *_ = entry.split(":")
        assert src.startswith("./"), f"bind mounts are relative to deploy/: {entry!r}"
        out[dst] = (DEPLOY / src).resolve()
    return out


def test_services_and_pinned_images(services: dict[str, Any]) -> None:
    assert set(services) == {"jaeger", "tempo", "grafana"}
    images = {name: s["image"] for name, s in services.items()}
    for name, image in images.items():
        repo, _, tag = image.rpartition(":")
        assert repo, image
        assert tag not in ("", "latest"), f"{name}: pin a version tag, got {image!r}"
    assert images["jaeger"].startswith("jaegertracing/jaeger:2.")  # v2, not all-in-one 1.x
    assert images["tempo"].startswith("grafana/tempo:2.")
    assert images["grafana"].startswith("grafana/grafana:")


def test_ports_published_on_loopback_without_clashes(services: dict[str, Any]) -> None:
    host_ports = [h for s in services.values() for _, h, _ in _ports(s)]
    assert len(host_ports) == len(set(host_ports)), sorted(host_ports)
    for name, s in services.items():
        for ip, _, _ in _ports(s):
            assert ip == "127.0.0.1", f"{name} publishes on {ip}"
    # Jaeger v2: native OTLP gRPC 4317 and HTTP 4318, UI 16686, on their usual host ports.
    assert _container_ports(services["jaeger"]) == {4317: 4317, 4318: 4318, 16686: 16686}
    assert "COLLECTOR_OTLP_ENABLED" not in (services["jaeger"].get("environment") or {})  # v1
    # Tempo: OTLP on other host ports (4417/4418), its HTTP API on 3200.
    assert _container_ports(services["tempo"]) == {3200: 3200, 4317: 4417, 4318: 4418}
    assert _container_ports(services["grafana"]) == {3000: 3000}


def test_tempo_config_is_mounted_and_listens_where_published(services: dict[str, Any]) -> None:
    tempo = services["tempo"]
    mounts = _mounts(tempo)
    (config_in_container,) = [
        a.split("=", 1)[1] for a in tempo["command"] if a.startswith("-config.file=")
    ]
    assert mounts[config_in_container] == DEPLOY / "tempo.yaml"
    config = _load(DEPLOY / "tempo.yaml")
    published = _container_ports(tempo)
    assert config["server"]["http_listen_port"] in published
    protocols = config["distributor"]["receivers"]["otlp"]["protocols"]
    assert set(protocols) == {"grpc", "http"}
    for proto in protocols.values():
        host, _, port = proto["endpoint"].rpartition(":")
        assert host == "0.0.0.0"  # localhost (Tempo >= 2.7's default) is unreachable
        assert int(port) in published
    assert config["storage"]["trace"]["backend"] == "local"


def test_grafana_datasources_are_provisioned(services: dict[str, Any]) -> None:
    grafana = services["grafana"]
    mounts = _mounts(grafana)
    provisioning = mounts["/etc/grafana/provisioning"]
    assert provisioning == DEPLOY / "grafana" / "provisioning"
    files = sorted((provisioning / "datasources").glob("*.yaml"))
    assert [f.name for f in files] == ["tempo.yaml"]
    doc = _load(files[0])
    assert doc["apiVersion"] == 1
    by_type = {d["type"]: d for d in doc["datasources"]}
    assert set(by_type) == {"tempo", "jaeger"}
    assert by_type["tempo"]["isDefault"] is True

    tempo_url = urlparse(by_type["tempo"]["url"])
    assert tempo_url.hostname == "tempo"
    assert tempo_url.port == _load(DEPLOY / "tempo.yaml")["server"]["http_listen_port"]
    jaeger_url = urlparse(by_type["jaeger"]["url"])
    assert jaeger_url.hostname == "jaeger"
    assert jaeger_url.port in _container_ports(services["jaeger"])
    assert set(grafana["depends_on"]) == {"tempo", "jaeger"}
