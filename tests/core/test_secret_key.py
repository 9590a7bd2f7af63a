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
