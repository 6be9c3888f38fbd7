# Source: https://github.com/facebookresearch/swav/blob/04b8f4310a21ddd92af7e2b8f2ea2ef501ce7158/main_swav.py
# Report: SwAV self-supervised training: a feature queue created once (before the epoch loop) is shifted and refilled with the current batch's embeddings every iteration; the repo detaches the embedding and does the fill inside torch.no_grad().
# Shape: realistic port mistake: no embedding.detach() and the queue fill moved after the no_grad block, so queue[i, :bs] = embedding[...] records the student graph into a tensor that outlives the loop, and the next shift queue[i, bs:] = queue[i, :-bs].clone() chains it to every earlier iteration.
# Expect: TML001 line 74
import time

import numpy as np
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def sinkhorn(out, epsilon=0.05, n_iters=3):
    with torch.no_grad():
        Q = torch.exp(out / epsilon).t()
        Q /= torch.sum(Q)
        K, B = Q.shape
        for _ in range(n_iters):
            Q /= torch.sum(Q, dim=1, keepdim=True)
            Q /= K
            Q /= torch.sum(Q, dim=0, keepdim=True)
            Q /= B
        return (Q * B).t()


def train(train_loader, model, optimizer, epoch, lr_schedule, queue, args):
    losses = AverageMeter()
    softmax = nn.Softmax(dim=1).cuda()
    model.train()
    use_the_queue = False
    end = time.time()
    for it, inputs in enumerate(train_loader):
        iteration = epoch * len(train_loader) + it
        for group in optimizer.param_groups:
            group["lr"] = lr_schedule[iteration]

        with torch.no_grad():
            w = model.prototypes.weight.data.clone()
            w = nn.functional.normalize(w, dim=1, p=2)
            model.prototypes.weight.copy_(w)

        embedding, output = model(inputs)
        bs = inputs[0].size(0)

        loss = 0
        for i, crop_id in enumerate(args.crops_for_assign):
            with torch.no_grad():
                out = output[bs * crop_id: bs * (crop_id + 1)]
                if queue is not None:
                    if use_the_queue or not torch.all(queue[i, -1, :] == 0):
                        use_the_queue = True
                        out = torch.cat((torch.mm(queue[i], model.prototypes.weight.t()), out))
                q = sinkhorn(out, args.epsilon, args.sinkhorn_iterations)[-bs:]

            subloss = 0
            for v in np.delete(np.arange(np.sum(args.nmb_crops)), crop_id):
                p = softmax(output[bs * v: bs * (v + 1)] / args.temperature)
                subloss -= torch.mean(torch.sum(q * torch.log(p), dim=1))
            loss += subloss / (np.sum(args.nmb_crops) - 1)

            # fill the queue with this crop's embeddings
            if queue is not None:
                queue[i, bs:] = queue[i, :-bs].clone()
                queue[i, :bs] = embedding[crop_id * bs: (crop_id + 1) * bs]  # expect: TML001
        loss /= len(args.crops_for_assign)

        optimizer.zero_grad()
        loss.backward()
        if iteration < args.freeze_prototypes_niters:
            for name, p in model.named_parameters():
                if "prototypes" in name:
                    p.grad = None
        optimizer.step()

        losses.update(loss.item(), inputs[0].size(0))
        if it % 50 == 0:
            print(f"Epoch [{epoch}][{it}] loss {losses.val:.4f} ({losses.avg:.4f}) {time.time() - end:.2f}s")
        end = time.time()
    return (epoch, losses.avg), queue


def main(args, model, train_loader, optimizer, lr_schedule):
    queue = None
    for epoch in range(args.epochs):
        if args.queue_length > 0 and epoch >= args.epoch_queue_starts and queue is None:
            queue = torch.zeros(len(args.crops_for_assign), args.queue_length, args.feat_dim).cuda()
        scores, queue = train(train_loader, model, optimizer, epoch, lr_schedule, queue, args)
        torch.save({"state_dict": model.state_dict(), "epoch": epoch + 1}, "checkpoint.pth.tar")
        if queue is not None:
            torch.save({"queue": queue}, "queue.pth")
