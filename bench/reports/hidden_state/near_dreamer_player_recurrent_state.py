# Source: https://github.com/Eclectic-Sheep/sheeprl/blob/33b636681fd8b5340b284f2528db8821ab8dcd0b/sheeprl/algos/dreamer_v3/agent.py
# Report: DreamerV3 player keeps the RSSM recurrent/stochastic state and last action on self and updates them in get_actions(); get_actions itself has no no_grad, the repository's test() loop is decorated with @torch.no_grad().
# Shape: self.recurrent_state is rebuilt from its previous value every env step, but every call comes from the @torch.no_grad() test loop (init_states is no_grad too), so no graph links one step to the next.
# Expect: near-miss: must be silent
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
        self.recurrent_state = self.rssm.recurrent_model(x.flatten(0, 1), self.recurrent_state.flatten(0, 1)).view_as(self.recurrent_state)
        _, z = self.rssm.representation(self.recurrent_state, embedded)
        self.stochastic_state = z.flatten(-2)
        logits = self.actor(torch.cat((self.stochastic_state, self.recurrent_state), -1))
        probs = torch.softmax(logits, -1)
        act = probs.argmax(-1) if greedy else torch.distributions.Categorical(probs=probs).sample()
        self.actions = nn.functional.one_hot(act, self.act_dim).float()
        return act


@torch.no_grad()
def test(player, env, device="cuda", greedy=True):
    obs, _ = env.reset(seed=0)
    player.num_envs = 1
    player.init_states()
    done, cumulative = False, 0.0
    while not done:
        torch_obs = torch.as_tensor(obs, dtype=torch.float32, device=device).view(1, 1, -1)
        action = player.get_actions(torch_obs, greedy)
        obs, reward, terminated, truncated, _ = env.step(int(action.item()))
        done = terminated or truncated
        cumulative += reward
    return cumulative


if __name__ == "__main__":
    env = gym.make("Acrobot-v1")
    n_obs, n_act = env.observation_space.shape[0], env.action_space.n
    rssm = TinyRSSM(act_dim=n_act)
    player = Player(nn.Linear(n_obs, 1024), rssm, nn.Linear(32 * 32 + 512, n_act), n_act).to("cuda")
    print(test(player, env))
