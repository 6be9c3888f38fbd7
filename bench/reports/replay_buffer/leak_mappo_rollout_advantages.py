# Source: https://github.com/hijkzzz/pymarl2/issues/46
# Report: MAPPO learner computed advantages from the critic once, outside the mini-epoch loop, and reused them in every epoch; the second epoch hit "backward through the graph a second time" and the thread weighed detach() against backward(retain_graph=True).
# Shape: the retain_graph=True option: the graph-attached advantages built from the rollout outlive each mini-epoch and every epoch's backward keeps the graph alive.
# Expect: TML006 line 57
import torch as th
from torch.optim import Adam


class MAPPOLearner:
    def __init__(self, mac, critic, args):
        self.mac = mac
        self.critic = critic
        self.args = args
        self.params = list(mac.parameters()) + list(critic.parameters())
        self.optimiser = Adam(params=self.params, lr=args.lr)

    def _compute_advantages(self, batch, rewards, mask):
        values = self.critic(batch)[:, :-1].squeeze(3)
        target_vals = self.critic(batch)[:, 1:].squeeze(3)
        returns = rewards + self.args.gamma * target_vals * (1 - batch["terminated"][:, :-1])
        advantages = (returns - values) * mask
        critic_loss = ((returns.detach() - values) ** 2 * mask).sum() / mask.sum()
        return advantages, critic_loss

    def _policy_log_probs(self, batch, actions):
        mac_out = []
        self.mac.init_hidden(batch.batch_size)
        for t in range(batch.max_seq_length - 1):
            mac_out.append(self.mac.forward(batch, t=t))
        pi = th.stack(mac_out, dim=1)
        pi_taken = th.gather(pi, dim=3, index=actions).squeeze(3)
        return th.log(pi_taken + 1e-10), pi

    def train(self, batch, t_env, episode_num):
        rewards = batch["reward"][:, :-1]
        actions = batch["actions"][:, :-1]
        mask = batch["filled"][:, :-1].float()
        mask[:, 1:] = mask[:, 1:] * (1 - batch["terminated"][:, :-1])
        mask = mask.repeat(1, 1, self.args.n_agents)

        with th.no_grad():
            old_log_pi, _ = self._policy_log_probs(batch, actions)

        # computed once per rollout, reused by every mini epoch below
        advantages, critic_loss = self._compute_advantages(batch, rewards, mask)

        for _ in range(self.args.mini_epochs):
            log_pi, pi = self._policy_log_probs(batch, actions)
            ratios = th.exp(log_pi - old_log_pi)
            surr1 = ratios * advantages
            surr2 = th.clamp(ratios, 1 - self.args.eps_clip, 1 + self.args.eps_clip) * advantages
            entropy = -th.sum(pi * th.log(pi + 1e-10), dim=-1)
            pg_loss = -((th.min(surr1, surr2) + self.args.entropy_coef * entropy) * mask).sum() / mask.sum()
            loss = pg_loss + self.args.critic_coef * critic_loss

            self.optimiser.zero_grad()
            loss.backward(retain_graph=True)  # expect: TML006
            th.nn.utils.clip_grad_norm_(self.params, self.args.grad_norm_clip)
            self.optimiser.step()

        return {"pg_loss": pg_loss.item(), "critic_loss": critic_loss.item()}
