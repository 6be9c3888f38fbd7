# Source: https://github.com/huggingface/transformers/pull/7276
# Report: the fix accumulates the detached loss.
# Shape: the same loop; tr_loss adds outputs.loss.detach().
# Expect: near-miss: must be silent
from dataclasses import dataclass

import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


@dataclass
class ModelOutput:
    loss: torch.Tensor
    logits: torch.Tensor


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 3))

    def forward(self, x, labels):
        logits = self.net(x)
        return ModelOutput(nn.functional.cross_entropy(logits, labels), logits)


model = Classifier().to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)


def training_step(x, labels):
    outputs = model(x, labels)
    outputs.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return outputs


tr_loss = torch.tensor(0.0, device=device)
for step in range(24):
    outputs = training_step(torch.randn(16, 32, device=device), torch.randint(0, 3, (16,), device=device))
    tr_loss += outputs.loss.detach()
print(tr_loss.item() / 24)
