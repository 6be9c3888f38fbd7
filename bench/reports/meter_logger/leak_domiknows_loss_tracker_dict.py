# Source: https://github.com/HLR/DomiKnowS/commit/5557bb3c5e773cbb381d870d216dacc39bf26ecf
# Report: commit "Fix MetricTracker to detach tensors before appending to lists and dicts to prevent autograd graph leaks": the loss tracker kept every step's grad-attached loss, leaking into OOM on long training runs
# Shape: the model's loss is a MetricTracker module that outlives the epoch; each per-step forward calls it through tracker[key](...), and __call_dict__ appends the raw loss tensor to self.dict[key]
# Expect: TML001 lines 32, 37
from collections import defaultdict

import torch


class NBCrossEntropyLoss(torch.nn.CrossEntropyLoss):
    def forward(self, input, target, *args, **kwargs):
        input = input.view(-1, input.shape[-1])
        target = target.view(-1).to(dtype=torch.long, device=input.device)
        return super().forward(input, target)


class MetricTracker(torch.nn.Module):
    """Keeps every value the wrapped metric returns, per key, until reset()."""

    def __init__(self, metric):
        super().__init__()
        self.metric = metric
        self.list = []
        self.dict = defaultdict(list)

    def reset(self):
        self.list.clear()
        self.dict.clear()

    def __call__(self, *args, **kwargs):
        value = self.metric(*args, **kwargs)
        self.list.append(value)  # expect: TML001
        return value

    def __call_dict__(self, keys, *args, **kwargs):
        value = self.metric(*args, **kwargs)
        self.dict[keys].append(value)  # expect: TML001
        return value

    def __getitem__(self, keys):
        return lambda *args, **kwargs: self.__call_dict__(keys, *args, **kwargs)

    def value(self, reset=False):
        value = {k: torch.stack(v).mean().item() for k, v in self.dict.items()}
        if reset:
            self.reset()
        return value


class PoiModel(torch.nn.Module):
    def __init__(self, encoder, heads, loss=None):
        super().__init__()
        self.encoder = encoder
        self.heads = torch.nn.ModuleDict(heads)
        self.loss = loss

    def reset(self):
        if isinstance(self.loss, MetricTracker):
            self.loss.reset()

    def poi_loss(self, name, logits, labels):
        if not self.loss:
            return 0
        selfLoss = self.loss[name]
        local_loss = selfLoss(logits, labels)
        if local_loss != local_loss:
            raise Exception("Calculated local_loss is nan")
        return local_loss

    def forward(self, data_item):
        features = self.encoder(data_item["x"])
        loss = 0
        for name, head in self.heads.items():
            logits = head(features)
            local_loss = self.poi_loss(name, logits, data_item[name])
            if local_loss is not None:
                loss += local_loss
        return loss


class LearningBasedProgram:
    def __init__(self, model, opt_factory, device="cuda"):
        self.model = model.to(device)
        self.opt = opt_factory(self.model.parameters())
        self.device = device

    def train_epoch(self, dataset):
        self.model.train()
        self.model.reset()
        for data_item in dataset:
            data_item = {k: v.to(self.device) for k, v in data_item.items()}
            loss = self.model(data_item)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            yield loss.item()

    def train(self, training_set, epochs=10):
        for epoch in range(epochs):
            losses = list(self.train_epoch(training_set))
            print(epoch, sum(losses) / max(len(losses), 1), self.model.loss.value())


def build_program(encoder, heads):
    model = PoiModel(encoder, heads, loss=MetricTracker(NBCrossEntropyLoss()))
    return LearningBasedProgram(model, lambda params: torch.optim.Adam(params, lr=1e-3))
