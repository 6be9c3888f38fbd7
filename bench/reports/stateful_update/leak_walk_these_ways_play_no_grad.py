# Source: https://github.com/Improbable-AI/walk-these-ways/issues/10
# Report: Running the walk-these-ways play.py deployment script slowly leaked GPU memory until failure; wrapping the policy/env step and reset in torch.no_grad() fixed it.
# Shape: The evaluation rollout calls the adaptation module and policy with autograd on; the simulator keeps the returned actions in its own buffers, so each step's graph chains onto the next.
# Expect: TML003 line 24
import torch


def load_policy(logdir, device="cuda"):
    body = torch.jit.load(f"{logdir}/checkpoints/body_latest.jit").to(device)
    adaptation_module = torch.jit.load(f"{logdir}/checkpoints/adaptation_module_latest.jit").to(device)

    def policy(obs):
        latent = adaptation_module.forward(obs["obs_history"])
        return body.forward(torch.cat((obs["obs_history"], latent), dim=-1))

    return policy


def play(env, logdir, num_eval_steps=250, device="cuda"):
    policy = load_policy(logdir, device)
    obs = env.reset()
    measured_x_vels, joint_positions = [], []
    for i in range(num_eval_steps):
        actions = policy(obs)  # expect: TML003
        env.commands[:, 0] = 1.5
        obs, rew, done, info = env.step(actions)
        measured_x_vels.append(env.base_lin_vel[0, 0].item())
        joint_positions.append(env.dof_pos[0].cpu().numpy())
    return measured_x_vels, joint_positions
