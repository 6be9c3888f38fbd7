# Source: https://github.com/s154674/deeplearning/blob/868b6e1236f61e5ef903ad0d3d999abc232e0835/v7/make_video.py
# Report: safeguard removed from v7/make_video.py: Policy.act ran its forward under `with torch.no_grad():`; without it the evaluation rollout after policy.eval() records a graph for every step
# Shape: policy.act(obs) is called in the module-level evaluation loop after policy.eval(); act runs encoder, policy and value heads with autograd on and returns .cpu() copies that still carry the graph
# Expect: TML003 line 91

import imageio
import torch
import torch.nn as nn
from utils import make_env, orthogonal_init

num_levels = 200
in_channels = 3
feature_dim = 64
env_name = 'starpilot'
make_env_kwargs = {'num_levels': num_levels, 'env_name': env_name}
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


class IMPALAEncoder(nn.Module):
  def __init__(self, in_channels, feature_dim):
    super().__init__()
    self.layers = nn.Sequential(
        nn.Conv2d(in_channels=in_channels, out_channels=32, kernel_size=3, stride=1),
        nn.MaxPool2d(3, 2)
    )
    self.residual = nn.Sequential(
        nn.ReLU(),
        nn.Conv2d(in_channels=32, out_channels=64, kernel_size=3, stride=1, padding=1),
        nn.ReLU(),
        nn.Conv2d(in_channels=64, out_channels=32, kernel_size=3, stride=1, padding=1),
    )
    self.rest = nn.Sequential(
        Flatten(),
        nn.ReLU(),
        nn.Linear(in_features=28800, out_features=feature_dim),
        nn.ReLU(),
    )
    self.apply(orthogonal_init)

  def forward(self, x):
    x = self.layers(x)
    x += self.residual(x)
    x += self.residual(x)
    return self.rest(x)


class Policy(nn.Module):
  def __init__(self, encoder, feature_dim, num_actions):
    super().__init__()
    self.encoder = encoder
    self.policy = orthogonal_init(nn.Linear(feature_dim, num_actions), gain=.01)
    self.value = orthogonal_init(nn.Linear(feature_dim, 1), gain=1.)

  def act(self, x):
    x = x.to(device).contiguous()
    dist, value = self.forward(x)
    action = dist.sample()
    log_prob = dist.log_prob(action)
    return action.cpu(), log_prob.cpu(), value.cpu()

  def forward(self, x):
    x = self.encoder(x)
    logits = self.policy(x)
    value = self.value(x).squeeze(1)
    dist = torch.distributions.Categorical(logits=logits)
    return dist, value


# Make evaluation environment
eval_env = make_env(**make_env_kwargs, start_level=300, use_backgrounds=False, n_envs=1)
obs = eval_env.reset()

frames = []
total_reward = []

encoder = IMPALAEncoder(in_channels, feature_dim)
policy = Policy(encoder, feature_dim, eval_env.action_space.n).to(device)
state_dict = torch.load("checkpoints/starpilot_nosta_impala_no_re_500_checkpoint.pt", map_location=device)
policy.load_state_dict(state_dict)

# Evaluate policy
policy.eval()
count = 0
while count < 101:
  # Use policy
  action, log_prob, value = policy.act(obs)  # expect: TML003

  # Take step in environment
  obs, reward, done, info = eval_env.step(action)
  if done.any():
    count += 1
    print(f'done {count}')
  total_reward.append(torch.Tensor(reward))

  # Render environment and store
  frame = (torch.Tensor(eval_env.render(mode='rgb_array')) * 255.).byte()
  frames.append(frame)

# Calculate average return
total_reward2 = torch.stack(total_reward).sum(0).mean(0)
print('Average return:', total_reward2)

# Save frames as video
frames = torch.stack(frames)
imageio.mimsave('vid2nd.mp4', frames, fps=25)
