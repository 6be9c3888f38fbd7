# Modelled on: https://discuss.pytorch.org/t/control-gpu-memory-cache/175356/2
# Report: calling empty_cache can help fragmentation "but it does slow down your iterations".
from torch.cuda import empty_cache


class Evaluator:
    def __init__(self, model):
        self.model = model

    def run(self, loader):
        import torch

        scores = []
        with torch.no_grad():
            for batch in loader:
                scores.append(self.model(batch.cuda()).mean().item())
                empty_cache()  # expect: TML009
        return sum(scores) / len(scores)
