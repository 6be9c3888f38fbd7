# Source: https://github.com/tier4/Diffusion-Planner/pull/372
# Report: train_epoch appended each batch's loss dict (tensors still attached to their autograd graphs) to epoch_loss, keeping every batch's loss graph alive until the end of the epoch
# Shape: the fix: the same loss dict from diffusion_loss_func is turned into a dict of detached Python scalars before it is appended to the per-epoch list
# Expect: near-miss: must be silent
import torch
from torch import nn
from tqdm import tqdm


class ModelEMA:
    def __init__(self, model, decay=0.999):
        self.decay = decay
        self.shadow = {k: v.detach().clone() for k, v in model.state_dict().items()}

    @torch.no_grad()
    def update(self, model):
        for k, v in model.state_dict().items():
            if v.dtype.is_floating_point:
                self.shadow[k].mul_(self.decay).add_(v.detach(), alpha=1 - self.decay)


def heading_to_cos_sin(x):
    return torch.cat([x[..., :2], x[..., 2:3].cos(), x[..., 2:3].sin()], dim=-1)


def diffusion_loss_func(model, inputs, futures, args):
    ego_future, neighbors_future, mask = futures
    out = model(inputs)
    neighbor_loss = ((out["neighbor_prediction"] - neighbors_future) ** 2)[~mask].mean()
    ego_loss = ((out["ego_prediction"] - ego_future) ** 2).mean()
    turn_loss = nn.functional.cross_entropy(out["turn_indicator_logit"], inputs["turn_indicator"])
    acc = (out["turn_indicator_logit"].argmax(-1) == inputs["turn_indicator"]).float().mean()
    return {
        "neighbor_prediction_loss": neighbor_loss,
        "ego_planning_loss": ego_loss,
        "turn_indicator_loss": turn_loss,
        "turn_indicator_accuracy": acc,
    }


def get_epoch_mean_loss(epoch_loss):
    keys = epoch_loss[0].keys()
    return {k: sum(float(d[k]) for d in epoch_loss) / len(epoch_loss) for k in keys}


def train_epoch(data_loader, model, optimizer, args, ema):
    epoch_loss = []
    model.train()
    for inputs in tqdm(data_loader, desc="Training", unit="batch"):
        inputs = {key: value.to(args.device) for key, value in inputs.items()}
        inputs["ego_agent_past"] = heading_to_cos_sin(inputs["ego_agent_past"])
        ego_future = heading_to_cos_sin(inputs["ego_agent_future"])
        neighbors_future = inputs["neighbor_agents_future"]
        mask = torch.sum(torch.ne(neighbors_future[..., :3], 0), dim=-1) == 0
        neighbors_future = heading_to_cos_sin(neighbors_future)
        neighbors_future[mask] = 0.0

        optimizer.zero_grad()
        loss = diffusion_loss_func(model, inputs, (ego_future, neighbors_future, mask), args)
        loss["loss"] = (
            loss["neighbor_prediction_loss"]
            + args.alpha_planning_loss * loss["ego_planning_loss"]
            + loss["turn_indicator_loss"]
        )
        loss["loss"].backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5)
        optimizer.step()
        ema.update(model)

        epoch_loss.append({key: value.detach().item() for key, value in loss.items()})

    epoch_mean_loss = get_epoch_mean_loss(epoch_loss)
    print(f"{epoch_mean_loss['loss']=:.4f}")
    return epoch_mean_loss, epoch_mean_loss["loss"]
