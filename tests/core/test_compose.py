"""docker-compose.yml is the production recipe: no Docker engine runs here, so check the file itself."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
LONG_RUNNING = {"db", "redis", "web", "worker", "beat", "proxy"}


def _env_example() -> dict[str, str]:
    pairs = {}
    for line in (ROOT / "deploy" / "env.example").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs


def test_services_present():
    assert LONG_RUNNING <= set(COMPOSE["services"])


def test_external_images_are_pinned():
    images = {name: svc.get("image") for name, svc in COMPOSE["services"].items() if "build" not in svc}
    assert images["db"].startswith("timescale/timescaledb:2.")
    for name, image in images.items():
        repo, _, tag = image.partition(":")
        assert tag and tag != "latest" and re.search(r"\d", tag), f"{name}: image {image!r} is not pinned"


def test_every_long_running_service_has_a_healthcheck():
    for name in LONG_RUNNING:
        check = COMPOSE["services"][name].get("healthcheck")
        assert check and check.get("test"), f"{name} has no healthcheck"


def test_web_waits_for_healthy_database_and_migrations():
    web = COMPOSE["services"]["web"]
    assert web["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert COMPOSE["services"]["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    # What web itself needs (the database), not the worker: the proxy waits on this check.
    assert "/readyz" in " ".join(web["healthcheck"]["test"])
    assert web["environment"]["WANMON_BEHIND_PROXY"] == "true"


def test_every_variable_is_documented():
    text = (ROOT / "docker-compose.yml").read_text()
    used = set(re.findall(r"\$\{(\w+)", text))
    example = _env_example()
    readme = (ROOT / "README.md").read_text()
    assert used, "compose uses no variables?"
    missing_example = sorted(used - set(example))
    missing_readme = sorted(v for v in used | set(example) if v not in readme)
    assert missing_example == [] and missing_readme == []


def test_proxy_terminates_tls_for_the_configured_domain():
    caddyfile = (ROOT / "deploy" / "Caddyfile").read_text()
    assert "{$WANMON_DOMAIN}" in caddyfile and "reverse_proxy web:8000" in caddyfile
    assert {"80:80", "443:443"} <= set(COMPOSE["services"]["proxy"]["ports"])
