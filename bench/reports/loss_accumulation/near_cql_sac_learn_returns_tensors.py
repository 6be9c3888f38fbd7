# Source: https://github.com/BY571/CQL/blob/047ed97abedf61a03c29b44f976883586194fdfd/CQL-SAC/agent.py
# Report: audited correct idiom: CQLSAC.learn() ends with `return actor_loss.item(), alpha_loss.item(), critic1_loss.item(), ...` and train_offline.py logs those floats to wandb once per epoch
# Shape: same learn()/offline loop as the leak, but every value packed in the returned dict goes through .item(), so the per-epoch totals are Python floats
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_


class CQLSAC(torch.nn.Module):
    def __init__(self, actor, critic1, critic2, actor_opt, critic1_opt, critic2_opt, device):
        super().__init__()
        self.actor_local, self.critic1, self.critic2 = actor, critic1, critic2
        self.actor_optimizer = actor_opt
        self.critic1_optimizer, self.critic2_optimizer = critic1_opt, critic2_opt
        self.alpha = torch.tensor([0.2])
        self.cql_weight = 1.0
        self.device = device

    def calc_policy_loss(self, states, alpha):
        actions_pred, log_pis = self.actor_local.evaluate(states)
        min_q = torch.min(self.critic1(states, actions_pred), self.critic2(states, actions_pred))
        return (alpha * log_pis - min_q).mean(), log_pis

    def learn(self, experiences, gamma=0.99):
        states, actions, rewards, next_states, dones = experiences
        actor_loss, _ = self.calc_policy_loss(states, self.alpha)
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()

        with torch.no_grad():
            next_action, _ = self.actor_local.evaluate(next_states)
            q_next = torch.min(self.critic1(next_states, next_action),
                               self.critic2(next_states, next_action))
            q_targets = rewards + gamma * (1 - dones) * q_next

        q1, q2 = self.critic1(states, actions), self.critic2(states, actions)
        critic1_loss = 0.5 * F.mse_loss(q1, q_targets)
        critic2_loss = 0.5 * F.mse_loss(q2, q_targets)
        cql1_loss = (torch.logsumexp(q1, dim=1).mean() - q1.mean()) * self.cql_weight
        cql2_loss = (torch.logsumexp(q2, dim=1).mean() - q2.mean()) * self.cql_weight

        self.critic1_optimizer.zero_grad()
        (critic1_loss + cql1_loss).backward()
        clip_grad_norm_(self.critic1.parameters(), 1.0)
        self.critic1_optimizer.step()
        self.critic2_optimizer.zero_grad()
        (critic2_loss + cql2_loss).backward()
        clip_grad_norm_(self.critic2.parameters(), 1.0)
        self.critic2_optimizer.step()

        return {"policy_loss": actor_loss.item(), "bellmann_error1": critic1_loss.item(),
                "bellmann_error2": critic2_loss.item(), "cql1_loss": cql1_loss.item(),
                "cql2_loss": cql2_loss.item()}


def train(agent, dataloader, episodes, device, wandb):
    batches = 0
    for i in range(1, episodes + 1):
        epoch_stats = {"policy_loss": 0.0, "bellmann_error1": 0.0, "bellmann_error2": 0.0,
                       "cql1_loss": 0.0, "cql2_loss": 0.0}
        for states, actions, rewards, next_states, dones in dataloader:
            experience = (states.to(device), actions.to(device), rewards.to(device),
                          next_states.to(device), dones.to(device))
            info = agent.learn(experience)
            for key, value in info.items():
                epoch_stats[key] += value
            batches += 1
        wandb.log({k: v / len(dataloader) for k, v in epoch_stats.items()} | {"Episode": i,
                                                                               "Batches": batches})
