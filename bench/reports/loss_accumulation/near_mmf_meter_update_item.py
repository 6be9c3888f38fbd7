# Source: https://github.com/facebookresearch/mmf/pull/560
# Report: MMF's update_meter put reduced_loss_dict (loss tensors with their graphs) straight into the dict handed to the training Meter, causing GPU and CPU OOMs; the fix converts each loss to a number with .item() first.
# Shape: fixed version (close variant: the total loss is converted too): every loss is turned into a Python float before it reaches the Meter, so the meter's deques only ever hold numbers.
# Expect: near-miss: must be silent
from collections import defaultdict, deque


class SmoothedValue:
    def __init__(self, window_size=20):
        self.deque = deque(maxlen=window_size)
        self.total = 0.0
        self.count = 0

    def update(self, value):
        self.deque.append(value)
        self.count += 1
        self.total += value

    @property
    def global_avg(self):
        return self.total / max(self.count, 1)


class Meter:
    def __init__(self):
        self.meters = defaultdict(SmoothedValue)

    def update(self, update_dict, batch_size=1):
        for k, v in update_dict.items():
            self.meters[k].update(v)


def update_meter(report, meter, loss_key="train/total_loss"):
    reduced_loss_dict = {k: v.mean() for k, v in report["losses"].items()}
    reduced_loss = sum(reduced_loss_dict.values())
    meter_update_dict = {loss_key: reduced_loss.item()}
    for key in reduced_loss_dict:
        meter_update_dict[key] = reduced_loss_dict[key].item()
    meter.update(meter_update_dict, report["batch_size"])


def run_training_loop(model, loader, optimizer, meter):
    for batch in loader:
        report = model(batch)
        loss = sum(v.mean() for v in report["losses"].values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        update_meter(report, meter)
