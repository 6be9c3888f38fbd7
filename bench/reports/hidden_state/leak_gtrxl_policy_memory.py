# Source: https://github.com/dhruvramani/Transformers-RL/blob/master/layers.py
# Report: GTrXL policy for PPO with update_memory() building the segment memory without no_grad/detach (to 'let gradients flow through memory'): the policy keeps it on self.memory and feeds it back on the next call
# Shape: self.memory is read as the transformer's input and overwritten from its output in every forward (a per-step method); the slices are graph-attached, so each minibatch's graph links to the previous one
# Expect: TML005 line 65
import numpy as np
import torch
from torch.distributions.normal import Normal


class MemoryLayer(torch.nn.Module):
    def __init__(self, d_input, n_heads):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(d_input, n_heads)
        self.ff = torch.nn.Sequential(torch.nn.Linear(d_input, 64), torch.nn.ReLU(), torch.nn.Linear(64, d_input))
        self.norm = torch.nn.LayerNorm(d_input)

    def forward(self, x, mem):
        ctx = torch.cat([mem, x], dim=0)
        y = x + self.attn(self.norm(x), self.norm(ctx), self.norm(ctx))[0]
        return y + self.ff(self.norm(y))


class StableTransformerXL(torch.nn.Module):
    def __init__(self, d_input, n_layers, n_heads, mem_len=20):
        super().__init__()
        self.n_layers, self.d_input, self.mem_len = n_layers, d_input, mem_len
        self.layers = torch.nn.ModuleList([MemoryLayer(d_input, n_heads) for _ in range(n_layers)])

    def init_memory(self, batch_size, device):
        return [torch.zeros(self.mem_len, batch_size, self.d_input, device=device) for _ in range(self.n_layers + 1)]

    def update_memory(self, previous_memory, hidden_states):
        mem_len, seq_len = previous_memory[0].size(0), hidden_states[0].size(0)
        new_memory = []
        end_idx = mem_len + seq_len
        beg_idx = max(0, end_idx - mem_len)
        for m, h in zip(previous_memory, hidden_states):
            cat = torch.cat([m, h], dim=0)
            new_memory.append(cat[beg_idx:end_idx])
        return new_memory

    def forward(self, inputs, memory=None):
        if memory is None:
            memory = self.init_memory(inputs.size(1), inputs.device)
        hidden_states = [inputs]
        layer_out = inputs
        for mem, layer in zip(memory, self.layers):
            layer_out = layer(layer_out, mem)
            hidden_states.append(layer_out)
        new_memory = self.update_memory(memory, hidden_states)
        return {"logits": layer_out, "memory": new_memory}


class TransformerGaussianPolicy(torch.nn.Module):
    def __init__(self, state_dim, act_dim, n_layers=4, n_heads=4):
        super().__init__()
        self.transformer = StableTransformerXL(state_dim, n_layers, n_heads)
        self.memory = None
        self.head_value = torch.nn.Linear(state_dim, 1)
        self.head_mean = torch.nn.Linear(state_dim, act_dim)
        self.log_std = torch.nn.Parameter(torch.as_tensor(-0.5 * np.ones(act_dim, dtype=np.float32)))

    def forward(self, state, action=None):
        out = self.transformer(state, self.memory)
        trans_state, self.memory = out["logits"], out["memory"]  # expect: TML005
        policy = Normal(torch.tanh(self.head_mean(trans_state)), torch.exp(self.log_std))
        logp_a = policy.log_prob(action).sum(-1) if action is not None else None
        return policy, logp_a, self.head_value(trans_state)


def ppo_update(policy, optimizer, batches, clip=0.2, epochs=4):
    for _ in range(epochs):
        for states, actions, old_logp, advantages, returns in batches:
            _, logp, values = policy(states, actions)
            ratio = torch.exp(logp - old_logp)
            clipped = torch.clamp(ratio, 1 - clip, 1 + clip) * advantages
            loss = -torch.min(ratio * advantages, clipped).mean() + ((values.squeeze(-1) - returns) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    policy = TransformerGaussianPolicy(state_dim=8, act_dim=4)
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    data = [(torch.randn(20, 5, 8), torch.randn(20, 5, 4), torch.randn(20, 5), torch.randn(20, 5), torch.randn(20, 5))
            for _ in range(16)]
    ppo_update(policy, opt, data)
