# Source: https://github.com/salesforce/CoMatch/blob/248bbbaf7884131f67805d197f9a80f0f42938e9/Train_CoMatch.py
# Report: CoMatch train_one_epoch one edit away: the sliding-window bound on the distribution-alignment list (pop(0) past 32 entries) is dropped
# Shape: prob_list comes from main and is returned to it, so every step appends one more CUDA class-mean vector (no graph: under no_grad) for the whole run, and torch.stack re-reads the ever longer list each step
# Expect: TML004 line 44
import torch
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train_one_epoch(epoch, model, prob_list, criteria_x, optim, dltrain_x, dltrain_u, args, n_iters,
                    queue_feats, queue_probs, queue_ptr):
    model.train()
    loss_x_meter, loss_u_meter, loss_contrast_meter = AverageMeter(), AverageMeter(), AverageMeter()
    dl_x, dl_u = iter(dltrain_x), iter(dltrain_u)
    for it in range(n_iters):
        ims_x_weak, lbs_x = next(dl_x)
        (ims_u_weak, ims_u_strong0, ims_u_strong1), _ = next(dl_u)
        lbs_x = lbs_x.cuda()
        bt, btu = ims_x_weak.size(0), ims_u_weak.size(0)

        imgs = torch.cat([ims_x_weak, ims_u_weak, ims_u_strong0, ims_u_strong1], dim=0).cuda()
        logits, features = model(imgs)
        logits_x = logits[:bt]
        logits_u_w, logits_u_s0, logits_u_s1 = torch.split(logits[bt:], btu)
        feats_x = features[:bt]
        feats_u_w, feats_u_s0, feats_u_s1 = torch.split(features[bt:], btu)
        loss_x = criteria_x(logits_x, lbs_x)

        with torch.no_grad():
            logits_u_w = logits_u_w.detach()
            feats_x = feats_x.detach()
            feats_u_w = feats_u_w.detach()
            probs = torch.softmax(logits_u_w, dim=1)
            # distribution alignment over all batches seen so far
            prob_list.append(probs.mean(0))  # expect: TML004
            prob_avg = torch.stack(prob_list, dim=0).mean(0)
            probs = probs / prob_avg
            probs = probs / probs.sum(dim=1, keepdim=True)
            probs_orig = probs.clone()

            if epoch > 0 or it > args.queue_batch:
                A = torch.exp(torch.mm(feats_u_w, queue_feats.t()) / args.temperature)
                A = A / A.sum(1, keepdim=True)
                probs = args.alpha * probs + (1 - args.alpha) * torch.mm(A, queue_probs)
            scores, lbs_u_guess = torch.max(probs, dim=1)
            mask = scores.ge(args.thr).float()

            feats_w = torch.cat([feats_u_w, feats_x], dim=0)
            onehot = torch.zeros(bt, args.n_classes).cuda().scatter(1, lbs_x.view(-1, 1), 1)
            probs_w = torch.cat([probs_orig, onehot], dim=0)
            n = bt + btu
            queue_feats[queue_ptr:queue_ptr + n, :] = feats_w
            queue_probs[queue_ptr:queue_ptr + n, :] = probs_w
            queue_ptr = (queue_ptr + n) % args.queue_size

        sim = torch.exp(torch.mm(feats_u_s0, feats_u_s1.t()) / args.temperature)
        sim_probs = sim / sim.sum(1, keepdim=True)
        Q = torch.mm(probs, probs.t())
        Q.fill_diagonal_(1)
        Q = Q * (Q >= args.contrast_th).float()
        Q = Q / Q.sum(1, keepdim=True)
        loss_contrast = -(torch.log(sim_probs + 1e-7) * Q).sum(1).mean()
        loss_u = (-torch.sum(F.log_softmax(logits_u_s0, dim=1) * probs, dim=1) * mask).mean()
        loss = loss_x + args.lam_u * loss_u + args.lam_c * loss_contrast

        optim.zero_grad()
        loss.backward()
        optim.step()

        loss_x_meter.update(loss_x.item())
        loss_u_meter.update(loss_u.item())
        loss_contrast_meter.update(loss_contrast.item())

    return loss_x_meter.avg, loss_u_meter.avg, loss_contrast_meter.avg, queue_feats, queue_probs, queue_ptr, prob_list
