# Diagnostics: librig's RIG_LOAD_TRACE=1 milestones reach Python's logging through rig.log_to_logging, at
# DEBUG on the "rig" logger, and stderr again after rig.log_to_stderr. The trace is read once per process,
# so each case runs a child interpreter with RIG_LOAD_TRACE=1.
import os
import subprocess
import sys

from test_load import write_safetensors

import rig

CHILD = r"""
import logging, sys
import rig
heard = []
class Keep(logging.Handler):
    def emit(self, record):
        heard.append((record.name, record.levelno, record.getMessage()))
logging.getLogger("rig").addHandler(Keep())
logging.getLogger("rig").setLevel(logging.DEBUG)
path, mode = sys.argv[1], sys.argv[2]
if mode in ("logging", "restored"):
    rig.log_to_logging()
if mode == "restored":
    rig.log_to_stderr()
if mode == "warnings":
    rig.log_to_logging(level=logging.WARNING)
with rig.memory_device("log") as d:
    loaded = rig.load(path, d, chunk_bytes=64 << 10, threads=2)
for name, level, message in heard:
    print("%s|%d|%s" % (name, level, message))
"""


def run_child(tmp_path, mode):
    path = str(tmp_path / "w.safetensors")
    write_safetensors(path, [("a", "U8", [5000], bytes(5000)), ("b", "U8", [70000], bytes(70000))])
    env = dict(os.environ, RIG_LOAD_TRACE="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(rig.__file__)), os.path.dirname(__file__)] +
                                        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    done = subprocess.run([sys.executable, "-c", CHILD, path, mode], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines(), done.stderr


def test_a_traced_loads_milestones_reach_the_rig_logger_at_debug(tmp_path):
    heard, err = run_child(tmp_path, "logging")
    assert "rig load trace" not in err
    assert any(line.startswith("rig|10|rig load trace: ") and line.endswith("ms  planned") for line in heard)
    assert any(line.endswith("ms  done") for line in heard)
    assert all(line.startswith("rig|10|rig load trace: ") for line in heard), heard


def test_a_level_above_debug_hears_no_trace(tmp_path):
    heard, err = run_child(tmp_path, "warnings")
    assert heard == [] and "rig load trace" not in err


def test_log_to_stderr_restores_the_default(tmp_path):
    heard, err = run_child(tmp_path, "restored")
    assert heard == []
    assert "ms  planned\n" in err and "ms  done\n" in err
