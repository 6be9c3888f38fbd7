# Source: https://github.com/sunggo/EBFT/blob/693186110ac095723ee56a606f82c671d96a77bf/lib/tensor_dataloader.py
# Report: audit of EBFT's block-wise fine-tuning data path: TensorData.__getitem__ moves each calibration input/target pair to the device itself, and TensorDataLoader forwards a num_workers argument to the DataLoader; it is only safe because finetune.py passes num_workers=0 — this variant raises the worker count
# Shape: TensorData(inps, outs, device) returns x.to(self.device), y.to(self.device) per index; a TensorDataLoader wrapper builds the DataLoader; train() runs one decoder layer with autocast + GradScaler against cached teacher outputs; the loaders get args.num_workers (set above 0 to feed the GPU faster)
# Expect: TML010 line 21
import math

import torch
import torch.nn as nn
from torch.cuda.amp import GradScaler, autocast
from transformers.optimization import get_linear_schedule_with_warmup


class TensorData(torch.utils.data.Dataset):
    def __init__(self, data, targets, device):
        self.data = data
        self.targets = targets
        self.device = device

    def __getitem__(self, index):
        x, y = self.data[index], self.targets[index]
        return x.to(self.device), y.to(self.device)  # expect: TML010

    def __len__(self):
        return len(self.targets)


class TensorDataLoader:
    def __init__(self, dataset, batch_size, shuffle, num_workers):
        self.dataset, self.batch_size = dataset, batch_size
        self.shuffle, self.num_workers = shuffle, num_workers

    def get_loader(self):
        return torch.utils.data.DataLoader(self.dataset, batch_size=self.batch_size, shuffle=self.shuffle,
                                           num_workers=self.num_workers, pin_memory=False)


def val(layer, inps, outs, args, device, attention_mask, position_ids):
    loader = TensorDataLoader(TensorData(inps, outs, device), args.infer_batch_size, False, args.num_workers).get_loader()
    criterion = nn.MSELoss()
    total = 0.0
    layer.eval()
    with torch.no_grad():
        for x, y in loader:
            with autocast():
                pred = layer(x, attention_mask=attention_mask.expand(len(x), -1, -1, -1), position_ids=position_ids)[0]
                total += criterion(pred, y).item() * len(x)
    return total / len(inps)


def finetune_block(layer, inps, outs, args, attention_mask, position_ids, device=torch.device("cuda:0")):
    init_loss = val(layer, inps, outs, args, device, attention_mask, position_ids)
    steps = math.ceil(args.epochs * max(len(inps) // args.batch_size, 1))
    params = [p for n, p in layer.named_parameters() if "mask" not in n]
    optimizer = torch.optim.AdamW(params, lr=args.learning_rate, weight_decay=args.weight_decay)
    scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=args.warmup_steps, num_training_steps=steps)
    scaler, criterion, losses = GradScaler(), nn.MSELoss(), []
    loader = TensorDataLoader(TensorData(inps, outs, device), args.batch_size, True, args.num_workers).get_loader()
    for epoch in range(args.epochs):
        layer.train()
        for x, y in loader:
            with autocast():
                pred = layer(x, attention_mask=attention_mask.expand(len(x), -1, -1, -1), position_ids=position_ids)[0]
                loss = criterion(pred, y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(layer.parameters(), args.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(loss.detach().cpu().item())
    final_loss = val(layer, inps, outs, args, device, attention_mask, position_ids)
    print(f"block loss {init_loss:.5f} -> {final_loss:.5f} over {len(losses)} steps")
    return init_loss, final_loss
