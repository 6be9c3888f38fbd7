# Source: https://github.com/tonyzhaozh/act/blob/main/imitate_episodes.py
# Report: ACT's behaviour-cloning loop keeping every step's loss dict for the whole run, with detach_dict() also moving the scalars to the CPU
# Shape: train_history and the per-epoch val list receive detach_dict(...) = detached CPU tensors, so nothing per step stays on the GPU
# Expect: near-miss: must be silent
from copy import deepcopy

import numpy as np
import torch


def detach_dict(d):
    out = {}
    for k, v in d.items():
        out[k] = v.detach().cpu()
    return out


def compute_dict_mean(epoch_dicts):
    result = {k: None for k in epoch_dicts[0]}
    n = len(epoch_dicts)
    for k in result:
        total = 0
        for d in epoch_dicts:
            total += d[k]
        result[k] = total / n
    return result


def forward_pass(data, policy):
    image, qpos, action, is_pad = data
    image, qpos, action, is_pad = image.cuda(), qpos.cuda(), action.cuda(), is_pad.cuda()
    return policy(qpos, image, action, is_pad)


def summarize(tag, summary):
    print(tag + " " + " ".join(f"{k}: {v.item():.3f}" for k, v in summary.items()))


def train_bc(train_loader, val_loader, config, make_policy, make_optimizer, plot_history):
    num_epochs = config["num_epochs"]
    policy = make_policy(config["policy_class"], config["policy_config"])
    policy.cuda()
    optimizer = make_optimizer(config["policy_class"], policy)

    train_history = []
    min_val_loss = np.inf
    best_ckpt_info = None
    for epoch in range(num_epochs):
        # validation
        with torch.inference_mode():
            policy.eval()
            epoch_dicts = []
            for batch_idx, data in enumerate(val_loader):
                forward_dict = forward_pass(data, policy)
                epoch_dicts.append(detach_dict(forward_dict))
            epoch_summary = compute_dict_mean(epoch_dicts)
            if epoch_summary["loss"] < min_val_loss:
                min_val_loss = epoch_summary["loss"]
                best_ckpt_info = (epoch, min_val_loss, deepcopy(policy.state_dict()))
        summarize("val", epoch_summary)

        # training
        policy.train()
        optimizer.zero_grad()
        for batch_idx, data in enumerate(train_loader):
            forward_dict = forward_pass(data, policy)
            forward_dict["loss"].backward()
            optimizer.step()
            optimizer.zero_grad()
            train_history.append(detach_dict(forward_dict))
        n = batch_idx + 1
        epoch_summary = compute_dict_mean(train_history[n * epoch:n * (epoch + 1)])
        summarize("train", epoch_summary)

        if epoch % 100 == 0:
            plot_history(train_history, epoch)

    return best_ckpt_info
