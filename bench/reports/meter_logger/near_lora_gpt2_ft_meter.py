# Source: https://github.com/microsoft/LoRA/blob/main/examples/NLG/src/gpt2_ft.py
# Report: correct code: the GPT-2 LoRA fine-tuning loop feeds an AverageMeter with _lm_loss.item(); backward/step/zero_grad live in a helper that only steps on accumulation boundaries
# Shape: the meter (outlives the loop, update() does self.sum += val * n) only ever receives Python floats; evaluate() runs under torch.no_grad() and also passes loss.item()
# Expect: near-miss: must be silent
import math

import torch


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def optimizer_step(loss, optimizer, model, schedule, clip, is_update=True):
    loss.backward()
    if is_update:
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        optimizer.zero_grad()
    if schedule is not None:
        schedule.step()


def evaluate(model, valid_loader, device):
    model.eval()
    meter = AverageMeter()
    with torch.no_grad():
        for idx, data in enumerate(valid_loader):
            inp = data["input"].to(device)
            tgt = data["target"].to(device)
            msk = data["mask"].to(device)
            _, loss = model(inp, lm_labels=tgt, lm_mask=msk)
            loss = loss.mean()
            meter.update(loss.item())
            if idx % 100 == 0:
                print("eval samples:", idx, "loss:", loss.float())
    return meter.avg, math.exp(meter.avg)


def train_validate(model, optimizer, scheduler, train_loader, valid_loader, args, train_step=0):
    model.train()
    avg_lm_loss = AverageMeter()
    best_val_ppl = None
    for idx, data in enumerate(train_loader):
        inp = data["input"].to(args.device)
        tgt = data["target"].to(args.device)
        msk = data["mask"].to(args.device)

        _, lm_loss = model(inp, lm_labels=tgt, lm_mask=msk, label_smooth=args.label_smooth)
        lm_loss = lm_loss.mean()

        train_step += 1
        is_update = train_step % args.grad_acc == 0
        avg_lm_loss.update(lm_loss.item())
        optimizer_step(lm_loss / args.grad_acc, optimizer, model, scheduler, args.clip, is_update=is_update)

        if train_step % args.log_interval == 0:
            print(f"step {train_step} | loss {avg_lm_loss.val:5.2f} | avg {avg_lm_loss.avg:5.2f} "
                  f"| ppl {math.exp(avg_lm_loss.avg):5.2f}")
            avg_lm_loss.reset()

        if train_step % args.eval_interval == 0:
            valid_loss, valid_ppl = evaluate(model, valid_loader, args.device)
            if best_val_ppl is None or valid_ppl < best_val_ppl:
                best_val_ppl = valid_ppl
            print(f"eval at {train_step}: loss {valid_loss:5.2f} ppl {valid_ppl:5.2f} best {best_val_ppl:5.2f}")
            model.train()

        if train_step == args.max_step:
            break
    return train_step
