# Source: https://github.com/sgl-project/SpecForge/blob/3f0ae3016510049f86faec9b11d993d1da76b10f/scripts/train_eagle3_offline.py
# Report: EAGLE-3 draft-model trainer after the fix of its evaluation-phase OOM (sgl-project/SpecForge#237): the eval forward runs under torch.no_grad()
# Shape: the eval forward is inside with torch.no_grad(); training stores only .item()/.tolist() values in log_dict and the per-position lists, and BF16Optimizer.step() resets the model grads itself (p.grad = None), so nothing must be reported
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
import torch.distributed as dist
import wandb
from tqdm import tqdm


class WandbTracker:
    def __init__(self, project):
        self.run = wandb.init(project=project)

    def log(self, log_dict, step=None):
        self.run.log(dict(log_dict), step=step)


class BF16Optimizer:
    """Keeps fp32 master weights; step() also clears the bf16 model grads."""

    def __init__(self, model, lr, max_grad_norm=0.5):
        self.model_params = [p for p in model.parameters() if p.requires_grad]
        self.fp32_params = [p.detach().clone().to(torch.float32) for p in self.model_params]
        for mp in self.fp32_params:
            mp.requires_grad = True
        self.max_grad_norm = max_grad_norm
        self.optimizer = torch.optim.AdamW(self.fp32_params, lr=lr)

    def step(self):
        with torch.no_grad():
            for p, mp in zip(self.model_params, self.fp32_params):
                mp.grad = p.grad.detach().to(torch.float32) if p.grad is not None else None
        torch.nn.utils.clip_grad_norm_(self.fp32_params, self.max_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad()
        with torch.no_grad():
            for p, mp in zip(self.model_params, self.fp32_params):
                p.data.copy_(mp.data.to(p.dtype))
                p.grad = None

    def get_learning_rate(self):
        return self.optimizer.param_groups[0]["lr"]


def epoch_means(prefix, per_position, log):
    for i, values in enumerate(per_position):
        v = torch.tensor(values).cuda().mean()
        dist.all_reduce(v)
        log[f"{prefix}_{i}"] = (v / dist.get_world_size()).item()


def train(eagle3_model, draft_model, train_loader, eval_loader, optimizer, tracker, args):
    global_step = 0
    log_dict = defaultdict(float)
    for epoch in range(args.num_epochs):
        draft_model.train()
        epoch_acces = [[] for _ in range(eagle3_model.length)]
        epoch_plosses = [[] for _ in range(eagle3_model.length)]
        for batch_index, data in enumerate(tqdm(train_loader), start=1):
            plosses, _, acces = eagle3_model(
                input_ids=data["input_ids"].cuda(),
                attention_mask=data["attention_mask"].cuda(),
                loss_mask=data["loss_mask"].unsqueeze(-1).cuda(),
                hidden_states=data["hidden_state"].cuda(),
                target=data["target"].cuda(),
            )
            acces = torch.stack(acces).cpu().tolist()
            weights = [0.8 ** i for i in range(len(plosses))]
            ploss = sum(w * l for w, l in zip(weights, plosses)) / args.accumulation_steps
            ploss.backward()
            log_dict["train/lr"] = optimizer.get_learning_rate()
            for i in range(len(plosses)):
                log_dict[f"train/ploss_{i}"] += plosses[i].item() / args.accumulation_steps
            for i in range(len(acces)):
                log_dict[f"train/acc_{i}"] += acces[i] / args.accumulation_steps
            if batch_index % args.accumulation_steps == 0:
                optimizer.step()
                global_step += 1
                if global_step % args.log_steps == 0:
                    tracker.log(log_dict, step=global_step)
                log_dict = defaultdict(float)
            epoch_acces = [epoch_acces[i] + [acces[i]] for i in range(len(acces))]
            epoch_plosses = [epoch_plosses[i] + [plosses[i].item()] for i in range(len(plosses))]
        train_log = {}
        epoch_means("train/epoch_acc", epoch_acces, train_log)
        epoch_means("train/epoch_ploss", epoch_plosses, train_log)
        tracker.log(train_log, step=global_step)

        if epoch % args.eval_interval == 0:
            draft_model.eval()
            eval_acces = [[] for _ in range(eagle3_model.length)]
            eval_plosses = [[] for _ in range(eagle3_model.length)]
            for data in tqdm(eval_loader, desc=f"Evaluating Epoch {epoch}"):
                with torch.no_grad():
                    plosses, _, acces = eagle3_model(
                        input_ids=data["input_ids"].cuda(),
                        attention_mask=data["attention_mask"].cuda(),
                        loss_mask=data["loss_mask"].unsqueeze(-1).cuda(),
                        hidden_states=data["hidden_state"].cuda(),
                        target=data["target"].cuda(),
                    )
                acces = torch.stack(acces).cpu().tolist()
                eval_acces = [eval_acces[i] + [acces[i]] for i in range(len(acces))]
                eval_plosses = [eval_plosses[i] + [plosses[i].item()] for i in range(len(plosses))]
            eval_log = {}
            epoch_means("eval/epoch_acc", eval_acces, eval_log)
            epoch_means("eval/epoch_ploss", eval_plosses, eval_log)
            tracker.log(eval_log, step=global_step)
