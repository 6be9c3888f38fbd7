"""One rank of a replay under torchrun (``python -m torch.distributed.run ... -m
torchmemlint.verify.rank SPEC.json``): the replay child of ``harness`` with this rank's own
results and output files, on its own GPU (``LOCAL_RANK``) when it replays on CUDA.

A rank that ended (its last record written) waits for every other rank to end before its
process exits, as ranks of a real job stay up until the last collective: a rank stuck in a
collective that another rank never reaches then stays stuck until the launcher's timeout,
with NCCL as with gloo (whose collectives would otherwise fail as soon as a peer exits). A
Python stack of the main thread goes to the rank's stderr file on SIGUSR1: the launcher asks
for it before it ends a replay that timed out, to name the line where each rank waits.
"""
from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import time

_POLL_S = 0.05
# The fields of the spec that are templates with a ``{rank}``.
PER_RANK_FILES = ("results", "stdout", "stderr")


def main(spec_path: str) -> None:
    with open(spec_path, encoding="utf-8") as file:
        spec = json.load(file)
    rank = int(os.environ["RANK"])
    spec.update({name: spec[name].format(rank=rank) for name in PER_RANK_FILES})
    # fd 2, which child_main points at the rank's stderr file
    faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=False)
    if spec["device"] == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    import torch
    # What a distributed training script imports, imported before the replay's heap meter
    # starts tracing: modules imported while it traces make every snapshot slow.
    import torch.distributed
    import torch.nn.parallel
    import torch.utils.data.distributed  # noqa: F401

    from torchmemlint.verify import harness
    from torchmemlint.verify.meters import warm_up

    warm_up()
    if spec["device"] != "cpu" and torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    ended = os.path.join(os.path.dirname(spec["results"]), "ended.{rank}")
    harness.child_main(spec, new_session=False,
                       before_exit=lambda: _wait_for_every_rank(ended, rank, int(os.environ["WORLD_SIZE"])))


def _wait_for_every_rank(marker: str, rank: int, world_size: int) -> None:
    """Mark this rank ended, then wait until every rank has (or the launcher ends the wait)."""
    open(marker.format(rank=rank), "w").close()
    while not all(os.path.exists(marker.format(rank=other)) for other in range(world_size)):
        time.sleep(_POLL_S)


if __name__ == "__main__":
    main(sys.argv[1])
