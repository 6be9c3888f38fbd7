# Source: https://github.com/facebookresearch/ParlAI/pull/2487
# Report: models that barely fit on the GPU went OOM when the final validation model was loaded: an lru_cache on a world method kept the world, so its agent and model, alive after training.
# Shape: a batch world that owns the agent (and so the CUDA model) caches num_examples with functools.lru_cache on the method; the cache holds self after the training world is dropped.
# Expect: TML012 line 18
from functools import lru_cache


class BatchWorld:
    def __init__(self, opt, agent, inner_world):
        self.opt = opt
        self.agent = agent
        self.inner_world = inner_world

    def parley(self):
        batch = self.inner_world.next_batch()
        self.agent.batch_act(batch)

    @lru_cache(maxsize=1)  # expect: TML012
    def num_examples(self):
        return self.inner_world.num_examples()


def train_then_validate(opt, create_agent, create_world, load_best):
    agent = create_agent(opt)
    world = BatchWorld(opt, agent, create_world(opt))
    for _ in range(world.num_examples() // opt["batchsize"]):
        world.parley()
    del world, agent
    return load_best(opt)
