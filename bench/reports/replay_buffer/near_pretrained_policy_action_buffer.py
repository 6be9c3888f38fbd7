# Source: https://github.com/isaac-sim/IsaacLab/pull/5923
# Report: latent autograd leak in a hierarchical action term: stepping envs outside inference_mode made the frozen low-level policy output require grad, and copying it into the persistent low_level_actions buffer made that buffer carry a graph across steps
# Shape: fixed as in the PR: the low-level policy runs under torch.no_grad() and its output is detached before it is copied into the persistent buffer
# Expect: near-miss: must be silent
import torch


class PreTrainedPolicyAction:
    def __init__(self, cfg, env, low_level_term):
        self.cfg = cfg
        self.env = env
        self.num_envs = env.num_envs
        self.device = env.device
        self.policy = torch.jit.load(cfg.policy_path).to(env.device).eval()
        self._low_level_action_term = low_level_term
        self._raw_actions = torch.zeros(self.num_envs, 3, device=self.device)
        self.low_level_actions = torch.zeros(self.num_envs, low_level_term.action_dim, device=self.device)
        self._counter = 0

    def last_action(self):
        self.low_level_actions[self.env.episode_length_buf == 0, :] = 0
        return self.low_level_actions

    def process_actions(self, actions):
        self._raw_actions[:] = actions

    def _low_level_obs(self):
        base = self.env.observation_manager.compute_group("low_level_policy")
        return torch.cat([base, self._raw_actions, self.last_action()], dim=-1)

    def apply_actions(self):
        if self._counter % self.cfg.low_level_decimation == 0:
            with torch.no_grad():
                low_level_obs = self._low_level_obs()
                actions = self.policy(low_level_obs)
            self.low_level_actions[:] = actions.detach()
            self._low_level_action_term.process_actions(self.low_level_actions)
            self._counter = 0
        self._low_level_action_term.apply_actions()
        self._counter += 1


def run_navigation(env, action_term, high_level_policy, num_steps):
    obs = env.reset()
    for _ in range(num_steps):
        with torch.no_grad():
            command = high_level_policy(obs["policy"])
        action_term.process_actions(command)
        for _ in range(env.cfg.decimation):
            action_term.apply_actions()
            env.sim.step(render=False)
        obs = env.compute_observations()
