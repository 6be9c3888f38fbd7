# Source: https://github.com/oxwhirl/pymarl/pull/73
# Report: the fix detaches what goes into the buffer.
# Shape: the same runner stores detached log-probabilities.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
agent = nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 5)).to(device)


def select_actions(observations):
    dist = torch.distributions.Categorical(logits=agent(observations))
    actions = dist.sample()
    return actions, dist.log_prob(actions)


buffer = []
for episode in range(24):
    episode_batch = {"actions": [], "log_probs": []}
    for t in range(4):
        actions, log_probs = select_actions(torch.randn(3, 10, device=device))
        episode_batch["actions"].append(actions)
        episode_batch["log_probs"].append(log_probs.detach())
    buffer.append(episode_batch)
print(len(buffer))
