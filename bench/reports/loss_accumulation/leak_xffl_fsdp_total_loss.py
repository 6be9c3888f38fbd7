# Source: https://github.com/alpha-unito/xffl/blob/00757f665b88c9e3854617d61f78709a9d00a55c/xffl/learning/processing.py
# Report: xFFL's generic FSDP training cycle (torchrun, one rank per GPU) sums each step's LM loss into total_loss, all-reduces it across ranks after the epoch and turns it into a train perplexity; one edit away from the repository: the .detach() is dropped from the epoch sum
# Shape: loss.float() keeps the graph, so total_loss += ... chains every step's FSDP loss graph for the whole epoch (until the all_reduce after the loop); the per-step lists still get .item()/float()
# Expect: TML001 line 43
import time
from logging import getLogger

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import FullStateDictConfig, StateDictType
from tqdm import tqdm

logger = getLogger(__name__)


def save_fsdp_model(model, path, rank, epoch):
    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, cfg):
        state = model.state_dict()
    if rank == 0:
        torch.save(state, f"{path}/model_epoch{epoch}.pt")
    dist.barrier()


def fsdp_training(model, optimizer, train_dataloader, eval_dataloader, rank, local_rank,
                  world_size, epochs=1, save_path=None, lr_scheduler=None, wandb_run=None):
    train_loss, train_prep = [], []
    train_step_loss, train_step_perplexity = [], []
    epoch_times = []
    best_val_loss = float("inf")

    for epoch in range(epochs):
        start = time.perf_counter()
        model.train()
        total_loss = 0.0
        pbar = tqdm(total=len(train_dataloader), desc=f"Training Epoch: {epoch + 1}", dynamic_ncols=True)
        for step, batch in enumerate(train_dataloader):
            for key in batch.keys():
                batch[key] = batch[key].to(device=local_rank, non_blocking=True)
            loss = model(**batch).loss

            total_loss += loss.float()  # expect: TML001
            train_step_loss.append(loss.detach().float().item())
            train_step_perplexity.append(float(torch.exp(loss.detach().float())))

            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            pbar.update(1)
            if wandb_run and rank == 0:
                wandb_run.log({"train/epoch": epoch + 1, "train/loss": loss.detach().float()})
        pbar.close()
        epoch_times.append(time.perf_counter() - start)

        if torch.cuda.device_count():
            dist.all_reduce(total_loss, op=dist.ReduceOp.SUM)
        train_epoch_loss = (total_loss / len(train_dataloader)) / world_size
        train_perplexity = torch.exp(train_epoch_loss)
        train_prep.append(float(train_perplexity))
        train_loss.append(float(train_epoch_loss))

        if lr_scheduler:
            lr_scheduler.step()

        eval_ppl, eval_epoch_loss = fsdp_evaluation(model, eval_dataloader, local_rank, world_size)
        if save_path is not None:
            save_fsdp_model(model, save_path, rank, epoch)
        if eval_epoch_loss < best_val_loss:
            best_val_loss = eval_epoch_loss
        if rank == 0:
            logger.info(f"Epoch {epoch + 1}: train_perplexity={train_perplexity:.4f}, "
                        f"train_epoch_loss={train_epoch_loss:.4f}, eval_ppl={eval_ppl:.4f}")

    return {"avg_train_loss": sum(train_loss) / len(train_loss),
            "avg_train_prep": sum(train_prep) / len(train_prep),
            "avg_epoch_time": sum(epoch_times) / len(epoch_times)}


def fsdp_evaluation(model, eval_dataloader, local_rank, world_size):
    model.eval()
    eval_loss = 0.0
    for batch in tqdm(eval_dataloader, desc="evaluating Epoch", dynamic_ncols=True):
        for key in batch.keys():
            batch[key] = batch[key].to(device=f"cuda:{local_rank}", non_blocking=True)
        with torch.no_grad():
            outputs = model(**batch)
            loss = outputs.loss
            eval_loss += loss.detach().float()
    if torch.cuda.device_count() > 1:
        dist.all_reduce(eval_loss, op=dist.ReduceOp.SUM)
    eval_epoch_loss = eval_loss / len(eval_dataloader) / world_size
    return torch.exp(eval_epoch_loss), eval_epoch_loss
