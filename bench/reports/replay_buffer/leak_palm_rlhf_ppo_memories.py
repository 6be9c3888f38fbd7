# Source: https://github.com/lucidrains/PaLM-rlhf-pytorch/blob/main/palm_rlhf_pytorch/ppo.py
# Report: RLHF PPO trainer (one-edit mistake: detach dropped, .cpu() kept) collects one Memory per rollout step (sequence, masks, probs, reward, value) into a deque until update_timesteps, then learns and clears
# Shape: reward comes from a reward-model forward outside no_grad; the to_cpu_ lambda only calls .cpu(), which keeps the graph, so 5000 reward-model graphs pile up in memories before the periodic clear
# Expect: TML001 line 79
from collections import deque, namedtuple
from random import randrange

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

Memory = namedtuple("Memory", ["sequence", "prompt_mask", "mask", "action_prob", "action_log_prob", "reward", "value"])


def log_prob(prob, indices):
    return torch.log(prob.gather(-1, indices[..., None]).clamp(min=1e-20)).squeeze(-1)


def shift(t, value=0, amount=1, dim=-1):
    zeros = (0, 0) * (-dim - 1)
    return F.pad(t, (*zeros, amount, -amount), value=value)


class ActorCritic(nn.Module):
    def __init__(self, actor_lm, critic_lm, dim):
        super().__init__()
        self.actor_lm = actor_lm
        self.critic_lm = critic_lm
        self.value_head = nn.Linear(dim, 1)

    @torch.no_grad()
    def generate(self, state, max_seq_len, eos_token=None):
        actions = self.actor_lm.generate(max_seq_len, prompt=state, eos_token=eos_token)
        sequence = torch.cat((state, actions), dim=-1)
        prompt_mask = torch.arange(sequence.shape[-1], device=state.device) < state.shape[-1]
        logits, value = self.forward(sequence)
        return actions, sequence, prompt_mask[None], logits, value

    def forward(self, x):
        logits = self.actor_lm(x)
        embeds = self.critic_lm(x, return_only_embedding=True).mean(dim=1)
        return logits, self.value_head(embeds).squeeze(-1)


class RLHFTrainer:
    def __init__(self, actor_critic, reward_model, prompt_token_ids, pad_value=0, device="cuda"):
        self.actor_critic = actor_critic.to(device)
        self.reward_model = reward_model.to(device).eval()
        self.prompt_token_ids = prompt_token_ids.to(device)
        self.num_prompts = prompt_token_ids.shape[0]
        self.pad_value = pad_value
        self.device = device

    def learn(self, memories):
        raise NotImplementedError  # PPO epochs over the stacked memories

    def train(self, num_episodes=50000, max_timesteps=500, update_timesteps=5000, max_seq_len=2048):
        time = 0
        memories = deque([])
        for eps in range(num_episodes):
            for timestep in range(max_timesteps):
                time += 1
                state = self.prompt_token_ids[randrange(0, self.num_prompts)]
                state = state[state != self.pad_value]

                actions, sequence, prompt_mask, action_logits, value = self.actor_critic.generate(
                    rearrange(state, "n -> 1 n"), max_seq_len=max_seq_len
                )
                action_logits = shift(action_logits, amount=1, dim=-2)
                action_prob = action_logits.softmax(dim=-1)
                action_log_prob = log_prob(action_prob, sequence)[:, -actions.shape[-1]:]
                mask = torch.ones(sequence.shape, dtype=torch.bool, device=self.device)

                # reward from the supervised reward model
                reward = self.reward_model(sequence, prompt_mask=prompt_mask, mask=mask, sample=True)

                to_cpu_ = lambda t: rearrange(t.cpu(), "1 ... -> ...")
                memories.append(Memory(*map(to_cpu_, (  # expect: TML001
                    sequence, prompt_mask, mask, action_prob, action_log_prob, reward, value,
                ))))

                if time % update_timesteps == 0:
                    self.learn(memories)
                    memories.clear()
