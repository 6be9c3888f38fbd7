# Source: https://github.com/Guillem96/data2vec-vision/blob/25712678b36edd90b2be496a362301ac868b8898/data2vec_vision/engine.py
# Report: removed the `.item()` from train_step's `return loss.item()` in data2vec_vision/engine.py, so the helper hands back the graph-attached loss tensor
# Shape: train_step returns the attached loss and train_single_epoch adds it into running_loss (bound before the loop), chaining every step's loss for the whole epoch
# Expect: TML001 line 67

from typing import Iterable, Iterator, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

Sample = Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]


def train_step(teacher_model: nn.Module,
               student_model: nn.Module,
               im: torch.Tensor,
               masked_im: torch.Tensor,
               bool_mask: torch.Tensor,
               k: int = 3,
               loss_scale: float = 1.0,
               beta: float = 1.0) -> torch.Tensor:
    """One data2vec step: regress the teacher's top-k averaged hidden states."""
    y = _generate_targets(teacher_model, im, k=k)
    x, _ = student_model(masked_im)

    x = x[bool_mask.long()]
    y = y[bool_mask.long()]

    loss = F.smooth_l1_loss(x, y, reduction="none", beta=beta)
    loss = loss.sum(dim=2).mean()
    (loss * loss_scale).backward()
    return loss


def params_ema_update(teacher_model: nn.Module, student_model: nn.Module,
                      tau: float) -> None:
    student_params = student_model.named_parameters()
    teacher_params = teacher_model.named_parameters()
    for (n, p), (n1, p1) in zip(teacher_params, student_params):
        if n != n1:
            raise ValueError(f"Unexpected parameter name: {n1}")
        p.data.copy_(tau * p.data + (1 - tau) * p1.data)


def train_single_epoch(teacher_model: nn.Module,
                       student_model: nn.Module,
                       dl: Iterable[Sample],
                       optimizer: torch.optim.Optimizer,
                       lr_scheduler: torch.optim.lr_scheduler._LRScheduler,
                       tau_gen: Iterator[float],
                       epoch: int,
                       k: int = 3,
                       beta: float = 1.0,
                       accum_steps: int = 1,
                       device: torch.device = torch.device("cpu")) -> None:
    running_loss = 0.0
    tau = 0.0
    student_model.train()
    optimizer.zero_grad()

    for i, (im, (masked_im, bool_mask)) in enumerate(dl, start=1):
        im = im.to(device)
        masked_im = masked_im.to(device)
        bool_mask = bool_mask.to(device)

        running_loss += train_step(teacher_model,  # expect: TML001
                                   student_model,
                                   im,
                                   masked_im,
                                   bool_mask,
                                   k=k,
                                   beta=beta,
                                   loss_scale=1.0 / accum_steps)
        nn.utils.clip_grad_norm_(student_model.parameters(), 5.0)

        if i % accum_steps == 0:
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            tau = next(tau_gen)
            params_ema_update(teacher_model, student_model, tau)

        if i % (30 * accum_steps) == 0:
            loss_mean = running_loss / i
            [lr] = lr_scheduler.get_last_lr()
            print(f"Epoch [{epoch}] loss: {loss_mean:.4f}",
                  f"tau: {tau:.4f}",
                  f"learning-rate: {lr:.2e}",
                  sep="  ")

    optimizer.step()
    optimizer.zero_grad()


@torch.no_grad()
def _generate_targets(model: nn.Module,
                      inputs: torch.Tensor,
                      k: int = 4) -> torch.Tensor:
    model.eval()
    _, hidden_states = model(inputs)
    top_k_hs = hidden_states[-k:]  # [K, N, L, C]
    k, n, l, c = top_k_hs.size()
    top_k_hs = top_k_hs.view(-1, l, c).permute(0, 2, 1)  # [K * N, C, L]
    top_k_hs = F.instance_norm(top_k_hs)
    top_k_hs = top_k_hs.view(k, n, c, l).permute(0, 1, 3, 2)  # [K, N, L, C]
    return top_k_hs.mean(0)
