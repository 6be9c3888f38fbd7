# Source: https://github.com/oxwhirl/pymarl/pull/73
# Report: the EpisodeRunner stored the agents' chosen actions in the replay buffer without detaching them, so the graph that produced each action stayed in memory (OOM over millions of steps).
# Shape: the action selector returns (actions, log-probabilities) computed with autograd on; the runner puts both in the episode batch, which goes into a buffer kept for the run.
# Expect: TML001 line 26
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
        episode_batch["log_probs"].append(log_probs)
    buffer.append(episode_batch)  # expect: TML001
print(len(buffer))
