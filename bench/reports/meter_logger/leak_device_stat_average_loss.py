# Source: https://github.com/NVIDIA/DeepLearningExamples/issues/1102
# Report: BERT pretraining host RAM kept growing; the loss was added in place into a persistent on-device stat tensor, and detaching it before add_ fixed it
# Shape: a stats helper owns device tensors keyed by name; the training loop does stats.device_stat("average_loss").add_(loss) with the attached loss
# Expect: TML001 line 53
import torch


class TrainingStats:
    """Keeps per-interval statistics on the device to avoid a sync every step."""

    def __init__(self, device):
        self.device = device
        self._device_stats = {}
        self._host_stats = {}

    def device_stat(self, name):
        if name not in self._device_stats:
            self._device_stats[name] = torch.zeros((), device=self.device)
        return self._device_stats[name]

    def host_stat(self, name):
        return self._host_stats.setdefault(name, 0.0)

    def host_stat_add(self, name, value):
        self._host_stats[name] = self.host_stat(name) + value

    def flush(self):
        out = {k: v.item() for k, v in self._device_stats.items()}
        for v in self._device_stats.values():
            v.zero_()
        out.update(self._host_stats)
        self._host_stats.clear()
        return out


def take_optimizer_step(model, optimizer, scheduler):
    optimizer.step()
    scheduler.step()
    for p in model.parameters():
        p.grad = None


def pretrain(model, optimizer, scheduler, loader, device, accumulation_steps=8, log_freq=100):
    model.train()
    stats = TrainingStats(device)
    for step, batch in enumerate(loader):
        batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
        out = model(**batch)
        loss = out.loss / accumulation_steps
        loss.backward()

        # running sum of the (scaled) loss, summed on the GPU, read once per log interval
        stats.device_stat("average_loss").add_(loss)  # expect: TML001
        stats.host_stat_add("samples", batch["input_ids"].size(0))

        if (step + 1) % accumulation_steps == 0:
            take_optimizer_step(model, optimizer, scheduler)

        if (step + 1) % (log_freq * accumulation_steps) == 0:
            logged = stats.flush()
            print(f"step {step + 1}: loss {logged['average_loss'] / log_freq:.4f}")
