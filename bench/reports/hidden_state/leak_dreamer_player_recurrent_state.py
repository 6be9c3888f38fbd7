# Source: https://github.com/Eclectic-Sheep/sheeprl/issues/198
# Report: Issue #198: a user's own inference loop around the DreamerV3 player's get_actions() grows memory steadily (~0.1 GB per 50 steps); maintainers: the loop lacked torch.no_grad(), which fixed it.
# Shape: get_actions() rebuilds self.recurrent_state from its previous value (and self.actions/self.stochastic_state feed back in); called from a plain loop with grad enabled, each step's graph chains onto the last for the whole run (reset only re-seeds env, not the player).
# Expect: TML005 line 43
import gymnasium as gym
import torch
import torch.nn as nn


class TinyRSSM(nn.Module):
    def __init__(self, stoch=32, classes=32, hidden=512, embed=1024, act_dim=6):
        super().__init__()
        self.stoch, self.classes, self.hidden = stoch, classes, hidden
        self.recurrent_model = nn.GRUCell(stoch * classes + act_dim, hidden)
        self.repr_head = nn.Linear(hidden + embed, stoch * classes)

    def get_initial_states(self, shape):
        h = torch.zeros(*shape, self.hidden)
        z = torch.zeros(*shape, self.stoch, self.classes)
        return h, z

    def representation(self, h, embedded):
        logits = self.repr_head(torch.cat((h, embedded), -1)).view(*h.shape[:-1], self.stoch, self.classes)
        return logits, torch.softmax(logits, -1)


class Player(nn.Module):
    def __init__(self, encoder, rssm, actor, act_dim, num_envs=1, device="cuda"):
        super().__init__()
        self.encoder, self.rssm, self.actor = encoder, rssm, actor
        self.act_dim, self.num_envs, self.device = act_dim, num_envs, device

    @torch.no_grad()
    def init_states(self):
        self.actions = torch.zeros(1, self.num_envs, self.act_dim, device=self.device)
        h, z = self.rssm.get_initial_states((1, self.num_envs))
        self.recurrent_state = h.to(self.device)
        self.stochastic_state = z.reshape(1, self.num_envs, -1).to(self.device)

    def get_actions(self, obs, greedy=False):
        embedded = self.encoder(obs)
        x = torch.cat((self.stochastic_state, self.actions), -1)
        self.recurrent_state = self.rssm.recurrent_model(x.flatten(0, 1), self.recurrent_state.flatten(0, 1)).view_as(self.recurrent_state)  # expect: TML005
        _, z = self.rssm.representation(self.recurrent_state, embedded)
        self.stochastic_state = z.flatten(-2)
        logits = self.actor(torch.cat((self.stochastic_state, self.recurrent_state), -1))
        probs = torch.softmax(logits, -1)
        act = probs.argmax(-1) if greedy else torch.distributions.Categorical(probs=probs).sample()
        self.actions = nn.functional.one_hot(act, self.act_dim).float()
        return act


def play(player, env, n_steps=100_000, device="cuda", greedy=True):
    obs, _ = env.reset(seed=0)
    player.num_envs = 1
    player.init_states()
    cumulative = 0.0
    for _ in range(n_steps):
        torch_obs = torch.as_tensor(obs, dtype=torch.float32, device=device).view(1, 1, -1)
        action = player.get_actions(torch_obs, greedy)
        obs, reward, terminated, truncated, _ = env.step(int(action.item()))
        cumulative += reward
        if terminated or truncated:
            obs, _ = env.reset()
    return cumulative


if __name__ == "__main__":
    env = gym.make("Acrobot-v1")
    n_obs, n_act = env.observation_space.shape[0], env.action_space.n
    rssm = TinyRSSM(act_dim=n_act)
    player = Player(nn.Linear(n_obs, 1024), rssm, nn.Linear(32 * 32 + 512, n_act), n_act).to("cuda")
    print(play(player, env))
