# Source: https://github.com/wenet-e2e/wekws/pull/73
# Report: in the keyword-spotting training executor, optimizer.step() was called without optimizer.zero_grad(); the fix adds the reset above loss.backward().
# Shape: an executor's train method runs forward, backward, gradient clipping and step per batch, and never resets the gradients.
# Expect: TML002 line 20
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class Executor:
    def train(self, model, optimizer, batches, clip=5.0):
        model.train()
        for feats, target in batches:
            logits = model(feats.to(device)).max(dim=1).values
            loss = nn.functional.binary_cross_entropy_with_logits(logits.squeeze(-1), target.to(device))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()  # expect: TML002
        return loss.item()


model = nn.Sequential(nn.Linear(40, 64), nn.ReLU(), nn.Linear(64, 1)).to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.randn(8, 20, 40), torch.randint(0, 2, (8,)).float()) for _ in range(24)]
print(Executor().train(model, optimizer, batches))
