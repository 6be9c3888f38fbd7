# Source: https://github.com/ray-project/ray/issues/6962
# Report: adding torch.no_grad() to value() fixed it.
# Shape: the same policy; value() runs under torch.no_grad().
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class TorchPolicy:
    def __init__(self):
        self.value_net = nn.Sequential(nn.Linear(6, 64), nn.Tanh(), nn.Linear(64, 1)).to(device)

    @torch.no_grad()
    def value(self, obs):
        return self.value_net(obs).squeeze(-1)


policy = TorchPolicy()
batch = {"obs": [], "vf_preds": []}
for t in range(24):
    obs = torch.randn(8, 6, device=device)
    batch["obs"].append(obs)
    batch["vf_preds"].append(policy.value(obs))
print(torch.stack(batch["vf_preds"]).mean().item())
