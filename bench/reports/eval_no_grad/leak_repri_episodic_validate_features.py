# Source: https://github.com/mboudiaf/RePRI-for-Few-Shot-Segmentation/issues/12
# Report: default config trains fine but the test phase runs out of GPU memory; the author confirms the validation functions had lost their no_grad and adds it back
# Shape: episodic_validate() calls model.eval() then extracts support/query features for every task with autograd on (only .detach()ed when copied into the preallocated buffers), and standard_validate() runs the segmenter over the val loader with no grad-disabled context
# Expect: TML003 lines 56, 57, 91
import torch
import torch.nn.functional as F
from collections import defaultdict


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def intersection_union(pred, target, n_cls, ignore=255):
    pred = pred[target != ignore]
    target = target[target != ignore]
    inter = torch.histc(pred[pred == target].float(), bins=n_cls, min=0, max=n_cls - 1)
    area_p = torch.histc(pred.float(), bins=n_cls, min=0, max=n_cls - 1)
    area_t = torch.histc(target.float(), bins=n_cls, min=0, max=n_cls - 1)
    return inter, area_p + area_t - inter


def episodic_validate(cfg, val_loader, model, make_classifier, device):
    model.eval()
    n_episodes = cfg.test_num // cfg.tasks_per_episode
    c, h, w = model.module.bottleneck_dim, *model.module.feature_res
    run_ious = []
    for run in range(cfg.n_runs):
        loss_meter = AverageMeter()
        inter_sum = defaultdict(float)
        union_sum = defaultdict(float)
        loader_it = iter(val_loader)
        for ep in range(n_episodes):
            feats_s = torch.zeros(cfg.tasks_per_episode, cfg.shot, c, h, w, device=device)
            feats_q = torch.zeros(cfg.tasks_per_episode, 1, c, h, w, device=device)
            gt_s = torch.full((cfg.tasks_per_episode, cfg.shot, cfg.size, cfg.size), 255,
                              dtype=torch.long, device=device)
            gt_q = torch.full((cfg.tasks_per_episode, 1, cfg.size, cfg.size), 255,
                              dtype=torch.long, device=device)
            task_classes = []
            for t in range(cfg.tasks_per_episode):
                try:
                    q_img, q_lbl, s_imgs, s_lbl, sub_cls = next(loader_it)
                except StopIteration:
                    loader_it = iter(val_loader)
                    q_img, q_lbl, s_imgs, s_lbl, sub_cls = next(loader_it)
                q_img, q_lbl = q_img.to(device), q_lbl.to(device)
                s_imgs, s_lbl = s_imgs.to(device), s_lbl.to(device)

                f_s = model.module.extract_features(s_imgs.squeeze(0))  # expect: TML003
                f_q = model.module.extract_features(q_img)  # expect: TML003
                k = f_s.size(0)
                feats_s[t, :k] = f_s.detach()
                feats_q[t] = f_q.detach()
                gt_s[t, :k] = s_lbl
                gt_q[t, 0] = q_lbl
                task_classes.append([cl.item() for cl in sub_cls])

            feats_s = F.normalize(feats_s, dim=2)
            feats_q = F.normalize(feats_q, dim=2)
            clf = make_classifier(cfg)
            clf.init_prototypes(feats_s, feats_q, gt_s, gt_q, task_classes)
            clf.fit_transductive(feats_s, feats_q, gt_s, gt_q, task_classes)
            probas = clf.get_probas(clf.get_logits(feats_q)).detach()
            loss_meter.update(clf.get_ce(probas, gt_q).item())
            preds = probas.argmax(2)
            for i, classes in enumerate(task_classes):
                inter, union = intersection_union(preds[i, 0], gt_q[i, 0], 2)
                for cl in classes:
                    inter_sum[cl] += inter[1].item()
                    union_sum[cl] += union[1].item()
        ious = [inter_sum[cl] / (union_sum[cl] + 1e-10) for cl in union_sum]
        run_ious.append(sum(ious) / max(len(ious), 1))
    return sum(run_ious) / len(run_ious)


def standard_validate(cfg, val_loader, model, device):
    model.eval()
    criterion = torch.nn.CrossEntropyLoss(ignore_index=255)
    total_loss = 0.0
    inters = torch.zeros(cfg.num_classes, device=device)
    unions = torch.zeros(cfg.num_classes, device=device)
    for images, gt in val_loader:
        images, gt = images.to(device), gt.to(device)
        logits = model(images).detach()  # expect: TML003
        total_loss += criterion(logits, gt).item()
        inter, union = intersection_union(logits.argmax(1), gt, cfg.num_classes)
        inters += inter
        unions += union
    miou = (inters / (unions + 1e-10)).mean()
    return miou.item(), total_loss / len(val_loader)
