# Source: https://github.com/cyoon1729/RLcycle/pull/10
# Report: suspected memory leak in the DDPG/TD3/SAC agents; the fix changed every learner's loss returns to native floats (float(loss.detach().cpu().item())) before the agent kept them for logging
# Shape: the learner's update_model() returns the backwarded loss tensors in an info tuple; the agent unpacks info[:3] and appends them to a per-episode dict of lists averaged only at episode end
# Expect: TML001 line 55; TML001 line 56; TML001 line 57
import torch
from torch.nn.utils import clip_grad_norm_

from rlcycle.common.utils import soft_update


class TD3Learner:
    def update_model(self, experience):
        if self.use_per:
            indices, weights = experience[-2:]
            experience = experience[:-2]
        nets = (self.critic1, self.target_critic1, self.critic2, self.target_critic2, self.actor)
        c1_elem, c2_elem = self.critic_loss_fn(nets, experience)
        critic1_loss = (c1_elem * weights).mean() if self.use_per else c1_elem.mean()
        critic2_loss = (c2_elem * weights).mean() if self.use_per else c2_elem.mean()

        for loss, net, opt in ((critic1_loss, self.critic1, self.critic1_optimizer),
                               (critic2_loss, self.critic2, self.critic2_optimizer)):
            opt.zero_grad()
            loss.backward()
            clip_grad_norm_(net.parameters(), self.hyper_params.critic_gradient_clip)
            opt.step()
        soft_update(self.critic1, self.target_critic1, self.hyper_params.tau)
        soft_update(self.critic2, self.target_critic2, self.hyper_params.tau)

        policy_loss = self.actor_loss_fn((self.critic1, self.actor), experience)
        self.actor_optimizer.zero_grad()
        policy_loss.backward()
        self.actor_optimizer.step()

        info = (critic1_loss, critic2_loss, policy_loss)
        if self.use_per:
            new_priorities = torch.clamp(c1_elem.view(-1), min=1e-6).cpu().detach().numpy()
            info = info + (indices, new_priorities)
        return info


class TD3Agent:
    def train(self):
        for episode_i in range(self.experiment_info.total_num_episodes):
            state = self.env.reset()
            losses = dict(critic1_loss=[], critic2_loss=[], actor_loss=[])
            episode_reward, done = 0.0, False
            while not done:
                action = self.action_selector(self.learner.actor, state)
                state, reward, done = self.step(state, action)
                episode_reward += reward
                if len(self.replay_buffer) >= self.hyper_params.update_starting_point:
                    info = self.learner.update_model(self._sample_experience())
                    critic1_loss, critic2_loss, actor_loss = info[:3]
                    losses["critic1_loss"].append(critic1_loss)  # expect: TML001
                    losses["critic2_loss"].append(critic2_loss)  # expect: TML001
                    losses["actor_loss"].append(actor_loss)  # expect: TML001
                    if self.hyper_params.use_per:
                        self.replay_buffer.update_priorities(*info[-2:])
            log_dict = {k: torch.stack(v).mean().item() for k, v in losses.items() if v}
            log_dict["episode_reward"] = episode_reward
            self.logger.write_log(log_dict)
