# Source: https://github.com/facebookresearch/pytext/pull/650
# Report: the fix calls forward under torch.no_grad() and writes the logits out as they come.
# Shape: the same loop under no_grad, each batch's logits moved to the host.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class DocModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(40, 64), nn.ReLU())
        self.decoder = nn.Linear(64, 6)

    def forward(self, x):
        hidden = self.encoder(x)
        return self.decoder(hidden), hidden


model = DocModel().to(device)
model.eval()
all_logits = []
for batch in range(24):
    with torch.no_grad():
        logits, _ = model(torch.randn(32, 40, device=device))
    all_logits.append(logits.cpu())
print(torch.cat(all_logits).shape)
