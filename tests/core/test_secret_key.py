"""The settings refuse to load without a secret key of the site's own, except in debug or the local demo stack."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOAD = "import django; django.setup(); from django.conf import settings; print(len(settings.SECRET_KEY))"


def _load(**env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in {"WANMON_SECRET_KEY", "WANMON_DEBUG", "WANMON_DEMO"}}
    base["DJANGO_SETTINGS_MODULE"] = "wanmon.settings"
    return subprocess.run([sys.executable, "-c", LOAD], cwd=ROOT, env={**base, **env}, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("env", [{}, {"WANMON_SECRET_KEY": ""}, {"WANMON_SECRET_KEY": "  "},
                                 {"WANMON_SECRET_KEY": "wanmon-insecure-local-development-key-change-me"},
                                 {"WANMON_SECRET_KEY": "CHANGE-ME"}, {"WANMON_SECRET_KEY": "short-key"}])
def test_production_refuses_to_start_without_a_key(env):
    result = _load(**env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "WANMON_SECRET_KEY" in result.stderr


@pytest.mark.parametrize("env", [{"WANMON_SECRET_KEY": "k" * 50}, {"WANMON_DEBUG": "1"}, {"WANMON_DEMO": "1"},
                                 {"WANMON_DEMO": "1", "WANMON_SECRET_KEY": ""}])
def test_a_key_debug_or_the_demo_stack_start(env):
    result = _load(**env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert int(result.stdout.strip()) >= 40


def test_the_scripts_run_as_the_demo_stack():
    assert 'export WANMON_DEMO="${WANMON_DEMO:-1}"' in (ROOT / "scripts" / "lib.sh").read_text()


DEV_KEY = "wanmon-insecure-local-development-key-change-me"
USES_DEV_KEY = f"from django.conf import settings; print(settings.SECRET_KEY == {DEV_KEY!r})"


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    """scripts/manage as an operator runs it: no demo or key variables but those given."""
    base = {k: v for k, v in os.environ.items()
            if k not in {"WANMON_SECRET_KEY", "WANMON_DEBUG", "WANMON_DEMO", "DATABASE_URL", "WANMON_PG_PORT"}}
    return subprocess.run([str(ROOT / "scripts" / "manage"), *args], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=120)


ELSEWHERE = "postgres://wanmon@db.example.org:5432/wanmon"


@pytest.mark.parametrize("env", [{}, {"WANMON_DEMO": "1"}, {"WANMON_SECRET_KEY": " "}])
def test_manage_on_another_database_refuses_the_development_key(env):
    result = _manage("shell", "-c", USES_DEV_KEY, DATABASE_URL=ELSEWHERE, **env)
    assert result.returncode != 0 and "True" not in result.stdout
    assert "WANMON_SECRET_KEY" in result.stderr and "demo" in result.stderr
    assert "db.example.org" not in result.stderr  # the URL (and a password in it) is not repeated


def test_manage_on_another_database_judges_the_key_as_production_does():
    short = _manage("shell", "-c", USES_DEV_KEY, DATABASE_URL=ELSEWHERE, WANMON_SECRET_KEY="short-key")
    assert short.returncode != 0 and "ImproperlyConfigured" in short.stderr
    own = _manage("shell", "-c", USES_DEV_KEY, DATABASE_URL=ELSEWHERE, WANMON_SECRET_KEY="k" * 50)
    assert own.returncode == 0 and own.stdout.split()[-1] == "False", own.stderr[-2000:]


def test_manage_on_the_demos_own_database_keeps_the_development_key():
    result = _manage("shell", "-c", USES_DEV_KEY, DATABASE_URL="postgres://postgres@127.0.0.1:54329/wanmon")
    assert result.returncode == 0 and result.stdout.split()[-1] == "True", result.stderr[-2000:]
