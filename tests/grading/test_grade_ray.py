"""``fluke grade --executor ray --address``: grading through a Ray cluster the test starts.

Ray is an optional extra (``pip install 'fluke[ray]'``); locally its absence skips this test,
under CI (``CI`` set, where ``.ci/run`` installs the extra) it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest
from click.testing import CliRunner

from fluke.cli import group

from ..conftest import TAU_AIRLINE, need
from .test_scale import SPEC, airline, _copy  # noqa: F401 - the fixture is used by name

try:
    import ray
except ImportError:
    if os.environ.get("CI"):
        pytest.fail("Ray tests would skip under CI: ray is not installed (FLUKE_TEST_EXTRAS=test,ray)",
                    pytrace=False)
    pytest.skip("ray is not installed (pip install 'fluke[ray]')", allow_module_level=True)

#: The cluster's head: a process of its own (so the test process joins it by address, as a
#: user's does), in a private temp dir (so no other Ray on the machine is found or disturbed).
HEAD = ("import ray, sys; ctx = ray.init(address='local', num_cpus=2, include_dashboard=False, "
        "log_to_driver=False, _temp_dir=sys.argv[1]); print(ctx.address_info['gcs_address'], flush=True); "
        "sys.stdin.read()")


@pytest.fixture
def cluster():
    temp = tempfile.mkdtemp(prefix="fluke-ray-")   # short: Ray's socket paths must fit 107 bytes
    # A head finding ~/.ray/auth_token turns token auth on, which ray.init(address=...) then
    # lacks (ray 2.59+): this throwaway loopback cluster is started without it.
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    head = subprocess.Popen([sys.executable, "-c", HEAD, temp], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, start_new_session=True, env=env)
    try:
        address = head.stdout.readline().strip()
        assert address, "the Ray head did not start"
        yield address
    finally:
        if ray.is_initialized():
            ray.shutdown()
        head.stdin.close()
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)   # only the head's own process group
            head.wait(10)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_grading_on_a_ray_cluster_by_address_answers_as_one_process(airline, cluster, tmp_path):  # noqa: F811
    url, _, _ = airline
    need(TAU_AIRLINE)
    local = CliRunner().invoke(group, ["--ledger", _copy(url, tmp_path), "grade", "--spec", str(SPEC), "--jobs", "1",
                                       "--json"], catch_exceptions=False)
    (tmp_path / "copy.db").unlink()
    on_ray = CliRunner().invoke(group, ["--ledger", _copy(url, tmp_path), "grade", "--spec", str(SPEC),
                                        "--executor", "ray", "--address", cluster, "--json"],
                                catch_exceptions=False)
    assert ray.is_initialized() and ray.get_runtime_context().gcs_address == cluster
    assert on_ray.exit_code == local.exit_code == 1, on_ray.output
    a, b = json.loads(local.output), json.loads(on_ray.output)
    assert a == b and b["stored"] == 200
    assert b["luck"][next(iter(b["luck"]))]["pooled"]["lucky"] == 11
