# Source: https://github.com/facebookresearch/ParlAI/pull/2487
# Report: the merged fix caches the count manually on the world instead of through lru_cache.
# Shape: same batch world owning the agent; num_examples memoises its result in an attribute of the instance, which dies with the world.
# Expect: near-miss: must be silent
class BatchWorld:
    def __init__(self, opt, agent, inner_world):
        self.opt = opt
        self.agent = agent
        self.inner_world = inner_world

    def parley(self):
        batch = self.inner_world.next_batch()
        self.agent.batch_act(batch)

    def num_examples(self):
        if not hasattr(self, "_num_examples"):
            self._num_examples = self.inner_world.num_examples()
        return self._num_examples


def train_then_validate(opt, create_agent, create_world, load_best):
    agent = create_agent(opt)
    world = BatchWorld(opt, agent, create_world(opt))
    for _ in range(world.num_examples() // opt["batchsize"]):
        world.parley()
    del world, agent
    return load_best(opt)
