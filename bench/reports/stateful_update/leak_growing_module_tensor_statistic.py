# Source: https://github.com/growingnet/gromo/issues/137
# Report: TensorStatistic updates (S = X^T X over batches) ran with grad enabled, so each batch's addition stayed in the autograd graph and allocated memory grew with every batch.
# Shape: the statistic object is created once on the module; update() (called every batch) does self._tensor += update where update comes from the module's stored input, which is graph-attached.
# Expect: TML001 line 35
import torch
from torch import nn


class TensorStatistic:
    """Average of a tensor over many batches, updated once per batch."""

    def __init__(self, shape, update_function, name=None):
        self._shape = shape
        self._update_function = update_function
        self.name = name or "TensorStatistic"
        self._tensor = None
        self.samples = 0
        self.updated = True

    def reset(self):
        self._tensor = None
        self.samples = 0

    def __call__(self):
        if self.samples == 0:
            raise ValueError(f"{self.name} has not been computed.")
        return self._tensor / self.samples

    def update(self, **kwargs):
        if self.updated is False:
            update, nb_sample = self._update_function(**kwargs)
            if self._tensor is None:
                self._tensor = update
            else:
                self._tensor += update  # expect: TML001
            self.samples += nb_sample
            self.updated = True


class LinearGrowingModule(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.layer = nn.Linear(in_features, out_features)
        self.store_input = False
        self.stored_input = None
        self.tensor_s = TensorStatistic(
            (in_features, in_features), update_function=self.compute_s_update, name="S"
        )

    def compute_s_update(self):
        x = self.stored_input
        return torch.einsum("bi,bj->ij", x, x), x.size(0)

    def forward(self, x):
        if self.store_input:
            self.stored_input = x
        return self.layer(x)


def gather_statistics(backbone, growing, head, loader, criterion, device):
    growing.store_input = True
    growing.tensor_s.reset()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        hidden = backbone(x)
        out = head(growing(hidden))
        loss = criterion(out, y)
        loss.backward()
        growing.tensor_s.updated = False
        growing.tensor_s.update()
    growing.store_input = False
    return growing.tensor_s()
