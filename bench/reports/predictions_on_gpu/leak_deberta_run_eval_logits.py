# Source: https://github.com/microsoft/DeBERTa/blob/5406a88b51df93929648720cea1b17ad0d7b5b87/DeBERTa/apps/run.py
# Report: audited: run_eval (GLUE/NER fine-tuning evaluation) appends every batch's logits and label ids to Python lists while they are still CUDA tensors; they are only gathered and moved to the CPU after the whole dev set has been run
# Shape: same run_eval layout (eval_item loop, batch_to, forward under torch.no_grad(), merge_distributed, calc_metrics); the per-batch device tensors are kept in predicts/labels lists that outlive the batch loop
# Expect: TML004 line 44; TML004 line 45
import os
from collections import OrderedDict

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, SequentialSampler


def batch_to(batch, device):
    return {k: v.to(device) for k, v in batch.items()}


def merge_distributed(data_list, max_len=None):
    merged = torch.cat(data_list, dim=0)
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        gathered = [torch.zeros_like(merged) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, merged)
        merged = torch.cat(gathered, dim=0)
    return merged[:max_len] if max_len is not None else merged


def run_eval(args, model, device, eval_data, prefix=None):
    eval_results = OrderedDict()
    for eval_item in eval_data:
        name = eval_item.name
        eval_dataloader = DataLoader(eval_item.data, batch_size=args.eval_batch_size,
                                     sampler=SequentialSampler(eval_item.data),
                                     num_workers=args.workers)
        model.eval()
        eval_loss, nb_eval_steps = 0, 0
        predicts = []
        labels = []
        for batch in eval_dataloader:
            batch = batch_to(batch, device)
            with torch.no_grad():
                output = model(**batch)
            logits = output["logits"].detach()
            label_ids = batch["labels"].to(device)
            predicts.append(logits)  # expect: TML004
            labels.append(label_ids)  # expect: TML004
            eval_loss += output["loss"].detach().mean().item()
            nb_eval_steps += 1

        eval_loss = eval_loss / nb_eval_steps
        predicts = merge_distributed(predicts, len(eval_item.data))
        labels = merge_distributed(labels, len(eval_item.data))
        preds_np = predicts.cpu().numpy()
        labels_np = labels.cpu().numpy()
        metrics = eval_item.metrics_fn(preds_np, labels_np)
        eval_results[name] = (metrics, preds_np, labels_np)
        if args.rank <= 0:
            out_file = os.path.join(args.output_dir, f"eval_logits_{name}_{prefix}.txt")
            np.savetxt(out_file, preds_np, delimiter="\t")
    return eval_results
