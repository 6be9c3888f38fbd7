# Source: https://github.com/zhykoties/TimeSeries/blob/81a755b68051977b240d309fb3964207b1a3f781/train.py
# Report: DeepAR (PyTorch) training loop: the LSTM hidden/cell state is created per batch; the inner loop over train_window does BPTT and loss.backward() runs once per batch
# Shape: as in the repository: hidden/cell re-initialised at the top of every batch, carried only through the inner time loop (intended BPTT over one window), loss summed from a fresh zeros tensor and backpropagated once
# Expect: near-miss: must be silent
import logging

import numpy as np
import torch
from torch import nn
import torch.optim as optim
from torch.utils.data import DataLoader
from tqdm import tqdm

import utils

logger = logging.getLogger('DeepAR.Train')


def train(model: nn.Module,
          optimizer: optim.Optimizer,
          loss_fn,
          train_loader: DataLoader,
          params: utils.Params,
          epoch: int) -> np.ndarray:
    """Train one epoch; every window starts from a fresh recurrent state."""
    model.train()
    loss_epoch = np.zeros(len(train_loader))

    for i, (train_batch, idx, labels_batch) in enumerate(tqdm(train_loader)):
        optimizer.zero_grad()
        batch_size = train_batch.shape[0]
        train_batch = train_batch.permute(1, 0, 2).to(torch.float32).to(params.device)
        labels_batch = labels_batch.permute(1, 0).to(torch.float32).to(params.device)
        idx = idx.unsqueeze(0).to(params.device)

        loss = torch.zeros(1, device=params.device)
        hidden = model.init_hidden(batch_size)
        cell = model.init_cell(batch_size)
        mu = None
        for t in range(params.train_window):
            # if z_t is missing, replace it by the mean predicted at the previous step
            zero_index = (train_batch[t, :, 0] == 0)
            if t > 0 and torch.sum(zero_index) > 0:
                train_batch[t, zero_index, 0] = mu[zero_index]
            mu, sigma, hidden, cell = model(train_batch[t].unsqueeze_(0).clone(), idx, hidden, cell)
            loss += loss_fn(mu, sigma, labels_batch[t])

        loss.backward()
        optimizer.step()
        loss = loss.item() / params.train_window  # loss per timestep
        loss_epoch[i] = loss
        if i % 1000 == 0:
            logger.info(f'epoch {epoch} batch {i} train_loss: {loss}')
    return loss_epoch


def train_and_evaluate(model, train_loader, optimizer, loss_fn, params):
    loss_summary = np.zeros(len(train_loader) * params.num_epochs)
    n = len(train_loader)
    for epoch in range(params.num_epochs):
        logger.info('Epoch {}/{}'.format(epoch + 1, params.num_epochs))
        loss_summary[epoch * n:(epoch + 1) * n] = train(
            model, optimizer, loss_fn, train_loader, params, epoch)
        utils.save_checkpoint({'epoch': epoch + 1,
                               'state_dict': model.state_dict(),
                               'optim_dict': optimizer.state_dict()},
                              epoch=epoch, is_best=False,
                              checkpoint=params.model_dir)
    return loss_summary
