# Source: https://github.com/ehoogeboom/e3_diffusion_for_molecules/blob/d28fd52e108c0ffc2a37e1af1371df90ad173590/train_test.py
# Report: audited EDM (E(3) equivariant diffusion for molecules) train_epoch: it records nll_epoch.append(nll.item()); safeguard removed here, so each step's NLL tensor is kept in the epoch list
# Shape: nll comes back from losses.compute_loss_and_nll(...) and is appended to nll_epoch, a list bound before the batch loop and averaged only at the end of the epoch; the grad-norm queue and wandb log keep floats
# Expect: TML001 line 86

import time

import numpy as np
import torch
import wandb

import utils
import qm9.utils as qm9utils
from qm9 import losses
from equivariant_diffusion.utils import (assert_mean_zero_with_mask, remove_mean_with_mask,
                                         sample_center_gravity_zero_gaussian_with_mask)


class Queue:
    def __init__(self, max_len=50):
        self.items = []
        self.max_len = max_len

    def add(self, item):
        self.items.insert(0, item)
        if len(self.items) > self.max_len:
            self.items.pop()

    def mean(self):
        return np.mean(self.items)

    def std(self):
        return np.std(self.items)


def gradient_clipping(flow, gradnorm_queue):
    max_grad_norm = 1.5 * gradnorm_queue.mean() + 2 * gradnorm_queue.std()
    grad_norm = torch.nn.utils.clip_grad_norm_(flow.parameters(), max_norm=max_grad_norm, norm_type=2.0)
    gradnorm_queue.add(min(float(grad_norm), float(max_grad_norm)))
    return grad_norm


def train_epoch(args, loader, epoch, model, model_dp, model_ema, ema, device, dtype, property_norms, optim,
                nodes_dist, gradnorm_queue):
    model_dp.train()
    model.train()
    nll_epoch = []
    n_iterations = len(loader)
    for i, data in enumerate(loader):
        x = data['positions'].to(device, dtype)
        node_mask = data['atom_mask'].to(device, dtype).unsqueeze(2)
        edge_mask = data['edge_mask'].to(device, dtype)
        one_hot = data['one_hot'].to(device, dtype)
        charges = (data['charges'] if args.include_charges else torch.zeros(0)).to(device, dtype)

        x = remove_mean_with_mask(x, node_mask)
        if args.augment_noise > 0:
            eps = sample_center_gravity_zero_gaussian_with_mask(x.size(), x.device, node_mask)
            x = x + eps * args.augment_noise
        x = remove_mean_with_mask(x, node_mask)
        if args.data_augmentation:
            x = utils.random_rotation(x).detach()
        assert_mean_zero_with_mask(x, node_mask)

        h = {'categorical': one_hot, 'integer': charges}
        context = None
        if len(args.conditioning) > 0:
            context = qm9utils.prepare_context(args.conditioning, data, property_norms).to(device, dtype)

        optim.zero_grad()
        nll, reg_term, mean_abs_z = losses.compute_loss_and_nll(args, model_dp, nodes_dist,
                                                                x, h, node_mask, edge_mask, context)
        loss = nll + args.ode_regularization * reg_term
        loss.backward()

        grad_norm = gradient_clipping(model, gradnorm_queue) if args.clip_grad else 0.
        optim.step()

        if args.ema_decay > 0:
            ema.update_model_average(model_ema, model)

        if i % args.n_report_steps == 0:
            print(f"\rEpoch: {epoch}, iter: {i}/{n_iterations}, "
                  f"Loss {loss.item():.2f}, NLL: {nll.item():.2f}, "
                  f"RegTerm: {reg_term.item():.1f}, GradNorm: {float(grad_norm):.1f}")
        nll_epoch.append(nll)  # expect: TML001
        wandb.log({"Batch NLL": nll.item()}, commit=True)
        if args.break_train_epoch:
            break
    wandb.log({"Train Epoch NLL": torch.stack(nll_epoch).mean().item()}, commit=False)
