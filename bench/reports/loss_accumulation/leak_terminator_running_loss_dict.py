# Source: https://github.com/alexjli/terminator_public/blob/1775aa81a663d1801598b79012d2b98d951355d5/terminator/utils/model/loop_utils.py
# Report: audited idiom in TERMinator's run_epoch: each batch's nested loss dict is passed through _ld_item_values (0-dim tensors -> .item()) before _sum_loss_dicts folds it into running_loss_dict
# Shape: the _ld_item_values step is dropped: the graph-attached loss tensors travel inside a nested dict returned by loss_fn and are folded by a helper into running_loss_dict, which is rebound from its own previous value every batch and outlives the loop
# Expect: TML001 line 65
import torch
from tqdm import tqdm


def _to_dev(data_dict, dev):
    for key, value in data_dict.items():
        if isinstance(value, torch.Tensor):
            data_dict[key] = value.to(dev)


def _compute_loss(loss_dict):
    loss = 0
    for subloss_dict in loss_dict.values():
        loss += subloss_dict["loss"] * subloss_dict["scaling_factor"]
    return loss


def _sum_loss_dicts(total_ld, batch_ld):
    def _weighted_loss_sum(ld1, ld2):
        c1, c2 = ld1["count"], ld2["count"]
        return (ld1["loss"] * c1 + ld2["loss"] * c2) / (c1 + c2)

    combined_ld = total_ld.copy()
    for loss_fn_name, batch_subld in batch_ld.items():
        if loss_fn_name not in combined_ld:
            combined_ld[loss_fn_name] = batch_subld
        else:
            combined_subld = combined_ld[loss_fn_name]
            combined_subld["loss"] = _weighted_loss_sum(combined_subld, batch_subld)
            combined_subld["count"] += batch_subld["count"]
    return combined_ld


def run_epoch(model, dataloader, loss_fn, optimizer=None, scheduler=None, grad=False, dev="cuda:0"):
    if grad:
        assert optimizer is not None, "require an optimizer if using grads"

    running_loss_dict = {}
    if grad:
        model.train()
        torch.set_grad_enabled(True)
    else:
        model.eval()
        torch.set_grad_enabled(False)

    progress = tqdm(total=len(dataloader))
    for data in dataloader:
        data["scatter_idx"] = torch.arange(len(data["seq_lens"]))
        _to_dev(data, dev)
        max_seq_len = max(data["seq_lens"].tolist())

        etab, E_idx = model(data, max_seq_len)
        batch_loss_dict = loss_fn(etab, E_idx, data)
        loss = _compute_loss(batch_loss_dict)

        if grad:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        running_loss_dict = _sum_loss_dicts(running_loss_dict, batch_loss_dict)  # expect: TML001

        progress.update(1)
        progress.set_description_str(f"avg loss {float(_compute_loss(running_loss_dict)):.2f}")

    progress.close()
    epoch_loss = _compute_loss(running_loss_dict)
    if scheduler is not None:
        scheduler.step(epoch_loss)
    torch.set_grad_enabled(True)
    return epoch_loss, running_loss_dict
