# Source: https://github.com/amjltc295/pytorch-golden-template/pull/64
# Report: the template's metric objects were updated every training batch with the live model_output; a metric update not run under no_grad leaked GPU memory, fixed by wrapping metric.update in torch.no_grad() in _update_all_metrics
# Shape: the fix: the worker calls metric.update() inside torch.no_grad(), so the PSNR sum kept on the metric carries no graph
# Expect: near-miss: must be silent
from abc import abstractmethod

import torch


class BaseMetric(torch.nn.Module):
    def __init__(self, output_key, target_key, nickname):
        super().__init__()
        self.output_key = output_key
        self.target_key = target_key
        self.nickname = nickname

    @abstractmethod
    def clear(self): ...

    @abstractmethod
    def update(self, data, output): ...


class PSNR(BaseMetric):
    def clear(self):
        self.total_psnr = 0.0
        self.total_number = 0

    def update(self, data, output):
        out = output[self.output_key].clamp(-1, 1)
        target = data[self.target_key]
        mse = ((out - target) ** 2).flatten(1).mean(1)
        psnr = 10 * torch.log10(4.0 / mse)
        self.total_psnr += psnr.sum()
        self.total_number += len(target)
        return psnr.mean()

    def finalize(self):
        return float(self.total_psnr / max(self.total_number, 1))


class TrainingWorker:
    def __init__(self, model, loss_fn, optimizer, data_loader, evaluation_metrics, writer, device):
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.data_loader, self.evaluation_metrics = data_loader, evaluation_metrics
        self.writer, self.device = writer, device

    def _update_all_metrics(self, data_input, model_output, write=True):
        for metric in self.evaluation_metrics:
            with torch.no_grad():
                value = metric.update(data_input, model_output)
                if write and value is not None:
                    self.writer.add_scalar(metric.nickname, value)

    def run(self, epoch):
        self.model.train()
        for metric in self.evaluation_metrics:
            metric.clear()
        total_loss = 0.0
        for batch_idx, data in enumerate(self.data_loader):
            data = {k: v.to(self.device) for k, v in data.items()}
            model_output = self.model(data)
            loss = self.loss_fn(data, model_output)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total_loss += loss.item()
            self._update_all_metrics(data, model_output)
        return {"loss": total_loss / len(self.data_loader),
                **{m.nickname: m.finalize() for m in self.evaluation_metrics}}
