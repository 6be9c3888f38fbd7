# Source: https://github.com/huggingface/transformers/pull/7276
# Report: the Trainer's aggregated training loss tr_loss was a tensor that accumulated history across the loop, about 120 GB of CPU memory over 240,000 steps.
# Shape: the step helper returns the model's output object; the loop adds its .loss attribute to the running total.
# Expect: TML001 line 45
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
    tr_loss += outputs.loss  # expect: TML001
print(tr_loss.item() / 24)
