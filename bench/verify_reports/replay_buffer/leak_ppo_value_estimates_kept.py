# Source: https://github.com/ray-project/ray/issues/6962
# Report: PPO with torch used up all RAM (and leaked GPU memory); adding torch.no_grad() to the policy's value() function fixed it.
# Shape: value() is a policy method called for every step of the rollout; its graph-carrying result goes into the sample batch that lives until the update.
# Expect: TML001 line 25
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class TorchPolicy:
    def __init__(self):
        self.value_net = nn.Sequential(nn.Linear(6, 64), nn.Tanh(), nn.Linear(64, 1)).to(device)

    def value(self, obs):
        return self.value_net(obs).squeeze(-1)


policy = TorchPolicy()
batch = {"obs": [], "vf_preds": []}
for t in range(24):
    obs = torch.randn(8, 6, device=device)
    batch["obs"].append(obs)
    batch["vf_preds"].append(policy.value(obs))  # expect: TML001
print(torch.stack(batch["vf_preds"]).mean().item())
