# Source: https://github.com/GestaltCogTeam/BasicTS/issues/292
# Report: test() of the time-series runner appends every batch's prediction and target to lists on the GPU and concatenates them at the end; with 720-step horizons and >=300 nodes GPU memory climbs until OOM
# Shape: runner.test() under @torch.no_grad() appends forward_return[0] / forward_return[1] (CUDA tensors) to lists that live for the whole test loop
# Expect: TML004 line 45; TML004 line 46
import torch
import torch.nn as nn


class TSFRunner:
    def __init__(self, model: nn.Module, test_loader, scaler, metrics, device="cuda"):
        self.model = model.to(device)
        self.test_data_loader = test_loader
        self.scaler = scaler
        self.metrics = metrics
        self.device = device
        self.logger_values = {}

    def to_running_device(self, t):
        return t.to(self.device, non_blocking=True)

    def forward(self, data, epoch=None, iter_num=None, train=False):
        history, future = data["inputs"], data["target"]
        history = self.to_running_device(history)
        future = self.to_running_device(future)
        prediction = self.model(history)
        prediction = self.scaler.inverse_transform(prediction)
        future = self.scaler.inverse_transform(future)
        return prediction, future, history

    def update_epoch_meter(self, name, value):
        self.logger_values[name] = float(value)

    @torch.no_grad()
    def test(self):
        """Evaluate the model on the whole test set.

        Metrics are computed once on the concatenated horizon so every
        sample is weighted equally.
        """
        self.model.eval()
        prediction = []
        real_value = []
        for _, data in enumerate(self.test_data_loader):
            forward_return = self.forward(data, epoch=None, iter_num=None, train=False)
            prediction.append(forward_return[0])  # expect: TML004
            real_value.append(forward_return[1])  # expect: TML004
        prediction = torch.cat(prediction, dim=0)
        real_value = torch.cat(real_value, dim=0)
        for i in range(prediction.shape[1]):
            pred = prediction[:, i, :, :]
            real = real_value[:, i, :, :]
            for name, fn in self.metrics.items():
                self.update_epoch_meter(f"test_{name}_h{i + 1}", fn(pred, real))
        for name, fn in self.metrics.items():
            self.update_epoch_meter(f"test_{name}", fn(prediction, real_value))
        return self.logger_values
