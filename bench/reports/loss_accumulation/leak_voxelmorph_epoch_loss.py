# Source: https://github.com/voxelmorph/voxelmorph/blob/aa882f8b8e178ebc8684bbe14c87ff758fe8d965/scripts/torch/train.py
# Report: VoxelMorph's registration training script records per-term losses with .item() and the total loss per step; this variant keeps the total as a tensor to average it on the GPU at epoch end
# Shape: loss = sum of weighted image + deformation terms (graph-attached); epoch_total_loss (bound per epoch, outlives the step loop) gets the tensor, so each step's views are kept for the whole epoch
# Expect: TML001 line 79
import os
import time

import numpy as np
import torch


class MSE:
    def loss(self, y_true, y_pred):
        return torch.mean((y_true - y_pred) ** 2)


class Grad:
    def __init__(self, penalty="l2", loss_mult=None):
        self.penalty = penalty
        self.loss_mult = loss_mult

    def loss(self, _, y_pred):
        dy = torch.abs(y_pred[:, :, 1:, :, :] - y_pred[:, :, :-1, :, :])
        dx = torch.abs(y_pred[:, :, :, 1:, :] - y_pred[:, :, :, :-1, :])
        dz = torch.abs(y_pred[:, :, :, :, 1:] - y_pred[:, :, :, :, :-1])
        if self.penalty == "l2":
            dy, dx, dz = dy * dy, dx * dx, dz * dz
        grad = (torch.mean(dx) + torch.mean(dy) + torch.mean(dz)) / 3.0
        if self.loss_mult is not None:
            grad *= self.loss_mult
        return grad


def to_tensors(arrays, device):
    return [torch.from_numpy(d).to(device).float().permute(0, 4, 1, 2, 3) for d in arrays]


def train_registration(model, generator, args, device="cuda"):
    model.to(device)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    image_loss_func = MSE().loss
    if args.bidir:
        losses = [image_loss_func, image_loss_func]
        weights = [0.5, 0.5]
    else:
        losses = [image_loss_func]
        weights = [1]
    losses += [Grad("l2", loss_mult=args.int_downsize).loss]
    weights += [args.weight]

    for epoch in range(args.initial_epoch, args.epochs):
        if epoch % 20 == 0:
            model.save(os.path.join(args.model_dir, "%04d.pt" % epoch))

        epoch_loss = []
        epoch_total_loss = []
        epoch_step_time = []

        for step in range(args.steps_per_epoch):
            step_start_time = time.time()

            inputs, y_true = next(generator)
            inputs = to_tensors(inputs, device)
            y_true = to_tensors(y_true, device)

            # warped image(s) and flow field
            y_pred = model(*inputs)

            loss = 0
            loss_list = []
            for n, loss_function in enumerate(losses):
                curr_loss = loss_function(y_true[n], y_pred[n]) * weights[n]
                loss_list.append(curr_loss.item())
                loss += curr_loss

            epoch_loss.append(loss_list)
            epoch_total_loss.append(loss)  # expect: TML001

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            epoch_step_time.append(time.time() - step_start_time)

        mean_total = torch.stack(epoch_total_loss).mean().item()
        losses_info = ", ".join(["%.4e" % f for f in np.mean(epoch_loss, axis=0)])
        print("Epoch %d/%d - %.4f sec/step - loss: %.4e  (%s)" % (
            epoch + 1, args.epochs, np.mean(epoch_step_time), mean_total, losses_info), flush=True)

    model.save(os.path.join(args.model_dir, "%04d.pt" % args.epochs))
