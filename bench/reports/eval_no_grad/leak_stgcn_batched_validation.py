# Source: https://github.com/FelixOpolka/STGCN-PyTorch/issues/12
# Report: issue rewrites the per-epoch validation of main.py to run in batches under torch.no_grad(); this rewrite keeps the batched loop but drops the `with torch.no_grad():` block
# Shape: validate() calls net.eval() and then runs net(A_wave, ...) per validation batch with grad enabled; losses leave through .detach().numpy() but every forward saves its activations
# Expect: TML003 line 52

import argparse

import numpy as np
import torch
import torch.nn as nn

from stgcn import STGCN
from utils import generate_dataset, load_metr_la_data, get_normalized_adj

num_timesteps_input = 12
num_timesteps_output = 3
epochs = 1000
batch_size = 50

parser = argparse.ArgumentParser(description='STGCN')
parser.add_argument('--enable-cuda', action='store_true', help='Enable CUDA')
args = parser.parse_args()
args.device = torch.device('cuda') if args.enable_cuda and torch.cuda.is_available() else torch.device('cpu')


def train_epoch(net, optimizer, loss_criterion, A_wave, training_input, training_target):
    permutation = torch.randperm(training_input.shape[0])
    epoch_training_losses = []
    for i in range(0, training_input.shape[0], batch_size):
        net.train()
        optimizer.zero_grad()
        indices = permutation[i:i + batch_size]
        X_batch = training_input[indices].to(device=args.device)
        y_batch = training_target[indices].to(device=args.device)
        out = net(A_wave, X_batch)
        loss = loss_criterion(out, y_batch)
        loss.backward()
        optimizer.step()
        epoch_training_losses.append(loss.detach().cpu().numpy())
    return sum(epoch_training_losses) / len(epoch_training_losses)


def validate(net, loss_criterion, A_wave, val_input, val_target, means, stds):
    net.eval()
    val_input = val_input.to(device=args.device)
    val_target = val_target.to(device=args.device)

    tmp_val_losses = []
    tmp_maes = []
    for i in range(0, val_input.shape[0], batch_size):
        target = val_target[i:i + batch_size, ...]
        out = net(A_wave, val_input[i:i + batch_size, ...])  # expect: TML003
        loss = loss_criterion(out, target).to(device="cpu")
        tmp_val_losses.append(np.ndarray.item(loss.detach().numpy()))
        out_unnormalized = out.detach().cpu().numpy() * stds[0] + means[0]
        target_unnormalized = target.detach().cpu().numpy() * stds[0] + means[0]
        tmp_maes.append(np.mean(np.absolute(out_unnormalized - target_unnormalized)))
    return sum(tmp_val_losses) / len(tmp_val_losses), sum(tmp_maes) / len(tmp_maes)


if __name__ == '__main__':
    torch.manual_seed(7)
    A, X, means, stds = load_metr_la_data()
    split_line1 = int(X.shape[2] * 0.6)
    split_line2 = int(X.shape[2] * 0.8)
    training_input, training_target = generate_dataset(X[:, :, :split_line1], num_timesteps_input=num_timesteps_input,
                                                       num_timesteps_output=num_timesteps_output)
    val_input, val_target = generate_dataset(X[:, :, split_line1:split_line2], num_timesteps_input=num_timesteps_input,
                                             num_timesteps_output=num_timesteps_output)

    A_wave = torch.from_numpy(get_normalized_adj(A)).to(device=args.device)
    net = STGCN(A_wave.shape[0], training_input.shape[3], num_timesteps_input, num_timesteps_output).to(device=args.device)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    loss_criterion = nn.MSELoss()

    training_losses, validation_losses, validation_maes = [], [], []
    for epoch in range(epochs):
        training_losses.append(train_epoch(net, optimizer, loss_criterion, A_wave, training_input, training_target))
        val_loss, mae = validate(net, loss_criterion, A_wave, val_input, val_target, means, stds)
        validation_losses.append(val_loss)
        validation_maes.append(mae)
        print("Training loss: {}".format(training_losses[-1]))
        print("Validation loss: {}".format(validation_losses[-1]))
        print("Validation MAE: {}".format(validation_maes[-1]))
