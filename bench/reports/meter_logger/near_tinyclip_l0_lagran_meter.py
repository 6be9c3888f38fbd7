# Source: https://github.com/microsoft/Cream/blob/55a00083a0572e391191016b6623197a3df9c2f7/TinyCLIP/src/training/train.py
# Report: same TinyCLIP loop; the file already feeds the l0 lambdas to the meters as `.detach().item()` (metrics['vision_lambda1'].update(...lambda_1.detach().item())), here applied to the lagrangian loss and sparsity too
# Shape: identical meters and L0Module; only Python floats (.item() / .detach().item()) reach AverageMeter.update, so _sum never holds a graph
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self._val = 0
        self._sum = 0
        self._count = 0

    def update(self, val, n=1):
        self._val = val
        self._sum += val * n
        self._count += n

    @property
    def avg(self):
        return self._sum / max(1, self._count)


class L0Module(nn.Module):
    def __init__(self, prunable_size, target_sparsity=0.5):
        super().__init__()
        self.z_loga = nn.Parameter(torch.zeros(prunable_size))
        self.lambda_1 = nn.Parameter(torch.tensor(0.0))
        self.lambda_2 = nn.Parameter(torch.tensor(0.0))
        self.target_sparsity = target_sparsity

    def lagrangian_regularization(self, step):
        expected_sparsity = 1 - torch.sigmoid(self.z_loga).mean()
        gap = self.target_sparsity - expected_sparsity
        lagran_loss = self.lambda_1 * gap + self.lambda_2 * gap ** 2
        return lagran_loss, expected_sparsity, self.target_sparsity


def clip_distill_loss(img_feat, txt_feat, t_img_feat, t_txt_feat, logit_scale):
    logits = logit_scale * img_feat @ txt_feat.t()
    t_logits = logit_scale * t_img_feat @ t_txt_feat.t()
    return F.kl_div(F.log_softmax(logits, 1), F.softmax(t_logits, 1), reduction="batchmean")


def train_one_epoch(model, teacher_model, l0_module, dataloader, optimizer, scaler, epoch, num_batches_per_epoch):
    metrics = {k: AverageMeter() for k in ["vision_lagran_loss", "vision_expected_sparsity", "batch_time"]}
    loss_m = AverageMeter()
    model.train()
    for i, (images, texts) in enumerate(dataloader):
        step = num_batches_per_epoch * epoch + i
        images, texts = images.cuda(non_blocking=True), texts.cuda(non_blocking=True)
        optimizer.zero_grad()
        with torch.no_grad():
            t_img = F.normalize(teacher_model.encode_image(images), dim=-1)
            t_txt = F.normalize(teacher_model.encode_text(texts), dim=-1)
        with torch.cuda.amp.autocast():
            img_feat, txt_feat, logit_scale = model(images, texts, normalized=True)
            loss = clip_distill_loss(img_feat, txt_feat, t_img, t_txt, logit_scale)
            lagran_loss, expected_sparsity, target_sparsity = l0_module.lagrangian_regularization(step)
            loss = loss + lagran_loss
            metrics["vision_lagran_loss"].update(lagran_loss.item())
            metrics["vision_expected_sparsity"].update(expected_sparsity.detach().item())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        loss_m.update(loss.item(), images.size(0))
        if i % 10 == 0:
            print(f"Epoch {epoch} [{i}] loss {loss_m.avg:.4f} target {target_sparsity:.2f}")
    return loss_m.avg
