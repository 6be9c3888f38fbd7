"""The replay server: a child process that imports torch once and forks one fresh process per
replay (importing torch costs seconds; a fork, milliseconds).

Protocol, one JSON object per line. The parent writes a replay spec (see ``harness.replay``) on
stdin; the server answers ``{"pid": N}`` when the replay child started, then
``{"pid": N, "exit": code}`` or ``{"pid": N, "signal": number}`` when it ended. The first line
the server writes is ``{"ready": true, "torch": version}``, or ``{"ready": false, "error": ...}``.

The server is a child subreaper: a replay's processes that lose their parent (a detached
grandchild whose parent ended) are adopted by it, so that when the replay child ends, the server
kills and reaps every descendant it has left before it reports the end. Each replay child gets
stdin at end of file (``input()`` raises ``EOFError`` at once instead of reading the protocol),
dies with the server, and joins its cgroup when the parent made one (``sandbox``).

The server must stay single-threaded and must not touch CUDA or run a torch op before forking:
a CUDA context or an OpenMP thread pool does not survive ``fork``. Only the replay child
initialises them.
"""
from __future__ import annotations

import json
import os
import sys

from torchmemlint.verify.sandbox import TOKEN_VARIABLE, Cgroup, ReplayProcesses, become_subreaper, die_with_parent


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
    become_subreaper()
    leftovers = ReplayProcesses(os.getpid(), os.environ.get(TOKEN_VARIABLE, ""))
    _say({"ready": True, "torch": torch.__version__, "python": sys.executable})
    for line in sys.stdin:
        spec = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _contain(spec)
            harness.child_main(spec)  # never returns
        _say({"pid": pid})
        _, status = os.waitpid(pid, 0)
        leftovers.kill()
        _reap()
        if os.WIFSIGNALED(status):
            _say({"pid": pid, "signal": os.WTERMSIG(status)})
        else:
            _say({"pid": pid, "exit": os.WEXITSTATUS(status)})
    os._exit(0)  # the parent closed stdin: done; tearing torch down would only take seconds


def _contain(spec: dict) -> None:
    """In the replay child, before the user's code: no stdin, death with the server, the cgroup."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    die_with_parent()
    if spec.get("cgroup"):
        try:
            Cgroup(spec["cgroup"]).join()
        except OSError:  # the watchdog in the parent still caps the replay
            pass


def _reap() -> None:
    """Collect the exit status of the killed processes the server adopted."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


if __name__ == "__main__":
    serve()
