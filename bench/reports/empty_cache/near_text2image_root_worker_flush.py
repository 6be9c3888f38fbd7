# Source: https://github.com/lucidrains/DALLE-pytorch/pull/175
# Report: the text-to-image training script called torch.cuda.empty_cache() on the root worker after every step to dodge an allocation error, which badly slowed training; the PR clears the cache just once, before the loop
# Shape: same loop, but the cache is cleared a single time before the first epoch (the PR's fix); the per-step root-worker block only logs
# Expect: near-miss: must be silent
import argparse

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def is_root_worker():
    return not dist.is_initialized() or dist.get_rank() == 0


def average_all(t):
    if not dist.is_initialized():
        return t.detach()
    t = t.detach().clone()
    dist.all_reduce(t)
    return t / dist.get_world_size()


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--fp16", action="store_true")
    return p.parse_args()


def train(dalle, dataset, tokenizer, logger):
    args = parse_args()
    dl = DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers=4)
    opt = torch.optim.Adam(dalle.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=10)

    torch.cuda.empty_cache()  # once, before training starts
    for epoch in range(args.epochs):
        for i, (text, images) in enumerate(dl):
            if args.fp16:
                images = images.half()
            text, images = text.cuda(), images.cuda()

            loss = dalle(text, images, return_loss=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(dalle.parameters(), 0.5)
            opt.step()
            opt.zero_grad()

            avg_loss = average_all(loss)

            if is_root_worker():
                log = {"epoch": epoch, "iter": i}
                if i % 10 == 0:
                    log["loss"] = avg_loss.item()
                    print(epoch, i, f"loss - {log['loss']:.4f}")
                if i % 100 == 0:
                    sample_text = text[:1]
                    tokens = sample_text.masked_select(sample_text != 0).tolist()
                    with torch.no_grad():
                        image = dalle.generate_images(sample_text, filter_thres=0.9)
                    log["caption"] = tokenizer.decode(tokens)
                    log["image"] = image[0].float().cpu()
                    torch.save(dalle.state_dict(), "./dalle.pt")
                logger.log(log)

        scheduler.step(avg_loss.item())
    if is_root_worker():
        torch.save(dalle.state_dict(), "./dalle-final.pt")
