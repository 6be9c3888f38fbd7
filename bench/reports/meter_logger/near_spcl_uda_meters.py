# Source: https://github.com/yxgeee/SpCL/blob/master/spcl/trainers.py
# Report: repository is correct: the UDA re-ID trainer feeds source/target hybrid-memory losses to AverageMeter objects as loss_s.item() / loss_t.item()
# Shape: meters are created before the iteration loop and keep running sums (self.sum += val * n); only Python floats reach them, so no tensor outlives the step
# Expect: near-miss: must be silent
import time

import torch
import torch.nn.functional as F


class AverageMeter(object):
    """Computes and stores the average and current value"""

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


class HybridMemory(torch.nn.Module):
    def __init__(self, num_features, num_samples, temp=0.05):
        super().__init__()
        self.temp = temp
        self.register_buffer("features", torch.zeros(num_samples, num_features))

    def forward(self, inputs, indexes):
        inputs = F.normalize(inputs, dim=1)
        logits = inputs.mm(self.features.t()) / self.temp
        return F.cross_entropy(logits, indexes)


class UDATrainer(object):
    def __init__(self, encoder, memory, source_classes):
        self.encoder = encoder
        self.memory = memory
        self.source_classes = source_classes

    def train(self, epoch, loader_source, loader_target, optimizer, print_freq=10, train_iters=400):
        self.encoder.train()
        batch_time = AverageMeter()
        losses_s = AverageMeter()
        losses_t = AverageMeter()

        end = time.time()
        for i in range(train_iters):
            s_inputs, s_targets, _ = self._parse_data(loader_source.next())
            t_inputs, _, t_indexes = self._parse_data(loader_target.next())

            inputs = torch.cat((s_inputs, t_inputs), 0)
            f_out = self.encoder(inputs)
            f_out_s, f_out_t = f_out.split(s_inputs.size(0), dim=0)

            loss_s = self.memory(f_out_s, s_targets)
            loss_t = self.memory(f_out_t, t_indexes + self.source_classes)

            loss = loss_s + loss_t
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            losses_s.update(loss_s.item())
            losses_t.update(loss_t.item())

            batch_time.update(time.time() - end)
            end = time.time()
            if (i + 1) % print_freq == 0:
                print("Epoch: [{}][{}/{}]\tLoss_s {:.3f} ({:.3f})\tLoss_t {:.3f} ({:.3f})".format(
                    epoch, i + 1, train_iters, losses_s.val, losses_s.avg, losses_t.val, losses_t.avg))

    def _parse_data(self, inputs):
        imgs, _, pids, _, indexes = inputs
        return imgs.cuda(), pids.cuda(), indexes.cuda()
