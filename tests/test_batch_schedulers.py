"""`--scheduler` names what it accepts: a Dask scheduler's address or a cluster started here; a bad
value, or Dask missing, is one line that says what to give or install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from a2a_capture.batch.schedulers import SchedulerError, scheduler
from tests.cli import process_env
from tests.test_cli_show import run


@pytest.mark.parametrize(("given", "meant"), [
    ("tcp://10.0.0.5:8786", "tcp://10.0.0.5:8786"),
    ("10.0.0.5:8786", "tcp://10.0.0.5:8786"),  # as Dask reads an address without a protocol
    (":8786", "tcp://127.0.0.1:8786"),
    ("tls://[::1]:8786", "tls://[::1]:8786"),
    ("processes", "processes"),
    ("threads", "threads"),
])
def test_what_a_scheduler_may_be(given, meant):
    assert scheduler(given) == meant


@pytest.mark.parametrize(("given", "problem"), [
    ("http://10.0.0.5:8786", "http:// is not a Dask protocol (tcp, tls, ws, wss, ucx)"),
    ("tcp://10.0.0.5", "it is not an address with a host and a port"),
    ("local", "it is not an address with a host and a port"),
    ("tcp://10.0.0.5:99999", "it is not an address with a host and a port"),
])
def test_a_bad_scheduler_is_one_line(given, problem):
    with pytest.raises(SchedulerError) as raised:
        scheduler(given)
    assert str(raised.value) == (f"{given!r} should be a Dask scheduler's address such as tcp://10.0.0.5:8786, "
                                 f"or processes or threads for a cluster on this machine: {problem}")
    result = run("analyze", "--each-file", "--engine", "dask", "--scheduler", given, "captures")
    assert result.returncode == 2
    assert result.stderr.decode().startswith(f"a2a-capture: error: Invalid value for '--scheduler': {raised.value} "
                                             "(see ")
    assert result.stderr.count(b"\n") == 1


def test_without_dask_the_error_says_what_to_install(kit):
    # Dask made unimportable in a process of its own, as on a machine without the extra
    script = "import sys; sys.modules['distributed'] = None; from a2a_capture.cli import main; main()"
    result = subprocess.run([sys.executable, "-c", script, "analyze", "--each-file", "--engine", "dask", str(kit)],
                            capture_output=True, env=process_env(), timeout=120)
    assert result.returncode == 2
    assert result.stderr.decode() == ("a2a-capture: error: --engine dask needs Dask distributed: "
                                      "pip install 'a2a-capture[dask]'\n")
