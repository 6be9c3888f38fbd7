"""The replay server: a child process that imports torch once and forks one fresh process per
replay (importing torch costs seconds; a fork, milliseconds).

Protocol, one JSON object per line. The parent writes a replay spec (see ``harness.replay``) on
stdin; the server answers ``{"pid": N}`` when the replay child started, then
``{"pid": N, "exit": code}`` or ``{"pid": N, "signal": number}`` when it ended. The first line
the server writes is ``{"ready": true, "torch": version}``, or ``{"ready": false, "error": ...}``.

The server must stay single-threaded and must not touch CUDA or run a torch op before forking:
a CUDA context or an OpenMP thread pool does not survive ``fork``. Only the replay child
initialises them.
"""
from __future__ import annotations

import json
import os
import sys


def _say(record: dict) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def serve() -> None:
    try:
        import torch

        from torchmemlint.verify import harness
        from torchmemlint.verify.meters import warm_up
    except ImportError as error:
        _say({"ready": False,
              "error": f"{error}; `torchmemlint verify` needs PyTorch: pip install 'torchmemlint[verify]'"})
        return
    warm_up()
    if torch.cuda.is_initialized():  # something imported above did; a forked child could not use CUDA
        _say({"ready": False, "error": "CUDA was initialised in the replay server, which must fork"})
        return
    _say({"ready": True, "torch": torch.__version__, "python": sys.executable})
    for line in sys.stdin:
        spec = json.loads(line)
        pid = os.fork()
        if pid == 0:
            harness.child_main(spec)  # never returns
        _say({"pid": pid})
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            _say({"pid": pid, "signal": os.WTERMSIG(status)})
        else:
            _say({"pid": pid, "exit": os.WEXITSTATUS(status)})
    os._exit(0)  # the parent closed stdin: done; tearing torch down would only take seconds


if __name__ == "__main__":
    serve()
