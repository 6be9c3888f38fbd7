# Source: https://github.com/pytorch/rl/pull/3052
# Report: "Memory Leak in BraxEnv with requires_grad=True": memory keeps rising over a differentiable Brax rollout even after detaching and backwarding; the _BraxEnvStep autograd.Function kept the next-state TensorDict (and the JAX vjp closure) as ctx attributes (source also: issue https://github.com/pytorch/rl/issues/2837; code before commit 32f7d72db5b479bd66523ce60836c1b799c390cd, torchrl/envs/libs/brax.py)
# Shape: a close variant of the function: forward() keeps only non-tensor bookkeeping on ctx (the JAX vjp closure, the env, the pipeline keys and the shapes needed for zero grads); no tensor or TensorDict is stored on ctx
# Expect: near-miss: must be silent
import torch
from tensordict import TensorDict

from torchrl.envs.libs.brax import (
    _ndarray_to_tensor,
    _object_to_tensordict,
    _tensor_to_ndarray,
    _tensordict_to_object,
    _tree_flatten,
    _tree_reshape,
)


class _BraxEnvStep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, env, state_td, action_tensor, *qp_values):
        import jax

        state_obj = _tensordict_to_object(state_td, env._state_example)
        action_nd = _tensor_to_ndarray(action_tensor)
        state = _tree_flatten(state_obj, env.batch_size)
        action = _tree_flatten(action_nd, env.batch_size)

        next_state, vjp_fn = jax.vjp(env._vmap_jit_env_step, state, action)
        next_state_tensor = _object_to_tensordict(
            _tree_reshape(next_state, env.batch_size), device=env.device, batch_size=env.batch_size
        )

        qp = next_state_tensor.get("pipeline_state")
        ctx.vjp_fn = vjp_fn
        ctx.env = env
        ctx.qp_keys = list(qp.keys())
        ctx.qp_shapes = [qp.get(key).shape for key in ctx.qp_keys]
        ctx.done_shape = next_state_tensor.get("done").shape
        return (
            next_state_tensor,  # no gradient
            next_state_tensor["obs"],
            next_state_tensor["reward"],
            *next_state_tensor["pipeline_state"].values(),
        )

    @staticmethod
    def backward(ctx, _, grad_next_obs, grad_next_reward, *grad_next_qp_values):
        device = ctx.env.device
        pipeline_state = {
            key: val if val is not None else torch.zeros(shape, device=device)
            for key, shape, val in zip(ctx.qp_keys, ctx.qp_shapes, grad_next_qp_values)
        }
        grad_next_state_td = TensorDict(
            source={
                "pipeline_state": pipeline_state,
                "obs": grad_next_obs,
                "reward": grad_next_reward,
                "done": torch.zeros(ctx.done_shape, device=device),
            },
            device=ctx.env.device,
            batch_size=ctx.env.batch_size,
        )
        grad_obj = _tensordict_to_object(grad_next_state_td, ctx.env._state_example)
        grad_state, grad_action = ctx.vjp_fn(_tree_flatten(grad_obj, ctx.env.batch_size))
        grad_state = _tree_reshape(grad_state, ctx.env.batch_size)
        grad_action = _ndarray_to_tensor(_tree_reshape(grad_action, ctx.env.batch_size))
        grad_state_qp = _object_to_tensordict(
            grad_state.pipeline_state, device=ctx.env.device, batch_size=ctx.env.batch_size
        )
        return (None, None, grad_action, *grad_state_qp.values())


def step_with_grad(env, tensordict):
    action = tensordict.get("action")
    state = tensordict.get("state")
    qp_keys, qp_values = zip(*state.get("pipeline_state").items())
    next_state, next_obs, next_reward, *next_qp_values = _BraxEnvStep.apply(env, state, action, *qp_values)
    next_state["obs"] = next_obs
    next_state.set("reward", next_reward.view(*env.reward_spec.shape))
    next_state.get("pipeline_state").update(dict(zip(qp_keys, next_qp_values)))
    return next_state


def train(env, policy, optim, epochs):
    td = env.reset()
    for epoch in range(epochs):
        td["action"] = policy(td["observation"])
        next_state = step_with_grad(env, td)
        loss = -next_state["reward"].mean()
        optim.zero_grad()
        loss.backward()
        optim.step()
        # the script detaches and clones the carried state every step
        td = TensorDict({"observation": next_state["obs"], "state": next_state},
                        batch_size=env.batch_size).detach().clone()
