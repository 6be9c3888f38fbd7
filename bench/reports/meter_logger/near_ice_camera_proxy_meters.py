# Source: https://github.com/chenhao2345/ICE/blob/c671ae097e2f69cc1fc205965399ca291e120cf9/ice/trainers.py
# Report: ICE (unsupervised re-ID, contrastive with an EMA teacher and per-camera proxy memory) logs every loss through AverageMeter.update(loss.item()).
# Shape: the cross-camera loss is summed per step into loss_cam / associate_loss and backpropagated the same step (intended); meters receive Python floats; the EMA teacher runs under no_grad and is updated through .data.
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class ImageTrainer:
    def __init__(self, model, model_ema, alpha=0.999, tau_c=0.5, beta=0.07, bg_knn=50):
        self.model = model
        self.model_ema = model_ema
        self.alpha = alpha
        self.tau_c = tau_c
        self.beta = beta
        self.bg_knn = bg_knn
        self.ccloss = nn.CrossEntropyLoss()

    def train(self, epoch, loader, optimizer, centers, proxy_memory, proxy_classes, train_iters=200):
        self.model.train()
        self.model_ema.train()
        losses_ccl = AverageMeter()
        losses_cam = AverageMeter()
        batch_time = AverageMeter()
        memory = proxy_memory.detach().clone()
        end = time.time()
        for i in range(train_iters):
            inputs_1, inputs_2, targets, cids = [t.cuda() for t in loader.next()]
            f_out = self.model(inputs_1)
            p_out = torch.matmul(f_out, centers.t()) / self.tau_c

            loss_cam = torch.tensor(0.0).cuda()
            for cc in torch.unique(cids):
                inds = torch.nonzero(cids == cc).squeeze(-1)
                percam_feat = f_out[inds]
                percam_targets = targets[inds]
                sims = torch.matmul(F.normalize(percam_feat), F.normalize(memory).t())
                temp_sims = sims.detach().clone()
                sims = sims / self.beta
                associate_loss = 0
                for k in range(len(percam_feat)):
                    pos = torch.nonzero(proxy_classes == percam_targets[k]).squeeze(-1)
                    temp_sims[k, pos] = -10000.0
                    neg = torch.sort(temp_sims[k])[1][-self.bg_knn:]
                    logits = torch.cat((sims[k, pos], sims[k, neg]), dim=0)
                    soft_t = torch.zeros(len(logits), device=logits.device)
                    soft_t[: len(pos)] = 1.0 / len(pos)
                    associate_loss += -(F.log_softmax(logits.unsqueeze(0), dim=1) * soft_t.unsqueeze(0)).sum()
                loss_cam += 0.5 * associate_loss / len(percam_feat)

            with torch.no_grad():
                f_out_ema = self.model_ema(inputs_2)

            loss_ccl = self.ccloss(p_out, targets)
            loss_con = -(F.normalize(f_out) * F.normalize(f_out_ema)).sum(1).mean()
            loss = loss_ccl + loss_cam + loss_con

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            self._update_ema_variables(self.model, self.model_ema, self.alpha)

            losses_ccl.update(loss_ccl.item())
            losses_cam.update(loss_cam.item())
            batch_time.update(time.time() - end)
            end = time.time()
            if (i + 1) % 50 == 0:
                print("Epoch [{}][{}/{}] ccl {:.3f} cam {:.3f} time {:.3f}".format(
                    epoch, i + 1, train_iters, losses_ccl.avg, losses_cam.avg, batch_time.avg))

    def _update_ema_variables(self, model, ema_model, alpha):
        for ema_param, param in zip(ema_model.parameters(), model.parameters()):
            ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)
