# Source: https://github.com/ZhonghuaYi/AutoEncoder/blob/b28de5510f9acf6890121db4f0d1efde68674048/train.py
# Report: VAE/AE training script keeps an incremental mean of the batch loss on the GPU for the tqdm description and the epoch's TensorBoard scalar; the repository folds in loss.detach(), and its VAELoss returns the side terms detached in the loss dict
# Shape: the repository version: the incremental mean folds in loss.detach(), so mean_loss stays a plain CUDA scalar; the backward still goes through the attached loss from the criterion's dict
# Expect: near-miss: must be silent
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import autocast, GradScaler
from tqdm import tqdm


class VAELoss(nn.Module):
    def forward(self, pred, target, kld_weight=0.00025):
        recons, mu, log_var = pred
        recons_loss = F.mse_loss(recons, target)
        kld_loss = torch.mean(-0.5 * torch.sum(1 + log_var - mu ** 2 - log_var.exp(), dim=1), dim=0)
        loss = recons_loss + kld_weight * kld_loss
        return {'loss': loss, 'Reconstruction_Loss': recons_loss.detach(), 'KLD': -kld_loss.detach()}


def evaluate(model, data_loader, device):
    with torch.no_grad():
        model.eval()
        total_num = len(data_loader.dataset)
        sum_num = torch.zeros(1).to(device)
        for images, _ in tqdm(data_loader, file=sys.stdout):
            pred = model(images.to(device))[0]
            sum_num += torch.mean((pred - images.to(device)) ** 2)
    return sum_num.item() / total_num


def train(cfg, net, train_loader, val_loader, optimizer, scheduler, tb_writer, device, logger):
    loss_function = VAELoss()
    scaler = GradScaler(enabled=cfg.GLOBAL.USE_AMP)
    for epoch in range(cfg.GLOBAL.EPOCH_NUM):
        net.train()
        mean_loss = torch.zeros(1).to(device)
        data_loader = tqdm(train_loader, file=sys.stdout)

        for step, data in enumerate(data_loader):
            optimizer.zero_grad()
            with autocast(enabled=cfg.GLOBAL.USE_AMP):
                images, labels = data
                images = images.to(device)
                pred = net(images)
                loss = loss_function(pred, images)['loss']
                mean_loss = (mean_loss * step + loss.detach()) / (step + 1)
                data_loader.desc = "[epoch {}] mean loss {}".format(epoch, round(mean_loss.item(), 3))
                if not torch.isfinite(loss):
                    logger.info('WARNING: non-finite loss, ending training')
                    sys.exit(1)

                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()

        scheduler.step()

        if epoch % cfg.GLOBAL.VAL_EPOCH_STEP == 0:
            val_performance = evaluate(model=net, data_loader=val_loader, device=device)
            logger.info("[epoch {}] mse: {}".format(epoch, round(val_performance, 3)))
            tb_writer.add_scalar("loss", mean_loss, epoch)
            tb_writer.add_scalar("mse", val_performance, epoch)
            tb_writer.add_scalar("learning_rate", optimizer.param_groups[0]["lr"], epoch)
