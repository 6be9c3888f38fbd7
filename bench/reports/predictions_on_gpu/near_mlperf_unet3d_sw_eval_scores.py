# Source: https://github.com/mlcommons/training/blob/5fd31d14852afe4a73d98f64ad6c8a11a2fdb5eb/image_segmentation/pytorch/runtime/inference.py
# Report: the MLPerf UNet3D evaluate() with each case's scores copied to the host and the loss taken as a float before they are kept; the reduced tensors are moved back to the device only once, after the loop, for the NCCL all-reduce
# Shape: same no_grad sliding-window loop and same lists that outlive it, but what is appended is .cpu() / .item(), so device memory no longer grows with the number of validation cases
# Expect: near-miss: must be silent
import torch
from torch.cuda.amp import autocast
from tqdm import tqdm

from runtime.distributed_utils import get_rank, get_world_size, reduce_tensor
from runtime.sliding_window import sliding_window_inference


def evaluate(flags, model, loader, loss_fn, score_fn, device, epoch=0, is_distributed=False):
    rank = get_rank()
    world_size = get_world_size()
    model.to(device)
    if flags.load_ckpt_path:
        checkpoint = torch.load(flags.load_ckpt_path, map_location={"cuda:0": f"cuda:{rank}"})
        epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["best_model_state_dict"])
        if is_distributed:
            model = torch.nn.parallel.DistributedDataParallel(
                model, device_ids=[flags.local_rank], output_device=flags.local_rank)

    model.eval()
    eval_loss = []
    scores = []
    with torch.no_grad():
        for i, batch in enumerate(tqdm(loader, disable=(rank != 0) or not flags.verbose)):
            image, label = batch
            image, label = image.to(device), label.to(device)
            if image.numel() == 0:
                continue
            with autocast(enabled=flags.amp):
                output, label = sliding_window_inference(
                    inputs=image, labels=label, roi_shape=flags.val_input_shape, model=model,
                    overlap=flags.overlap, mode="gaussian", padding_val=-2.2)
                eval_loss_value = loss_fn(output, label)
                case_scores = score_fn(output, label)
            scores.append(case_scores.cpu())
            eval_loss.append(eval_loss_value.item())
            del output
            del label

    scores = reduce_tensor(torch.mean(torch.stack(scores, dim=0), dim=0).to(device), world_size)
    eval_loss = reduce_tensor(torch.tensor(eval_loss, device=device).mean(), world_size)
    scores, eval_loss = scores.cpu().numpy(), float(eval_loss.cpu().numpy())
    return {
        "epoch": epoch,
        "L1 dice": scores[-2],
        "L2 dice": scores[-1],
        "mean_dice": (scores[-1] + scores[-2]) / 2,
        "eval_loss": eval_loss,
    }


def train_and_evaluate(flags, model, train_loader, val_loader, loss_fn, score_fn, optimizer, device):
    for epoch in range(1, flags.epochs + 1):
        model.train()
        for image, label in train_loader:
            image, label = image.to(device), label.to(device)
            optimizer.zero_grad()
            with autocast(enabled=flags.amp):
                loss_value = loss_fn(model(image), label)
            loss_value.backward()
            optimizer.step()
        if epoch % flags.evaluate_every == 0:
            metrics = evaluate(flags, model, val_loader, loss_fn, score_fn, device, epoch)
            print(f"epoch {epoch}: mean dice {metrics['mean_dice']:.4f} loss {metrics['eval_loss']:.4f}")
