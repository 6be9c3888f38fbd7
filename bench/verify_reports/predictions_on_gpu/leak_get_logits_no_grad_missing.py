# Source: https://github.com/facebookresearch/pytext/pull/650
# Report: workflow.get_logits() aggregated every batch's logits and ran out of memory; the fix writes them out as they come and calls forward under torch.no_grad().
# Shape: forward returns a tuple; its first element is kept for the whole dataset while autograd still records (no no_grad, no backward).
# Expect: TML001 line 28; TML003 line 27
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
    logits, _ = model(torch.randn(32, 40, device=device))  # expect: TML003
    all_logits.append(logits)  # expect: TML001
print(torch.cat(all_logits).shape)
